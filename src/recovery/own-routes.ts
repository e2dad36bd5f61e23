/**
 * A signed-in person's own recoveries (own.ts), named like the other "your ..." routes
 * (`/api/v1/auth/sessions`): `GET /api/v1/auth/recoveries` lists them and
 * `POST /api/v1/auth/recoveries/{reference}/cancel` stops one. Personal data: answered sealed
 * under the session key where transport encryption is enforced.
 */
import Type from 'typebox';
import { mfaContext } from '../mfa/challenge.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import { signedInAccount, signedInUser } from '../sessions/guard.js';
import type { RecoveryAdminRouteDeps } from './admin-routes.js';
import { RecoveryErrors as E } from './errors.js';
import { OWN_SHOWN } from './own.js';
import { REFERENCE_LENGTH } from './reference.js';
import { Lost, State } from './schemas.js';

const tags = ['Account recovery'];
const security = [{ bearer: [] }];
const rateLimit = { group: 'account' as const, account: signedInAccount };
const ISO = { format: 'date-time' } as const;
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const OwnRecovery = Type.Object({
  reference: Nullable(Type.String({ description: 'The workflow\'s reference (null for a workflow started before references existed): what the cancel route takes.', examples: ['K7QM4XPD'] })),
  lost: Lost,
  state: State,
  started_at_branch: Type.Boolean({ description: 'An operator started it for you at a branch desk, having checked your identity document: it cannot be cancelled from a session.', examples: [false] }),
  blocked: Type.Boolean({ description: 'It leads nowhere and cannot succeed: it was started while recovery of your account was locked (after a recovery was reported as not yours from a notice), or it is one your account cannot use (for instance a password your organisation\'s directory keeps). Nothing to cancel.', examples: [false] }),
  created_at: Type.String({ ...ISO, description: 'When it was started.' }),
  expires_at: Type.String({ ...ISO, description: 'When it ends unless finished first.' }),
  waiting_until: Nullable(Type.String({ ...ISO, description: '`waiting`: when it takes effect unless cancelled.' })),
  completed_at: Nullable(Type.String(ISO)),
  ended_at: Nullable(Type.String({ ...ISO, description: 'When it completed, was cancelled or rejected, or expired.' })),
  cancellable: Type.Boolean({ description: 'Still active, not started at a branch and not `blocked`: you may cancel it (`POST /api/v1/auth/recoveries/{reference}/cancel`).', examples: [true] }),
}, { title: 'OwnRecovery' });

const OwnFactorReset = Type.Object({
  request_id: Type.String({ format: 'uuid', examples: ['5b0e6f2a-8c1d-4e3f-9a7b-2c4d6e8f0a1b'] }),
  status: Type.Unsafe<string>({ type: 'string', enum: ['pending', 'approved', 'rejected', 'expired', 'completed'], description: '`pending` (staff decide), `approved` (your factors were removed; enrol again), `rejected`, `expired` (nobody decided in time), `completed` (you enrolled again).', examples: ['pending'] }),
  reason: Type.String({ description: 'Why you asked, in your words.', examples: ['I lost the phone that holds my authenticator app.'] }),
  requested_at: Type.String(ISO),
  expires_at: Type.String({ ...ISO, description: 'A pending request not decided by then lapses.' }),
  decided_at: Nullable(Type.String(ISO)),
  decision_note: Nullable(Type.String({ description: 'The approval note or the rejection reason.' })),
  completed_at: Nullable(Type.String(ISO)),
}, { title: 'OwnFactorReset' });

const LockedUntil = Nullable(Type.String({ ...ISO, description: 'Recovery of your account is locked until then (after a recovery was reported as not yours with the "this was not me" link of a notice: `RECOVERY_LOCK_HOURS`); null when it is not. Nothing done with a session sets it.' }));

const EXAMPLE_RECOVERY = {
  reference: 'K7QM4XPD', lost: 'mfa', state: 'waiting', started_at_branch: false, blocked: false, created_at: '2026-03-04T09:00:00.000Z', expires_at: '2026-03-05T09:10:00.000Z',
  waiting_until: '2026-03-05T09:10:00.000Z', completed_at: null, ended_at: null, cancellable: true,
};

