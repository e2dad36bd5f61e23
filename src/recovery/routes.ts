/**
 * Account recovery routes: initiate, verify-identity, status, cancel (by the handle, or by the
 * owner's cancel token, also through the "this was not me" page `/recovery/cancel`) and
 * access-policy; the operators' branch approvals are in admin-routes.ts. They are called before
 * any sign-in (transport encryption's pre-auth routes), and rate limited in the `recovery` group:
 * per client network, and per identifier (initiate) or per `recovery_id` (verify-identity), so
 * wrong answers count toward the group's limit as well as toward the proof's attempts. A
 * signed-in person's own recoveries are own-routes.ts.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { mfaContext } from '../mfa/challenge.js';
import { OtpErrors } from '../mfa/otp/errors.js';
import { SecurityQuestionErrors } from '../mfa/security-questions/errors.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import { bodyField } from '../policy/route-limits.js';
import { fingerprintOf, signedInUser } from '../sessions/guard.js';
import { TOKEN_CHECK_ERRORS } from '../signin/error-sets.js';
import type { UserRow } from '../users/store.js';
import { registerApprovalRoutes, type RecoveryAdminRouteDeps } from './admin-routes.js';
import { registerOwnRoutes } from './own-routes.js';
import { RecoveryErrors as E } from './errors.js';
import { CANCEL_PAGE } from './cancel-page.js';
import { sendOneClickPage } from '../platform/http/one-click-page.js';
import { AccessPolicyBody, RebindAnswerSchema, CancelAnswerSchema, CancelBody, HandleBody, InitiateBody, TokenBody, RecoveryStarted, RecoveryStatus, RecoveryStep, VerifyBody } from './schemas.js';
import type { RecoveryService } from './service.js';

export interface RecoveryRouteDeps extends RecoveryAdminRouteDeps {
  recovery: RecoveryService;
}

/** A cancel token is read from the body only: anything in the query string is refused (it would sit in logs and histories). */
function refuseQuery(request: FastifyRequest): void {
  if (request.url.includes('?')) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'cancel_token', message: 'is read from the body only, never from the address' }] });
}

/** An operator starting a recovery for a customer at a desk: a bearer holding `recovery.approve`, else 403. */
async function deskOperator(request: FastifyRequest, s: RecoveryRouteDeps): Promise<UserRow | undefined> {
  if (request.headers.authorization === undefined) return undefined;
  await s.guard.authenticate(request);
  if (!request.auth!.claims.permissions.includes('recovery.approve')) throw CommonErrors.PERMISSION_DENIED({ required_permission: 'recovery.approve' });
  return signedInUser(request, s.users);
}

const tags = ['Account recovery'];

const NOT_FOUND = '`404 RECOVERY_NOT_FOUND`: no workflow has this `recovery_id` (it says nothing about any account).';
const STALE = '`409 RECOVERY_STALE`: the workflow has ended (`details.state`: completed, cancelled, expired or rejected).';

