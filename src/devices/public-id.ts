/**
 * A device token's public id: the uuid. The device routes take it in their path, the OTP push
 * enrolment in `device_id`, and every answer and audit entry gives it; the integer stays internal
 * (the outbox's and the codes' foreign keys). An integer is what earlier versions exposed: refused
 * with a message that says which id to send (src/platform/http/public-id.ts).
 */
import Type from 'typebox';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../platform/http/public-id.js';

export const DEVICE_TOKEN_ID: PublicIdKind = {
  what: 'device token',
  source: 'the `id` of GET /api/v1/notifications/devices',
  example: '6d2f9a41-8c3e-4b7a-a5d0-19e4c7b83f62',
};

/** `{id}` of `/api/v1/notifications/devices/{id}` and the routes below it. */
export const DeviceIdParams = Type.Object({ id: publicIdSchema(DEVICE_TOKEN_ID) });

/** A `preValidation` hook: an integer `{id}` answers 422 VALIDATION_ERROR saying to send the uuid. */
export const refuseIntegerDeviceId = refuseIntegerIds(DEVICE_TOKEN_ID, { params: ['id'] });
