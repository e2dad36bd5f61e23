/**
 * One public id for a user: the uuid. Routes that name a user in their path (`/admin/users/{id}`
 * and below) take it; an integer there is the internal id earlier versions exposed, refused with
 * a message that says which id to send (docs/decisions.md, "One public id").
 */
import Type from 'typebox';
import type { FastifyRequest } from 'fastify';
import { CommonErrors } from '../platform/errors.js';

export const USER_UUID_EXAMPLE = '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77';

const ID_TEXT = 'The user\'s uuid: the `id` of the user in the administration answers (`GET /api/v1/admin/users`). Integer ids are not accepted.';

/** `{id}` of a route under `/api/v1/admin/users/{id}`. */
export const UserIdParams = Type.Object({ id: Type.String({ format: 'uuid', description: ID_TEXT, examples: [USER_UUID_EXAMPLE] }) });

/** `{id}` and `{session_id}` of `/api/v1/admin/users/{id}/sessions/{session_id}`. */
export const UserSessionParams = Type.Object({
  id: UserIdParams.properties.id,
  session_id: Type.String({ format: 'uuid', description: 'The session\'s id: the `session_id` of the user\'s sessions (`GET /api/v1/admin/users/{id}/sessions`).', examples: ['8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e'] }),
});

const INTEGER = /^[0-9]{1,20}$/;

/**
 * A `preValidation` hook: an integer `{id}` answers 422 VALIDATION_ERROR saying to send the
 * uuid, before the schema's generic "must match format" would.
 */
export async function refuseIntegerUserId(request: FastifyRequest): Promise<void> {
  const id = (request.params as { id?: unknown } | undefined)?.id;
  if (typeof id === 'string' && INTEGER.test(id)) {
    throw CommonErrors.VALIDATION_ERROR(
      { fields: [{ location: 'params', field: 'id', message: 'must be the user\'s uuid (the `id` of the user in GET /api/v1/admin/users), not an integer' }], expected: 'uuid' },
      { message: 'Users are named by their uuid: send the `id` of the user in GET /api/v1/admin/users (integer user ids are not accepted).' },
    );
  }
}
