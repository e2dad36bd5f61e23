/** Bodies and answers of the erasure routes. */
import Type from 'typebox';
import { ERASURE_TOKEN_PATTERN } from './cancel-page.js';

const UUID_EXAMPLE = '3f1c2a4e-8b7d-4c6e-9a0f-5d2e1b7c8a90';

export const DeleteBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 1024, description: 'The account\'s current password: checked and counted as a sign-in is.' }),
}, { additionalProperties: false, examples: [{ current_password: 'Vt7#qLm2!xRp9$' }] });

export const Requested = Type.Object({
  erasure_id: Type.String({ format: 'uuid' }),
  requested_at: Type.String({ format: 'date-time' }),
  erase_after: Type.String({ format: 'date-time', description: 'When the erasure job erases the account, unless cancelled (or held) before.' }),
  sessions_ended: Type.Integer({ minimum: 0, description: 'Sessions of the account ended by the request (this one included).' }),
}, { examples: [{ erasure_id: '0b9e6c1e-7d3a-4f5e-8a2b-1c9d0e7f6a5b', requested_at: '2026-11-28T05:00:00.000Z', erase_after: '2026-12-28T05:00:00.000Z', sessions_ended: 2 }] });

export const CancelBody = Type.Object({
  token: Type.Optional(Type.String({ pattern: ERASURE_TOKEN_PATTERN, description: 'The one-click token of the erasure notice\'s link (the part after `#`).' })),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'The username or email the account signs in with (with `password`).' })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'The account\'s password (with `username`).' })),
}, { additionalProperties: false, examples: [{ username: 'amina.otieno', password: 'Vt7#qLm2!xRp9$' }, { token: 'erx_k3Jx9QbT7vLm2Wq8Zr4Ns6Yp1Hd5Fg0Ae3Cu7Ei9Oo2' }] });

export const PageCancelBody = Type.Object({ token: Type.String({ pattern: ERASURE_TOKEN_PATTERN }) }, { additionalProperties: false, examples: [{ token: 'erx_k3Jx9QbT7vLm2Wq8Zr4Ns6Yp1Hd5Fg0Ae3Cu7Ei9Oo2' }] });

export const Erasure = Type.Object({
  id: Type.String({ format: 'uuid' }),
  user_id: Type.String({ format: 'uuid', description: 'The account\'s uuid.' }),
  requested_at: Type.String({ format: 'date-time' }),
  erase_after: Type.String({ format: 'date-time' }),
  hold: Type.Union([Type.Object({
    reason: Type.String(), since: Type.String({ format: 'date-time' }), by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The operator\'s uuid.' }),
  }), Type.Null()], { description: 'The legal hold suspending the erasure, or null.' }),
}, { examples: [{ id: '0b9e6c1e-7d3a-4f5e-8a2b-1c9d0e7f6a5b', user_id: UUID_EXAMPLE, requested_at: '2026-11-28T05:00:00.000Z', erase_after: '2026-12-28T05:00:00.000Z', hold: null }] });

export const Cancelled = Type.Object({ cancelled: Type.Literal(true), erasure: Erasure }, { examples: [{ cancelled: true, erasure: { id: '0b9e6c1e-7d3a-4f5e-8a2b-1c9d0e7f6a5b', user_id: UUID_EXAMPLE, requested_at: '2026-11-28T05:00:00.000Z', erase_after: '2026-12-28T05:00:00.000Z', hold: null } }] });

export const ErasureList = Type.Object({ erasures: Type.Array(Erasure) }, { examples: [{ erasures: [] }] });

export const ListQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'At most this many, soonest due first.' })) });

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The erasure request\'s id.' }) });

export const HoldBody = Type.Object({
  reason: Type.String({ minLength: 3, maxLength: 500, description: 'Why the erasure is suspended (an investigation, a court order, a claim): audited.' }),
}, { additionalProperties: false, examples: [{ reason: 'Fraud investigation FR-2026-118: records needed until the case closes.' }] });
