/**
 * `POST /api/v1/auth/gdpr/delete` (signed in: password, and a step-up when the account has a
 * second factor), `POST /api/v1/auth/gdpr/delete/cancel` (the notice's token, or the username and
 * password: no session, since the account cannot sign in), the notice's page
 * `GET`/`POST /gdpr/erasure/cancel`, and the operators' `GET /api/v1/admin/gdpr/erasures` (permission
 * `gdpr.read`), `POST …/{id}/hold` and `…/{id}/release` (permission `gdpr.hold`).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AdminErrors } from '../../admin/errors.js';
import { auditContext } from '../../audit/service.js';
import { mfaContext } from '../../mfa/challenge.js';
import { MfaErrors } from '../../mfa/errors.js';
import { CommonErrors } from '../../platform/errors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { PolicyErrors } from '../../policy/errors.js';
import { bodyField } from '../../policy/route-limits.js';
import { requestAuditContext, requestWho, signedInAccount, signedInUser, type Guard } from '../../sessions/guard.js';
import { SignInErrors } from '../../signin/errors.js';
import type { UserRow, UserStore } from '../../users/store.js';
import { ERASURE_PAGE, ERASURE_PAGE_PATH } from './cancel-page.js';
import { sendOneClickPage } from '../../platform/http/one-click-page.js';
import { ErasureErrors as E } from './errors.js';
import { ERASURE_CANCEL_PATH } from './gate.js';
import { CancelBody, Cancelled, DeleteBody, ErasureList, Erasure, HoldBody, IdParams, ListQuery, PageCancelBody, Requested } from './schemas.js';
import type { ErasureService } from './service.js';

export const DELETE_PATH = '/api/v1/auth/gdpr/delete';
export const GDPR_HOLD = 'gdpr.hold';

export interface ErasureRouteDeps {
  erasure: ErasureService;
  users: UserStore;
  guard: Guard;
  graceDays: number;
}

const tags = ['Data-subject rights'];
const security = [{ bearer: [] }];

/** A cancel token is read from the body only (the address would put it in logs and histories). */
function refuseQuery(request: FastifyRequest): void {
  if (request.url.includes('?')) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'token', message: 'is read from the body only, never from the address' }] });
}

export function erasureRoutes(s: ErasureRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    registerPersonRoutes(app, s);
    registerOperatorRoutes(app, s);
  };
}

function registerPersonRoutes(app: App, s: ErasureRouteDeps): void {
  app.post(DELETE_PATH, {
    schema: {
      tags, security, summary: 'Ask for your account to be erased',
      description: [
        `The signed-in person asks to be forgotten. After a grace period (GDPR_ERASURE_GRACE_DAYS, ${s.graceDays} days here) the erasure job deletes their credentials, factors, sessions, devices, consents and the rest, makes the account a tombstone and pseudonymises the records the bank must keep (the audit trail, the consent history). From the request on the account cannot sign in: every session ends now, and a sign-in with the right credentials answers \`403 ACCOUNT_ERASURE_PENDING\`.`,
        '',
        'The account\'s email and phone are told, in its language, with a one-click cancel link when GDPR_ERASURE_CANCEL_URL is set; `POST /api/v1/auth/gdpr/delete/cancel` with the username and password cancels too. Audited (GDPR_ERASURE_REQUESTED) and recorded in the request log.',
        '',
        bullets(
          '`401 INVALID_CREDENTIALS`: `current_password` is wrong (it counts toward the account\'s lockout, as a sign-in: then `429 ACCOUNT_LOCKED`).',
          '`403 STEP_UP_REQUIRED`: the account has a second factor and this session has not signed in or stepped up with it in the last 10 minutes (`details` names the step-up routes).',
          '`409 ERASURE_ALREADY_PENDING`: a request is pending already (`details.erase_after`).',
          '`409 LAST_ADMIN`: the account is the last active administrator: give another account the admin role first.',
          '`409 ERASURE_NOT_ALLOWED_SERVICE_ACCOUNT`: a service account is retired by its administrators.',
        ),
      ].join('\n'),
      body: DeleteBody,
      response: { 202: Requested, ...errors(SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.STEP_UP_REQUIRED, E.ERASURE_ALREADY_PENDING, AdminErrors.LAST_ADMIN, E.ERASURE_NOT_ALLOWED_SERVICE_ACCOUNT) },
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: { group: 'account', account: signedInAccount } },
  }, async (request, reply) => {
    const user = await signedInUser<UserRow>(request, s.users);
    const out = await s.erasure.request(request.auth!, user, request.body.current_password, requestAuditContext(request));
    return reply.code(202).header('cache-control', 'no-store').send(out);
  });

  app.post(ERASURE_CANCEL_PATH, {
    schema: {
      tags, summary: 'Cancel a pending erasure of your account',
      description: [
        'With `token` (the one-click link of the erasure notice), or with `username` and `password` (the account cannot sign in while its erasure is pending, so this route takes the credentials itself). Cancelling puts the account back as it was: it can sign in again (with its second factor, as always). No second factor is asked here: cancelling only keeps what the person has, and every contact of the account is told. Audited (GDPR_ERASURE_CANCELLED).',
        '',
        bullets(
          '`401 INVALID_CREDENTIALS`: the username or password is wrong, or names no account (the same answer); counted toward the sign-in lockout (`429 ACCOUNT_LOCKED`).',
          '`404 ERASURE_NOT_FOUND`: nothing pending to cancel (the token was used, the erasure was done, or was never asked).',
          '`422 VALIDATION_ERROR`: neither or both of `token` and the credentials, or anything in the query string.',
        ),
      ].join('\n'),
      body: CancelBody,
      response: { 200: Cancelled, ...errors(SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, E.ERASURE_NOT_FOUND, CommonErrors.VALIDATION_ERROR) },
    },
    config: { rateLimit: { group: 'signin', account: (request) => bodyField('username')(request) ?? bodyField('token')(request) } },
  }, async (request) => {
    refuseQuery(request);
    const b = request.body;
    const credentials = b.username !== undefined && b.password !== undefined;
    if ((b.token !== undefined) === credentials || (!credentials && (b.username !== undefined || b.password !== undefined))) {
      throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'token', message: 'give either token, or username and password' }] });
    }
    const ctx = auditContext(mfaContext(request));
    const erasure = b.token !== undefined ? await s.erasure.cancelWithToken(b.token, ctx) : await s.erasure.cancelWithCredentials(b.username!, b.password!, ctx);
    return { cancelled: true as const, erasure };
  });

  app.get(ERASURE_PAGE_PATH, { schema: { hide: true } }, async (_request, reply) =>
    sendOneClickPage(reply, ERASURE_PAGE));

  app.post(ERASURE_PAGE_PATH, {
    schema: { hide: true, body: PageCancelBody },
    config: { rateLimit: { group: 'signin', account: bodyField('token') } },
  }, async (request) => {
    refuseQuery(request);
    return { cancelled: true as const, erasure: await s.erasure.cancelWithToken(request.body.token, auditContext(mfaContext(request))) };
  });
}

