/**
 * Administrators and a user's passkeys: list them (permission `users.read`) and delete one
 * (permission `users.update`, on an account no more privileged than the administrator's own;
 * audited PASSKEY_DELETED with the administrator). A lost or stolen phone's passkey goes this way
 * when its owner cannot sign in to delete it.
 */
import type { FastifyPluginAsync } from 'fastify';
import Type from 'typebox';
import { AdminErrors } from '../admin/errors.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { RoleErrors } from '../roles/errors.js';
import { assertTargetHeld } from '../roles/held.js';
import { requestWho, type Guard } from '../sessions/guard.js';
import { refuseIntegerUserId, UserIdParams } from '../users/public-id.js';
import type { UserRow, UserStore } from '../users/store.js';
import { PasskeyErrors as E } from './errors.js';
import { Deleted, PasskeyList } from './schemas.js';
import type { PasskeyService } from './service.js';

const tags = ['Passkeys'];
const security = [{ bearer: [] }];

const UserPasskeyParams = Type.Object({
  id: UserIdParams.properties.id,
  passkey_id: Type.String({ format: 'uuid', description: 'The passkey\'s `id` (`GET /api/v1/admin/users/{id}/passkeys`).', examples: ['7d9c2f4e-1a3b-4c5d-8e6f-0a1b2c3d4e5f'] }),
});

export interface PasskeyAdminRouteDeps {
  db: Db;
  guard: Guard;
  users: UserStore;
  passkeys: PasskeyService;
}

export function passkeyAdminRoutes(s: PasskeyAdminRouteDeps): FastifyPluginAsync {
  const target = async (uuid: string): Promise<UserRow> => {
    const user = await s.users.findByUuid(uuid);
    if (!user) throw AdminErrors.USER_NOT_FOUND();
    return user;
  };
  return async (instance) => {
    const app = instance as unknown as App;
    app.get('/api/v1/admin/users/:id/passkeys', {
      config: { personalData: true },
      schema: {
        tags, security, summary: 'List a user\'s passkeys (permission users.read)',
        description: 'Oldest first: names, dates, device type and backup state; never a public key or a credential id. `404 USER_NOT_FOUND`: no such user.',
        params: UserIdParams, response: { 200: PasskeyList, ...errors(AdminErrors.USER_NOT_FOUND) },
      },
      onRequest: s.guard.requirePermission('users.read'), preValidation: refuseIntegerUserId,
    }, async (request) => ({ passkeys: await s.passkeys.list(await target(request.params.id)) }));

    app.delete('/api/v1/admin/users/:id/passkeys/:passkey_id', {
      schema: {
        tags, security, summary: 'Delete a user\'s passkey (permission users.update)',
        description: 'For a lost or stolen device. Deleting the last passkey removes the user\'s `passkey` second factor. Audited `PASSKEY_DELETED` with the administrator. `404 USER_NOT_FOUND`, `404 PASSKEY_NOT_FOUND`; `403 ACCOUNT_MORE_PRIVILEGED`: the account holds a permission you do not hold.',
        params: UserPasskeyParams, response: { 200: Deleted, ...errors(AdminErrors.USER_NOT_FOUND, E.PASSKEY_NOT_FOUND, RoleErrors.ACCOUNT_MORE_PRIVILEGED) },
      },
      onRequest: s.guard.requirePermission('users.update'), preValidation: refuseIntegerUserId,
    }, async (request) => {
      const user = await target(request.params.id);
      const who = await requestWho(request, s.users);
      await assertTargetHeld(s.db, s.users, who.actor.uuid, user.id);
      const admin = who.actor.uuid ? { uuid: who.actor.uuid, username: who.actor.username ?? '' } : undefined;
      return s.passkeys.delete(user, request.params.passkey_id, { ctx: who.context, admin });
    });
  };
}
