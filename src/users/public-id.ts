/**
 * A user's public id: the uuid. Routes that name a user in their path (`/admin/users/{id}` and
 * below) take it; an integer there is the internal id earlier versions exposed, refused with a
 * message that says which id to send (src/platform/http/public-id.ts).
 */
import Type from 'typebox';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../platform/http/public-id.js';

export const USER_UUID_EXAMPLE = '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77';

export const USER_ID: PublicIdKind = { what: 'user', source: 'the `id` of the user in GET /api/v1/admin/users', example: USER_UUID_EXAMPLE };

/** `{id}` of a route under `/api/v1/admin/users/{id}`. */
export const UserIdParams = Type.Object({ id: publicIdSchema(USER_ID, 'The user\'s uuid: the `id` of the user in the administration answers (`GET /api/v1/admin/users`). Integer ids are not accepted.') });

/** `{id}` and `{session_id}` of `/api/v1/admin/users/{id}/sessions/{session_id}`. */
export const UserSessionParams = Type.Object({
  id: UserIdParams.properties.id,
  session_id: Type.String({ format: 'uuid', description: 'The session\'s id: the `session_id` of the user\'s sessions (`GET /api/v1/admin/users/{id}/sessions`).', examples: ['8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e'] }),
});

/** A `preValidation` hook: an integer `{id}` answers 422 VALIDATION_ERROR saying to send the uuid. */
export const refuseIntegerUserId = refuseIntegerIds(USER_ID, { params: ['id'] });