export function recoveryRoutes(s: RecoveryRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;

    app.post('/api/v1/auth/reset/initiate', {
      schema: {
        tags, summary: 'Start recovering an account',
        description: [
          'Names the account (username, email address, or phone number in E.164) and what was lost. The answer is always `202` with the same body, whether the account exists, is disabled, or is real: a `recovery_id` and the proofs that would suffice (`proofs.alternatives`, the bank\'s setting for what was lost, never what this account has enrolled). Then give proofs one at a time with `POST /api/v1/auth/reset/verify-identity`.',
          '',
          'One workflow per account and lost thing is active at a time; starting another meanwhile answers alike but leads nowhere. When a real workflow starts, every contact of the account is told (email; SMS and push where configured), in the account\'s language, with a one-click "this was not me" link when `RECOVERY_CANCEL_URL` is set. While recovery is locked for the account (its owner used such a link), a workflow answers alike but leads nowhere. A workflow lives `RECOVERY_TTL_MINUTES` (30 by default).',
          '',
          'An operator starting it for a customer at a branch desk sends their bearer token (permission `recovery.approve`): the workflow records them, and another operator must approve it. Without a bearer token, nobody is recorded. An operator starts only `mfa` and `device` recoveries (`422 VALIDATION_ERROR` naming `lost` otherwise): the operator holds the `recovery_id`, and a password or PIN workflow would hand them the reset token.',
          '',
          bullets('`403 PERMISSION_DENIED`: a bearer token without `recovery.approve`.', '`401 TOKEN_*` / `SESSION_*`: a bearer token that is not valid.'),
        ].join('\n'),
        security: [{}, { bearer: [] }],
        body: InitiateBody,
        response: { 202: RecoveryStarted, ...errors(CommonErrors.VALIDATION_ERROR, CommonErrors.PERMISSION_DENIED, ...TOKEN_CHECK_ERRORS) },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('identifier') } },
    }, async (request, reply) => {
      // A pre-auth route (transport encryption): an operator's bearer is read once the body is decrypted.
      const operator = await deskOperator(request, s);
      // At a desk the operator holds the recovery_id: a password or PIN workflow would hand them
      // the reset token. Those the customer recovers on their own device (or an administrator resets).
      if (operator && (request.body.lost === 'password' || request.body.lost === 'pin')) {
        throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'lost', message: 'an operator starts a recovery only for lost second factors (mfa) or a device: a lost password or PIN is recovered by the customer on their own device, or reset by an administrator' }] });
      }
      const started = await s.recovery.initiate(request.body.identifier, request.body.lost, mfaContext(request), operator);
      return reply.status(202).send(started);
    });

    app.post('/api/v1/auth/reset/verify-identity', {
      schema: {
        tags, summary: 'Give one proof of identity',
        description: [
          'One proof per call; the answer is the workflow\'s status, plus what the step produced.',
          '',
          '- `email_code`, `sms_code`: without `code`, a code is sent to the contact on file (answer `sent`, with the masked destination; `OTP_RESEND_SECONDS` apart, `OTP_MAX_SENDS` in all); with `code`, it is checked.',
          '- `security_questions`: without `answers`, the questions to answer (`questions`, the same on every call); with `answers`, one per question, all are checked.',
          '- `totp`, `backup_code`: `code`. `password`: `password`. `pin`: `pin`.',
          '',
          'Knowledge (security answers, the password, the PIN) is accepted only after a possession proof (a code, an authenticator or backup code) of an alternative that holds it. Each proof has 3 attempts in a workflow; once no alternative can be met any more, the workflow is `rejected`. When an alternative is met, a lost password or PIN completes the workflow at once: every session of the account ends, and the answer carries `reset_token` (single use, `RESET_TOKEN_EXPIRE_MINUTES`) for `reset_with` (`POST /api/v1/auth/reset/password` or `/reset/pin`), this once. Lost second factors or a device go to `waiting` instead: they take effect at `waiting_until` (`RECOVERY_COOLING_OFF_HOURS`, 24; `RECOVERY_COOLING_OFF_HOURS_STAFF`, 72, for staff accounts) unless cancelled meanwhile, and every contact of the account is told. Then second factors are removed (the next sign-in enrols again where one is required) and every session ends; a device\'s bindings are revoked and the new one is asked for with `POST /api/v1/auth/reset/access-policy`. A `branch_approval` is given by an operator at a branch, to whom the person reads `reference`.',
          '',
          bullets(
            '`400 RECOVERY_PROOF_NOT_OFFERED`: the proof does not count for what was lost (`details.options`).',
            '`400 RECOVERY_INVALID_STATE`: `details.reason` `possession_proof_first`, `no_code_sent`, `questions_not_asked` or `already_verified`.',
            '`401 RECOVERY_PROOF_INVALID`: wrong code or answer; `details.attempts_left`, `details.state`.',
            '`401 RECOVERY_CODE_EXPIRED`: the code has expired; ask for a new one (no attempt is spent).',
            NOT_FOUND,
            STALE,
            '`409 RECOVERY_PROOF_ALREADY_GIVEN`: this proof was given already in this workflow.',
            '`422 SECURITY_ANSWERS_MISMATCH`: the answers do not name exactly the questions asked; `422 VALIDATION_ERROR`: a field the proof does not take, or a missing one.',
            '`429 RECOVERY_PROOF_LOCKED`: the proof\'s attempts are spent (with `Retry-After` when the account\'s own counter for it is locked for a while); `429 OTP_RESEND_THROTTLED`, `429 OTP_SEND_LIMIT`: codes asked for too soon or too often.',
          ),
        ].join('\n'),
        body: VerifyBody,
        response: {
          200: RecoveryStep,
          ...errors(
            E.RECOVERY_PROOF_NOT_OFFERED, E.RECOVERY_INVALID_STATE, E.RECOVERY_PROOF_INVALID, E.RECOVERY_CODE_EXPIRED, E.RECOVERY_NOT_FOUND, E.RECOVERY_STALE,
            E.RECOVERY_PROOF_ALREADY_GIVEN, SecurityQuestionErrors.SECURITY_ANSWERS_MISMATCH, CommonErrors.VALIDATION_ERROR, E.RECOVERY_PROOF_LOCKED,
            OtpErrors.OTP_RESEND_THROTTLED, OtpErrors.OTP_SEND_LIMIT, CommonErrors.RATE_LIMITED,
          ),
        },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('recovery_id') } },
    }, async (request) => {
      const { recovery_id: handle, ...input } = request.body;
      return s.recovery.verify(handle, input, mfaContext(request));
    });

    app.post('/api/v1/auth/reset/status', {
      schema: {
        tags, summary: 'Where a recovery stands',
        description: `The workflow's state, the proofs given and still needed, each proof's attempts left and (once a code went out) its masked destination, and when it expires, takes effect (\`waiting_until\`) or completed; \`reference\` while a branch's approval can still count. A workflow past its time answers \`expired\`; one past its cooling-off completes when asked.\n\n${bullets(NOT_FOUND)}`,
        body: HandleBody,
        response: { 200: RecoveryStatus, ...errors(E.RECOVERY_NOT_FOUND) },
      },
      config: { rateLimit: { group: 'recovery' } },
    }, async (request) => s.recovery.status(request.body.recovery_id, mfaContext(request)));

    app.post('/api/v1/auth/reset/cancel', {
      schema: {
        tags, summary: 'Cancel a recovery',
        description: [
          'With `recovery_id` (the person recovering): ends an active workflow as `cancelled` and answers its status; its codes and proofs are void.',
          '',
          'With `cancel_token` (the account\'s owner, from the "this was not me" link of a notice; the page `GET /recovery/cancel` sends it): ends the workflow too, even while `waiting`, and nothing else; raises a security alert and locks recovery for the account for `RECOVERY_LOCK_HOURS` (24): a new recovery meanwhile answers alike but leads nowhere. The answer adds `reported` and `recovery_locked_until`. A token works once, until its workflow has been over for 7 days; it is read from the body only, never from the address.',
          '',
          bullets(
            NOT_FOUND.replace('`recovery_id`', '`recovery_id` or `cancel_token`'), STALE,
            '`409 RECOVERY_CANCEL_TOKEN_USED`: the link was used already.',
            '`422 VALIDATION_ERROR`: neither or both of `recovery_id` and `cancel_token`, or anything in the query string.',
          ),
        ].join('\n'),
        body: CancelBody,
        response: { 200: CancelAnswerSchema, ...errors(E.RECOVERY_NOT_FOUND, E.RECOVERY_STALE, E.RECOVERY_CANCEL_TOKEN_USED, CommonErrors.VALIDATION_ERROR) },
      },
      config: { rateLimit: { group: 'recovery', account: (request) => bodyField('cancel_token')(request) ?? bodyField('recovery_id')(request) } },
    }, async (request) => {
      refuseQuery(request);
      const b = request.body;
      if ((b.recovery_id === undefined) === (b.cancel_token === undefined)) {
        throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'recovery_id', message: 'give either recovery_id or cancel_token' }] });
      }
      return b.cancel_token !== undefined ? s.recovery.cancelByToken(b.cancel_token, mfaContext(request)) : s.recovery.cancel(b.recovery_id!, mfaContext(request));
    });

    app.post('/api/v1/auth/reset/access-policy', {
      schema: {
        tags, summary: 'Ask for a recovered device\'s binding',
        description: [
          'For a `device` workflow whose cooling-off has ended (`completed`: the account\'s bound devices were revoked and every session ended), within 7 days: asks for the binding of the new device on `channel` under the channel\'s access policy. The binding is `pending` until an administrator approves it (`POST /api/v1/admin/device-bindings/{id}/approve`); calling again answers its state. Audited.',
          '',
          bullets(
            '`400 RECOVERY_INVALID_STATE`: not a `device` workflow (`details.reason` `not_a_device_recovery`), or its cooling-off is not over (`cooling_off_not_over`).',
            NOT_FOUND, '`409 RECOVERY_STALE`: the workflow has ended otherwise, or completed more than 7 days ago.',
            '`422 VALIDATION_ERROR`: no `device_fingerprint` and no `X-Device-Fingerprint` header.',
          ),
        ].join('\n'),
        body: AccessPolicyBody,
        response: { 200: RebindAnswerSchema, ...errors(E.RECOVERY_INVALID_STATE, E.RECOVERY_NOT_FOUND, E.RECOVERY_STALE, CommonErrors.VALIDATION_ERROR) },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('recovery_id') } },
    }, async (request) => {
      const fingerprint = request.body.device_fingerprint ?? fingerprintOf(request);
      if (fingerprint === '') throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'device_fingerprint', message: 'is required (or the X-Device-Fingerprint header)' }] });
      return s.recovery.accessPolicy(request.body.recovery_id, request.body.channel, fingerprint, mfaContext(request));
    });

    app.get('/recovery/cancel', { schema: { hide: true } }, async (_request, reply) =>
      sendOneClickPage(reply, CANCEL_PAGE));

    app.post('/recovery/cancel', {
      schema: { hide: true, body: TokenBody },
      config: { rateLimit: { group: 'recovery', account: bodyField('cancel_token') } },
    }, async (request) => {
      refuseQuery(request);
      return s.recovery.cancelByToken(request.body.cancel_token, mfaContext(request));
    });

    registerApprovalRoutes(app, s);
    registerOwnRoutes(app, s);
  };
}
