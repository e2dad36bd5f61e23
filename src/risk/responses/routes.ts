/**
 * The "this was not me" routes: `POST /api/v1/auth/security/not-me` (the API: a transport
 * encryption pre-auth route, for an app that shows the notice itself) and the page
 * `GET`/`POST /security/not-me` (exempt from transport encryption: a browser page). Public, rate
 * limited in the `recovery` group per client network and per token. And the administrator's
 * `DELETE /api/v1/admin/users/{id}/security-lock` (permission `users.update`).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AdminErrors } from '../../admin/errors.js';
import { mfaContext } from '../../mfa/challenge.js';
import { CommonErrors } from '../../platform/errors.js';
import type { Db } from '../../platform/db/database.js';
import type { App } from '../../platform/http/app.js';
import { sendOneClickPage } from '../../platform/http/one-click-page.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { bodyField } from '../../policy/route-limits.js';
import { RoleErrors } from '../../roles/errors.js';
import { assertTargetHeld } from '../../roles/held.js';
import { requestActor, requestAuditContext, type Guard } from '../../sessions/guard.js';
import { refuseIntegerUserId, UserIdParams } from '../../users/public-id.js';
import type { UserStore } from '../../users/store.js';
import { RiskResponseErrors as E } from './errors.js';
import { NOT_ME_PAGE, NOT_ME_PAGE_PATH } from './page.js';
import { NotMeAnswerSchema, NotMeBody, SecurityUnlockAnswer } from './schemas.js';
import type { RiskResponses } from './service.js';

export const NOT_ME_PATH = '/api/v1/auth/security/not-me';

export interface RiskResponseRouteDeps {
  db: Db;
  responses: RiskResponses;
  guard: Guard;
  users: UserStore;
}

/** The token is read from the body only: anything in the query string is refused (it would sit in logs and histories). */
function refuseQuery(request: FastifyRequest): void {
  if (request.url.includes('?')) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'not_me_token', message: 'is read from the body only, never from the address' }] });
}

const NOT_ME_DESCRIPTION = [
  'The account holder\'s answer to a sign-in notice (a sign-in that did not look like theirs): `not_me_token` is the part after `#` of the notice\'s link (`RISK_NOT_ME_URL`). Ends every session of the account, locks the account (every sign-in, by any method, is then `403 ACCOUNT_SECURITY_LOCKED` until a new password is set through an account recovery or an administrator lifts the lock), raises a critical security alert (`not_me`) and is audited (`SIGN_IN_REPORTED_NOT_ME`). A token works once, for `RISK_NOT_ME_DAYS` (7); it is read from the body only, never from the address. The page `GET /security/not-me` sends it.',
  '',
  bullets(
    '`404 NOT_ME_TOKEN_INVALID`: no notice has this token.',
    '`409 NOT_ME_TOKEN_USED`: the link was used already (`details.used_at`); the account was locked then.',
    '`410 NOT_ME_TOKEN_EXPIRED`: the link is older than `RISK_NOT_ME_DAYS`.',
    '`422 VALIDATION_ERROR`: a malformed token, or anything in the query string.',
  ),
].join('\n');

export function riskResponseRoutes(s: RiskResponseRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const notMe = async (request: FastifyRequest<{ Body: { not_me_token: string } }>) => {
      refuseQuery(request);
      return s.responses.notMe(request.body.not_me_token, mfaContext(request));
    };
    const limit = { rateLimit: { group: 'recovery' as const, account: bodyField('not_me_token') } };

    app.post(NOT_ME_PATH, {
      schema: {
        tags: ['Sign-in notices'], summary: 'Report a sign-in as not mine',
        description: NOT_ME_DESCRIPTION, body: NotMeBody,
        response: { 200: NotMeAnswerSchema, ...errors(E.NOT_ME_TOKEN_INVALID, E.NOT_ME_TOKEN_USED, E.NOT_ME_TOKEN_EXPIRED, CommonErrors.VALIDATION_ERROR) },
      },
      config: limit,
    }, notMe);

    app.get(NOT_ME_PAGE_PATH, { schema: { hide: true } }, async (_request, reply) => sendOneClickPage(reply, NOT_ME_PAGE));
    app.post(NOT_ME_PAGE_PATH, { schema: { hide: true, body: NotMeBody }, config: limit }, notMe);

    app.delete('/api/v1/admin/users/:id/security-lock', {
      schema: {
        tags: ['Sign-in notices'], security: [{ bearer: [] }], summary: 'Lift the lock a holder put on their account (permission users.update)',
        description: 'Lifts the lock of an account whose holder answered "this was not me" to a sign-in notice, once the bank is satisfied the holder is who they say (the holder can also lift it themselves by setting a new password through an account recovery). Audited `ACCOUNT_SECURITY_UNLOCKED` when the account was locked; an account that was not locked is left alone (`was_locked_at: null`). Sessions ended by the report stay ended.',
        params: UserIdParams,
        response: { 200: SecurityUnlockAnswer, ...errors(AdminErrors.USER_NOT_FOUND, RoleErrors.ACCOUNT_MORE_PRIVILEGED) },
      },
      onRequest: s.guard.requirePermission('users.update'), preValidation: refuseIntegerUserId,
    }, async (request) => {
      const user = await s.users.findByUuid(request.params.id);
      if (!user) throw AdminErrors.USER_NOT_FOUND();
      const actor = await requestActor(request, s.users);
      await assertTargetHeld(s.db, s.users, actor.uuid, user.id);
      const was = await s.responses.unlock(user.id, user, actor, requestAuditContext(request));
      return { status: 'success' as const, was_locked_at: was === null ? null : was.toISOString() };
    });
  };
}
