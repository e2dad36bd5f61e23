/**
 * Branch approvals of account recovery (permission `recovery.approve`): an operator works through
 * the queue of workflows waiting for a branch (oldest first, keyset-paged), or finds the one the
 * person at the desk reads the reference of, checks an identity document, and approves or rejects
 * (approvals.ts). Ordinary signed-in administrative routes.
 */
import Type from 'typebox';
import type { FastifyRequest } from 'fastify';
import { mfaContext } from '../mfa/challenge.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors, NO_NUL } from '../platform/http/schemas.js';
import { signedInUser, type Guard } from '../sessions/guard.js';
import type { UserRow, UserStore } from '../users/store.js';
import { RecoveryErrors as E } from './errors.js';
import { REFERENCE_LENGTH } from './reference.js';
import { Lost, ProofName, State } from './schemas.js';
import type { RecoveryService } from './service.js';

const ISO = { format: 'date-time' } as const;
const tags = ['Account recovery'];
const security = [{ bearer: [] }];
const PERMISSION = 'recovery.approve';

const Reference = Type.String({
  minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9 -]*$',
  description: `The workflow's reference, as the person at the desk reads it from their app (${REFERENCE_LENGTH} characters; case, spaces and dashes do not matter).`,
  examples: ['K7QM4XPD'],
});
const Uuid = (description: string) => Type.String({ format: 'uuid', description, examples: ['3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77'] });

const Awaiting = Type.Object({
  reference: Type.String({ examples: ['K7QM4XPD'] }),
  lost: Lost,
  state: State,
  user: Type.Object({ id: Uuid('The account\'s uuid.'), username: Type.String({ examples: ['amina.otieno'] }), full_name: Type.Union([Type.String({ examples: ['Amina Otieno'] }), Type.Null()]) }),
  contacts: Type.Object({
    email: Type.Union([Type.String({ examples: ['a***@bank.example'] }), Type.Null()]),
    phone: Type.Union([Type.String({ examples: ['+2547****11'] }), Type.Null()]),
  }, { description: 'The account\'s contacts on file, masked: what the person should recognise.' }),
  proofs: Type.Object({
    given: Type.Array(ProofName, { description: 'The proofs the person has given so far.' }),
    with_approval: Type.Array(Type.Array(ProofName), { description: 'The alternatives an approval would count toward: the person still gives their other proofs (say, the password) afterwards.' }),
  }),
  initiated_by: Type.Union([Type.Object({ id: Uuid('The operator\'s uuid.'), username: Type.String({ examples: ['desk.officer'] }) }), Type.Null()], { description: 'The operator who started it at a desk (who may not decide it), or null.' }),
  created_at: Type.String(ISO),
  expires_at: Type.String(ISO),
}, { title: 'RecoveryAwaitingApproval' });

const Decision = Type.Object({
  reference: Type.String({ examples: ['K7QM4XPD'] }),
  lost: Lost,
  state: State,
  proofs: Type.Object({ given: Type.Array(ProofName), needed: Type.Integer({ minimum: 0, examples: [1] }) }),
}, { title: 'RecoveryDecision' });

const Params = Type.Object({ reference: Reference });