function registerOperatorRoutes(app: App, s: ErasureRouteDeps): void {
  app.get('/api/v1/admin/gdpr/erasures', {
    schema: {
      tags, security, summary: 'The pending erasures (permission gdpr.read)',
      description: 'Every pending erasure, soonest due first: the account\'s uuid, when asked, when due, and any legal hold (reason, since, by whom). Nothing else about the person.',
      querystring: ListQuery,
      response: { 200: ErasureList },
    },
    onRequest: s.guard.requirePermission('gdpr.read'),
  }, async (request) => ({ erasures: await s.erasure.listPending(request.query.limit ?? 100) }));

  app.post('/api/v1/admin/gdpr/erasures/:id/hold', {
    schema: {
      tags, security, summary: 'Suspend a pending erasure under a legal hold (permission gdpr.hold)',
      description: `The erasure job leaves the request alone until the hold is released; the person may still cancel it. Audited (GDPR_ERASURE_HELD) with the operator and the reason.\n\n${bullets('`404 ERASURE_NOT_FOUND`: no pending erasure has this id.', '`409 ERASURE_HOLD_CONFLICT`: it is held already.')}`,
      params: IdParams, body: HoldBody,
      response: { 200: Erasure, ...errors(E.ERASURE_NOT_FOUND, E.ERASURE_HOLD_CONFLICT) },
    },
    onRequest: s.guard.requirePermission(GDPR_HOLD),
  }, async (request) => s.erasure.hold(request.params.id, request.body.reason, await requestWho(request, s.users)));

  app.post('/api/v1/admin/gdpr/erasures/:id/release', {
    schema: {
      tags, security, summary: 'Release the legal hold of a pending erasure (permission gdpr.hold)',
      description: `The erasure goes ahead: at its \`erase_after\`, or at the job's next run when that has passed. Audited (GDPR_ERASURE_RELEASED) with the operator.\n\n${bullets('`404 ERASURE_NOT_FOUND`: no pending erasure has this id.', '`409 ERASURE_HOLD_CONFLICT`: it is not held.')}`,
      params: IdParams,
      response: { 200: Erasure, ...errors(E.ERASURE_NOT_FOUND, E.ERASURE_HOLD_CONFLICT) },
    },
    onRequest: s.guard.requirePermission(GDPR_HOLD),
  }, async (request) => s.erasure.hold(request.params.id, null, await requestWho(request, s.users)));
}
