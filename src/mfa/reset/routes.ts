/**
 * MFA reset routes (issue 4 section 5): the user asks, administrators list and decide.
 * `POST /api/v1/auth/reset/mfa` is a transport pre-auth route, so its optional bearer token is
 * authenticated in `preHandler`, after the body is decrypted; the admin routes take the bearer
 * in `onRequest` with their permission.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { bodyField } from '../../policy/route-limits.js';
import { signedInAccount, type Guard } from '../../sessions/guard.js';
import type { App } from '../../platform/http/app.js';
import { errors, NO_NUL } from '../../platform/http/schemas.js';
import { mfaContext, type ChallengeService } from '../challenge.js';
import type { MfaResetService, ResetActor } from './service.js';
import { TOKEN_CHECK_ERRORS } from '../../signin/error-sets.js';
import { MfaResetErrors } from './errors.js';
import { SignInErrors } from '../../signin/errors.js';

const ISO = { format: 'date-time' } as const;
const Status = Type.Union(
  [Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('expired'), Type.Literal('completed')],
  { examples: ['pending'] },
);
const RequestId = Type.String({ format: 'uuid', description: 'The `request_id` of a reset request.', examples: ['5b0e6f2a-8c1d-4e3f-9a7b-2c4d6e8f0a1b'] });
const FreeText = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 500, pattern: NO_NUL, description, examples: [example] });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const ResetRequest = Type.Object({
  request_id: RequestId,
  user: Type.Object({
    id: Type.String({ format: 'uuid', description: 'The user\'s uuid: the one public id of a user.', examples: ['3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77'] }),
    uuid: Type.String({ format: 'uuid', deprecated: true, description: 'Deprecated: the same value as `id`; read `id`.', examples: ['3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77'] }),
    username: Type.String({ examples: ['amina.otieno'] }),
  }),
  status: Status,
  reason: Type.String({ examples: ['I lost the phone that holds my authenticator app.'] }),
  proof: Type.String({ description: 'How the user proved who they are: `password_and_factor` (a session that passed a second factor) or `password_and_security_questions`.', examples: ['password_and_security_questions'] }),
  requested_at: Type.String(ISO),
  expires_at: Type.String({ ...ISO, description: 'A pending request not decided by then becomes `expired`.' }),
  decided_at: Nullable(Type.String(ISO)),
  decided_by: Nullable(Type.String({ format: 'uuid', description: 'uuid of the administrator who approved or rejected.' })),
  decision_note: Nullable(Type.String({ description: 'The approval note or the rejection reason.' })),
  completed_at: Nullable(Type.String({ ...ISO, description: 'When the user enrolled a factor again after approval.' })),
});

const STATES_TEXT = 'States: `pending` (asked), `approved` (factors and sessions removed; the user signs in with the password and enrols again), `rejected`, `expired` (not decided within `MFA_RESET_EXPIRY_HOURS`, default 72), `completed` (a factor was enrolled again after approval). One open (`pending` or `approved`) request per user.';
const DECISION_ERRORS = [
  '- `403 PERMISSION_DENIED`: the caller lacks the permission.',
  '- `403 MFA_RESET_SELF_APPROVAL`: administrators cannot decide their own request (four eyes).',
  '- `404 MFA_RESET_NOT_FOUND`: no request with this id.',
  '- `409 MFA_RESET_NOT_PENDING`: the request is no longer pending (decided, or expired); `details.status` is its state.',
  '- `422 VALIDATION_ERROR`: e.g. `request_id` is not a uuid.',
  '- `401 TOKEN_*` / `SESSION_*`: no valid bearer token.',
];

export interface MfaResetRouteDeps {
  challenges: ChallengeService;
  guard: Guard;
  mfaReset: MfaResetService;
}

export function mfaResetRoutes(s: MfaResetRouteDeps): FastifyPluginAsync {
  const actorOf = async (request: FastifyRequest): Promise<ResetActor> => {
    const user = await s.challenges.signedInUser(request);
    return { uuid: user.uuid, username: user.username };
  };

  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['MFA and 2FA'];
    const security = [{ bearer: [] }];

    app.post('/api/v1/auth/reset/mfa', {
      schema: {
        tags, security, summary: 'Ask for a reset of your second factors',
        description: [
          'For a user who lost their second factor. The request needs proof of identity, one of:',
          '',
          '- a bearer access token of a session that passed a second factor (`mfa_completed`): the password plus a factor the user still holds;',
          '- `proof_token`: the single-use token `POST /api/v1/auth/security-questions/verify` issues after the password (the 2FA step) and the security questions. When `proof_token` is given, a bearer token is not read.',
          '',
          `It opens a \`pending\` request that an administrator approves or rejects. The user is told by email (when email delivery is configured and the account has an address): a security notice, so someone who did not ask can alert the bank. ${STATES_TEXT}`,
          '',
          '- `403 MFA_RESET_PROOF_REQUIRED`: the bearer session did not pass a second factor.',
          '- `401 TOKEN_MISSING`: neither a bearer token nor `proof_token`.',
          '- `401 TOKEN_INVALID`: `proof_token` is not an MFA reset proof (e.g. an access or 2FA token); `401 TOKEN_EXPIRED` after 10 minutes; `401 TOKEN_REVOKED`: it was already used (single use).',
          '- `401 SESSION_*` / `FINGERPRINT_REQUIRED` / `FINGERPRINT_MISMATCH`: the bearer token or its session is not valid.',
          '- `403 ACCOUNT_DISABLED`: the account is disabled.',
          '- `409 MFA_RESET_ALREADY_OPEN`: the user already has a pending or approved request.',
          '- `422 VALIDATION_ERROR`: `reason` missing, empty or longer than 500 characters.',
        ].join('\n'),
        body: Type.Object({
          reason: FreeText('Why the reset is needed, in the user\'s words (1 to 500 characters).', 'I lost the phone that holds my authenticator app.'),
          proof_token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'MFA reset proof token from the security questions (single use, 10 minutes).', examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ...'] })),
        }, { additionalProperties: false }),
        response: {
          201: Type.Object({
            request_id: RequestId,
            status: Type.Literal('pending'),
            requested_at: Type.String(ISO),
            expires_at: Type.String({ ...ISO, description: 'An administrator must decide before then.' }),
          }),
          ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, MfaResetErrors.MFA_RESET_PROOF_REQUIRED, MfaResetErrors.MFA_RESET_ALREADY_OPEN),
        },
      },
      // A pre-auth route (transport encryption): the bearer is read after the body is decrypted.
      preHandler: async (request) => {
        if (request.body.proof_token === undefined) await s.guard.authenticate(request);
      },
      config: { rateLimit: { group: 'recovery', account: (request) => signedInAccount(request) ?? bodyField('proof_token')(request) } },
    }, async (request, reply) => {
      const token = request.body.proof_token;
      const proof = token === undefined ? { kind: 'session' as const, auth: request.auth!, user: await s.challenges.signedInUser(request) } : { kind: 'token' as const, token };
      const opened = await s.mfaReset.request(proof, request.body.reason, mfaContext(request));
      reply.status(201);
      return opened;
    });

    app.post('/api/v1/auth/reset/mfa/admin/pending', {
      schema: {
        tags, security, summary: 'List MFA reset requests (permission approve_mfa_reset)',
        description: [
          `The queue of reset requests in one state (default \`pending\`, oldest first; other states newest first). It needs \`approve_mfa_reset\`, because those who decide are those who see the queue. Pending requests past \`expires_at\` are marked \`expired\` (audited, user notified) before the list is read. ${STATES_TEXT}`,
          '',
          '- `403 PERMISSION_DENIED`: the caller lacks `approve_mfa_reset`.',
          '- `422 VALIDATION_ERROR`: unknown status, or `limit` outside 1..100.',
          '- `401 TOKEN_*` / `SESSION_*`: no valid bearer token.',
        ].join('\n'),
        body: Type.Object({
          status: Type.Optional(Status),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, examples: [50] })),
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, examples: [0] })),
        }, { additionalProperties: false, description: 'Optional: an empty request body means `{}`.' }),
        response: { 200: Type.Object({ requests: Type.Array(ResetRequest), total: Type.Integer({ examples: [1] }) }) },
      },
      preValidation: async (request) => {
        request.body ??= {}; // no body at all lists the pending queue
      },
      onRequest: s.guard.requirePermission('approve_mfa_reset'),
    }, async (request) => {
      const b = request.body;
      return s.mfaReset.list({ status: b.status ?? 'pending', limit: b.limit ?? 50, offset: b.offset ?? 0 });
    });

    app.post('/api/v1/auth/reset/mfa/admin/approve', {
      schema: {
        tags, security, summary: 'Approve an MFA reset request (permission approve_mfa_reset)',
        description: [
          'Approves a pending request. In one transaction: every second factor (TOTP, email, SMS and push codes, the push code device unbound) and backup code of the user is removed, every session of the user ends, the request becomes `approved`. The user is told by email and signs in with the password only (or gets `403 MFA_SETUP_INCOMPLETE` when their role requires MFA), then enrols again, which completes the request. Two parallel approvals: exactly one succeeds.',
          '',
          ...DECISION_ERRORS,
        ].join('\n'),
        body: Type.Object({
          request_id: RequestId,
          note: Type.Optional(FreeText('Why it was approved: audited, not mailed; the person can read it in their recovery history and data export.', 'Identity confirmed in branch with national ID.')),
        }, { additionalProperties: false }),
        response: { 200: ResetRequest, ...errors(MfaResetErrors.MFA_RESET_SELF_APPROVAL, MfaResetErrors.MFA_RESET_NOT_FOUND, MfaResetErrors.MFA_RESET_NOT_PENDING) },
      },
      onRequest: s.guard.requirePermission('approve_mfa_reset'),
    }, async (request) => s.mfaReset.approve(request.body.request_id, await actorOf(request), request.body.note ?? null, mfaContext(request)));

    app.post('/api/v1/auth/reset/mfa/admin/reject', {
      schema: {
        tags, security, summary: 'Reject an MFA reset request (permission reject_mfa_reset)',
        description: [
          'Rejects a pending request; the user\'s factors stay as they are. The user is told by email that the request was not approved (the reason is audited, not mailed; the person can read it in their recovery history and data export).',
          '',
          ...DECISION_ERRORS,
        ].join('\n'),
        body: Type.Object({
          request_id: RequestId,
          reason: FreeText('Why it was rejected (1 to 500 characters).', 'Could not confirm the caller\'s identity.'),
        }, { additionalProperties: false }),
        response: { 200: ResetRequest, ...errors(MfaResetErrors.MFA_RESET_SELF_APPROVAL, MfaResetErrors.MFA_RESET_NOT_FOUND, MfaResetErrors.MFA_RESET_NOT_PENDING) },
      },
      onRequest: s.guard.requirePermission('reject_mfa_reset'),
    }, async (request) => s.mfaReset.reject(request.body.request_id, await actorOf(request), request.body.reason, mfaContext(request)));
  };
}