const CURSOR_EXAMPLE = 'eyJ2IjoxLCJhdCI6IjIwMjYtMDMtMDRUMDk6MDA6MDAuMDAwMDAwWiIsImlkIjoiM2YwYzhhNWUtMmI3ZC00ZDZhLTlhNTEtMGM2YjFlMmY0YTc3In0';
const AWAITING_EXAMPLE = {
  reference: 'K7QM4XPD', lost: 'mfa', state: 'initiated',
  user: { id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', username: 'amina.otieno', full_name: 'Amina Otieno' },
  contacts: { email: 'a***@bank.example', phone: '+2547****11' },
  proofs: { given: [], with_approval: [['password', 'branch_approval']] },
  initiated_by: null, created_at: '2026-03-04T09:00:00.000Z', expires_at: '2026-03-04T09:30:00.000Z',
};

const DECISION_ERRORS = [
  '`403 PERMISSION_DENIED`: the caller lacks `recovery.approve`.',
  '`403 RECOVERY_FOUR_EYES`: the workflow is of the caller\'s own account (`details.reason` `own_account`) or the caller started it at a desk (`started_by_you`): another operator decides (audited).',
  '`404 RECOVERY_NOT_FOUND`: no workflow waits under this reference.',
  '`400 RECOVERY_PROOF_NOT_OFFERED`: what was lost takes no branch approval; `400 RECOVERY_INVALID_STATE`: the workflow is verified already (`details.reason` `already_verified`), or its account can no longer sign in (`account_unusable`).',
  '`409 RECOVERY_STALE`: the workflow has ended; `409 RECOVERY_PROOF_ALREADY_GIVEN`: another operator approved it first.',
];

export interface RecoveryAdminRouteDeps {
  recovery: RecoveryService;
  guard: Guard;
  users: UserStore;
}

export function registerApprovalRoutes(app: App, s: RecoveryAdminRouteDeps): void {
  const operatorOf = (request: FastifyRequest): Promise<UserRow> => signedInUser(request, s.users);
  const onRequest = s.guard.requirePermission(PERMISSION);
  const approvals = s.recovery.approvals;

  app.get('/api/v1/admin/recoveries', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'The recoveries waiting for a branch approval (permission recovery.approve)',
      description: [
        'The workflows waiting for a branch\'s approval: what was lost, the account\'s username and masked contacts, the proofs given, who started it, when it started and expires.',
        '',
        '- With neither filter: the queue, every workflow waiting now (still being proved, not expired, a branch\'s approval open and not given), **oldest first**, `limit` a page (20 by default). Send a page\'s `next_cursor` as `cursor` for the next (null on the last); every page costs the same however deep.',
        '- With `reference` (what the person at the desk reads from their app) or `user_id` (the account): the workflows that match, all at once (`next_cursor` null). A reference no waiting workflow has gives an empty list.',
        '',
        'Ended, expired and already approved workflows are never listed, nor a workflow that names no real account.',
        '',
        bullets('`403 PERMISSION_DENIED`: the caller lacks `recovery.approve`.', '`422 VALIDATION_ERROR`: both `reference` and `user_id`; `cursor` with either of them; or a malformed `cursor` (send a page\'s `next_cursor` unchanged).'),
      ].join('\n'),
      querystring: Type.Object({
        reference: Type.Optional(Reference),
        user_id: Type.Optional(Uuid('The account\'s uuid.')),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'The queue: workflows a page.', examples: [20] })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The queue: the `next_cursor` of the previous page, unchanged.', examples: [CURSOR_EXAMPLE] })),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          recoveries: Type.Array(Awaiting),
          next_cursor: Type.Union([Type.String({ examples: [CURSOR_EXAMPLE] }), Type.Null()], { description: 'The queue: send as `cursor` for the next page; null on the last page, and for a `reference` or `user_id` lookup.' }),
        }, { title: 'RecoveriesAwaitingApproval', examples: [{ recoveries: [AWAITING_EXAMPLE], next_cursor: null }] }),
        ...errors(CommonErrors.VALIDATION_ERROR),
      },
    },
    onRequest,
  }, async (request) => {
    const q = request.query;
    if (q.reference !== undefined && q.user_id !== undefined) {
      throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'reference', message: 'give reference or user_id, not both' }] });
    }
    if (q.reference === undefined && q.user_id === undefined) return approvals.queue({ cursor: q.cursor, limit: q.limit ?? 20 });
    if (q.cursor !== undefined) {
      throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'cursor', message: 'pages the queue only: a reference or user_id lookup answers all at once' }] });
    }
    return { recoveries: await approvals.list({ reference: q.reference, userId: q.user_id }), next_cursor: null };
  });

  app.post('/api/v1/admin/recoveries/:reference/approve', {
    schema: {
      tags, security, summary: 'Approve a recovery at a branch (permission recovery.approve)',
      description: `After checking the person's identity document: the workflow's \`branch_approval\` is given. It is one proof: the person still gives the alternative's others (say, the password) from their app. Audited with the operator, the document's type and the last four characters of its number.\n\n${bullets(...DECISION_ERRORS)}`,
      params: Params,
      body: Type.Object({
        document_type: Type.String({ minLength: 2, maxLength: 40, pattern: '^[A-Za-z_ -]*$', description: 'The kind of identity document checked.', examples: ['national_id'] }),
        document_number_last4: Type.String({ pattern: '^[A-Za-z0-9]{4}$', description: 'The last four characters of its number (never more).', examples: ['4821'] }),
        note: Type.Optional(Type.String({ minLength: 1, maxLength: 500, pattern: NO_NUL, description: 'For the audit trail.', examples: ['Photo matches; customer reported a stolen phone.'] })),
      }, { additionalProperties: false }),
      response: {
        200: Decision,
        ...errors(E.RECOVERY_FOUR_EYES, E.RECOVERY_NOT_FOUND, E.RECOVERY_PROOF_NOT_OFFERED, E.RECOVERY_INVALID_STATE, E.RECOVERY_STALE, E.RECOVERY_PROOF_ALREADY_GIVEN),
      },
    },
    onRequest,
  }, async (request) => approvals.approve(request.params.reference, await operatorOf(request), request.body, mfaContext(request)));

  app.post('/api/v1/admin/recoveries/:reference/reject', {
    schema: {
      tags, security, summary: 'Reject a recovery at a branch (permission recovery.approve)',
      description: `The person could not prove who they are: the workflow ends as \`rejected\`. Audited with the operator and the reason.\n\n${bullets(...DECISION_ERRORS)}`,
      params: Params,
      body: Type.Object({
        reason: Type.String({ minLength: 1, maxLength: 500, pattern: NO_NUL, description: 'Why, for the audit trail.', examples: ['The identity document did not match the account holder.'] }),
      }, { additionalProperties: false }),
      response: { 200: Decision, ...errors(E.RECOVERY_FOUR_EYES, E.RECOVERY_NOT_FOUND, E.RECOVERY_PROOF_NOT_OFFERED, E.RECOVERY_INVALID_STATE, E.RECOVERY_STALE) },
    },
    onRequest,
  }, async (request) => approvals.reject(request.params.reference, await operatorOf(request), request.body.reason, mfaContext(request)));
}