const OwnRecoveries = Type.Object({
  recoveries: Type.Array(OwnRecovery, { description: `Your account's recoveries, newest first (the ${OWN_SHOWN} newest).` }),
  factor_resets: Type.Array(OwnFactorReset, { description: `Your requests to reset your second factors, newest first (the ${OWN_SHOWN} newest).` }),
  recovery_locked_until: LockedUntil,
}, { title: 'OwnRecoveries', examples: [{ recoveries: [EXAMPLE_RECOVERY], factor_resets: [], recovery_locked_until: null }] });

const OwnCancelled = Type.Object({
  recovery: OwnRecovery,
  reported: Type.Boolean({ description: 'Reported as not yours (`not_me`): the bank was alerted. Recovery is not locked by it (see `recovery_locked_until`).', examples: [true] }),
  recovery_locked_until: LockedUntil,
}, { title: 'OwnRecoveryCancelled', examples: [{ recovery: { ...EXAMPLE_RECOVERY, state: 'cancelled', ended_at: '2026-03-04T09:05:00.000Z', cancellable: false }, reported: true, recovery_locked_until: null }] });

export function registerOwnRoutes(app: App, s: RecoveryAdminRouteDeps): void {
  app.get('/api/v1/auth/recoveries', {
    config: { personalData: true, rateLimit },
    schema: {
      tags, security, summary: 'List your recoveries',
      description: 'Your account\'s recoveries (what was lost, where each stands, whether a branch started it, the dates: a recovery someone else started shows here too), your requests to reset your second factors (state, your reason, the decision) and whether recovery of your account is locked. Never a handle, code or proof. Reading it writes nothing: one past its time shows as `expired`. The access policy of this session\'s channel applies (`403 POLICY_RESTRICTED`).',
      response: { 200: OwnRecoveries },
    },
    onRequest: s.guard.authenticate,
  }, async (request) => s.recovery.own.list((await signedInUser(request, s.users)).id));

  app.post('/api/v1/auth/recoveries/:reference/cancel', {
    config: { personalData: true, rateLimit },
    schema: {
      tags, security, summary: 'Cancel one of your recoveries',
      description: [
        'Ends one of your account\'s active recoveries as `cancelled`, even while `waiting` (nothing has been removed yet); your sessions stay. Every contact of the account is told. Audited as `RECOVERY_CANCELLED` (`by: owner_signed_in`).',
        '',
        'With `not_me: true` (you did not start it), the bank is also alerted (`RECOVERY_REPORTED_NOT_ME`, `by: owner_signed_in`), but recovery of your account is **not** locked: a session can be the very thing that was stolen (a lost phone still signed in), and whoever holds it must not be able to block your own recoveries. To block new attempts for `RECOVERY_LOCK_HOURS` (24), use the "this was not me" link in the notice emailed to you: the lock is for whoever holds your contacts. `recovery_locked_until` says whether recovery is locked. The body may be left out.',
        '',
        bullets(
          '`404 RECOVERY_NOT_FOUND`: your account has no recovery under this reference (another account\'s is answered the same way).',
          '`409 RECOVERY_STALE`: it has ended already (`details.state`: completed, cancelled, expired or rejected).',
          '`400 RECOVERY_INVALID_STATE`: not yours to cancel from a session (`details.state`, and `details.reason`): `started_at_branch` (an operator started it at a branch, having checked your identity document; if it was not you, the "this was not me" link of its notice stops it) or `blocked` (it leads nowhere: nothing is sent, reported or locked).',
        ),
      ].join('\n'),
      params: Type.Object({
        reference: Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9 -]*$', description: `The recovery's \`reference\` (${REFERENCE_LENGTH} characters; case, spaces and dashes do not matter).`, examples: ['K7QM4XPD'] }),
      }),
      body: Type.Object({
        not_me: Type.Optional(Type.Boolean({ default: false, description: 'You did not start it: report it to the bank (it does not lock recovery; the notice\'s link does).', examples: [true] })),
      }, { additionalProperties: false, description: 'Optional: no body means `{}`.', examples: [{ not_me: true }] }),
      response: { 200: OwnCancelled, ...errors(E.RECOVERY_NOT_FOUND, E.RECOVERY_STALE, E.RECOVERY_INVALID_STATE) },
    },
    preValidation: async (request) => {
      request.body ??= {};
    },
    onRequest: s.guard.authenticate,
  }, async (request) => {
    const user = await signedInUser(request, s.users);
    return s.recovery.own.cancel(user, request.params.reference, request.body.not_me === true, mfaContext(request), request.auth!.session.sessionId);
  });
}
