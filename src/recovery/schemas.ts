/** Request and answer schemas of the account recovery routes. */
import Type from 'typebox';
import { NO_NUL } from '../platform/http/schemas.js';
import { PROOFS, RECOVERY_KINDS } from './matrix.js';
import { CUSTOMER_PROOFS } from './steps.js';
import { CHANNELS, type Channel } from '../access/policy.js';

const ISO = { format: 'date-time' } as const;

/** One of `values` (a string enum in the document, the union of them in TypeScript). */
const oneOf = <T extends string>(values: readonly T[], opts: { description?: string; examples: [T] }) => Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });
const STATES = ['initiated', 'verifying', 'verified', 'waiting', 'completed', 'cancelled', 'expired', 'rejected'] as const;
const EXAMPLE_ID = 'rcv_cxnymOAh3STeZiImZAHWEvLKMkMvg5R_lszF8md17N0';

export const RecoveryId = Type.String({
  pattern: '^rcv_[A-Za-z0-9_-]{43}$',
  description: 'The workflow\'s handle, from `POST /api/v1/auth/reset/initiate`. Keep it private to the person recovering: it names the workflow, and only proofs move it on.',
  examples: [EXAMPLE_ID],
});

export const Lost = oneOf(RECOVERY_KINDS, {
  description: 'What was lost: `password`, `pin` (the USSD PIN), `mfa` (every second factor) or `device` (a bound device).',
  examples: ['password'],
});

export const ProofName = oneOf(PROOFS, { examples: ['email_code'] });

export const CustomerProof = oneOf(CUSTOMER_PROOFS, {
  description: 'The proof this call is about (one per call). `branch_approval` is given by a bank operator, never here.',
  examples: ['email_code'],
});

export const State = oneOf(STATES, {
  description: '`initiated` (no proof yet), `verifying` (some given), `verified` (an alternative is met), `waiting` (lost second factors or a device: proved, taking effect at `waiting_until` unless cancelled), `completed` (the reset token was handed out), or ended: `cancelled`, `expired`, `rejected` (no alternative can be met any more, or an operator at a branch rejected it).',
  examples: ['initiated'],
});

const Option = Type.Object({
  proof: ProofName,
  attempts_left: Type.Integer({ minimum: 0, description: 'Wrong tries left for this proof in this workflow (3 in all).', examples: [3] }),
  available: Type.Boolean({ description: 'False for a proof the person cannot give through these routes: `branch_approval` is given by an operator at a branch, to whom the person reads `reference`.', examples: [true] }),
  destination: Type.Optional(Type.String({ description: 'Where the last code of this proof went, masked; present once a code was sent.', examples: ['a***@bank.example'] })),
});

const Proofs = Type.Object({
  given: Type.Array(ProofName, { description: 'The proofs given so far.', examples: [['email_code']] }),
  needed: Type.Integer({ minimum: 0, description: 'The fewest proofs still to give (0 once verified, or once the workflow has ended).', examples: [1] }),
  alternatives: Type.Array(Type.Array(ProofName), {
    description: 'Each set of proofs that together suffice for what was lost (the bank\'s setting; the same for every account).',
    examples: [[['email_code', 'sms_code'], ['email_code', 'security_questions'], ['sms_code', 'security_questions']]],
  }),
  options: Type.Array(Option, { description: 'Every proof the alternatives name, with its attempts left.' }),
});

const statusProperties = {
  state: State,
  lost: Lost,
  expires_at: Type.String({ ...ISO, description: 'The workflow ends as `expired` if not completed by then (`RECOVERY_TTL_MINUTES`, 30 by default).' }),
  proofs: Proofs,
  completed_at: Type.Optional(Type.String({ ...ISO, description: 'When the workflow completed.' })),
  waiting_until: Type.Optional(Type.String({ ...ISO, description: '`waiting` (lost second factors or a device, once proved): when the recovery takes effect, unless cancelled meanwhile (`RECOVERY_COOLING_OFF_HOURS`, 24 by default; `RECOVERY_COOLING_OFF_HOURS_STAFF`, 72, for staff accounts). Every contact of the account is told.' })),
  reference: Type.Optional(Type.String({
    pattern: '^[2-9A-HJKMNP-Z]{8}$',
    description: 'What to read to an operator at a branch, who checks an identity document and approves (`branch_approval`): present while an alternative holding a branch\'s approval can still be met.',
    examples: ['K7QM4XPD'],
  })),
};

/** A reset token, handed out once: when a lost password or PIN completes. */
const resetProperties = {
  reset_token: Type.Optional(Type.String({ description: 'Once a lost password or PIN workflow completes, this once: the reset token for `reset_with` (single use). When an operator\'s approval was the last proof, the workflow is `verified` and the next `status` or `verify-identity` with the `recovery_id` carries it.', examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ...'] })),
  reset_token_expires_in: Type.Optional(Type.Integer({ description: 'Seconds the reset token lives (`RESET_TOKEN_EXPIRE_MINUTES`, 10 by default).', examples: [600] })),
  reset_with: Type.Optional(Type.String({ description: 'The route that takes the reset token: `/api/v1/auth/reset/password` or `/api/v1/auth/reset/pin`.', examples: ['/api/v1/auth/reset/password'] })),
};

export const RecoveryStatus = Type.Object({ ...statusProperties, ...resetProperties }, { title: 'RecoveryStatus' });

export const RecoveryStarted = Type.Object({ recovery_id: RecoveryId, ...statusProperties }, { title: 'RecoveryStarted' });

export const RecoveryStep = Type.Object({
  ...statusProperties,
  sent: Type.Optional(Type.Object({
    proof: ProofName,
    destination: Type.String({ description: 'Where the code went, masked.', examples: ['a***@bank.example'] }),
    expires_in: Type.Integer({ description: 'Seconds the code stays valid.', examples: [300] }),
    resend_after: Type.Integer({ description: 'Seconds before another code may be asked for.', examples: [60] }),
  }, { description: 'After a code request: where the code went.' })),
  questions: Type.Optional(Type.Array(Type.Object({
    id: Type.String({ format: 'uuid', description: 'The question\'s id: answer it as `question_id`.' }),
    text: Type.String({ examples: ['What was the name of your first pet?'] }),
  }), { description: 'After a security-question request: the questions to answer (the same ones on every call).' })),
  ...resetProperties,
}, { title: 'RecoveryStep' });

export const InitiateBody = Type.Object({
  identifier: Type.String({
    minLength: 1, maxLength: 320, pattern: NO_NUL,
    description: 'The account as the person knows it: username, email address, or phone number in E.164 (`+254712345678`).',
    examples: ['amina.otieno'],
  }),
  lost: Lost,
}, { additionalProperties: false, examples: [{ identifier: 'amina.otieno', lost: 'password' }] });

export const VerifyBody = Type.Object({
  recovery_id: RecoveryId,
  proof: CustomerProof,
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[0-9A-Za-z \\-]*$', description: '`email_code`, `sms_code`: the 6 digits received (leave out to have a code sent). `totp`: the authenticator\'s code. `backup_code`: a backup code.', examples: ['048213'] })),
  answers: Type.Optional(Type.Array(Type.Object({
    question_id: Type.String({ format: 'uuid', description: 'The `id` of a question this workflow asked.' }),
    answer: Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL, examples: ['Nairobi West'] }),
  }, { additionalProperties: false }), { minItems: 1, maxItems: 5, description: '`security_questions`: an answer to each question asked (leave out to see the questions).' })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL, description: '`password`: the account\'s current password.', examples: ['Vt7#qLm2!xRp9$'] })),
  pin: Type.Optional(Type.String({ pattern: '^[0-9]{4,6}$', description: '`pin`: the USSD PIN.', examples: ['2580'] })),
}, { additionalProperties: false, examples: [{ recovery_id: EXAMPLE_ID, proof: 'email_code', code: '048213' }] });

const CancelToken = Type.String({
  pattern: '^rcx_[A-Za-z0-9_-]{43}$',
  description: 'The single-use token of a notice\'s "this was not me" link (the part after `#`).',
  examples: ['rcx_Q2hhbmdlIG1lOiB0aGlzIGlzIG5vdCBhIHJlYWwgdG9'],
});

export const CancelBody = Type.Object({
  recovery_id: Type.Optional(RecoveryId),
  cancel_token: Type.Optional(CancelToken),
}, { additionalProperties: false, description: 'Either `recovery_id` or `cancel_token`.', examples: [{ recovery_id: EXAMPLE_ID }] });

export const TokenBody = Type.Object({ cancel_token: CancelToken }, { additionalProperties: false });

export const CancelAnswerSchema = Type.Object({
  ...statusProperties,
  reported: Type.Optional(Type.Boolean({ description: 'A cancel by `cancel_token`: the bank was alerted.', examples: [true] })),
  recovery_locked_until: Type.Optional(Type.String({ ...ISO, description: 'A cancel by `cancel_token`: recovery is locked for the account until then (`RECOVERY_LOCK_HOURS`).' })),
}, { title: 'RecoveryCancelled' });

export const AccessPolicyBody = Type.Object({
  recovery_id: RecoveryId,
  channel: Type.Unsafe<Channel>({ type: 'string', enum: [...CHANNELS], description: 'The channel the new device signs in on (`mobile` for the app, `agent` for an agent\'s device).', examples: ['agent'] }),
  device_fingerprint: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL, description: 'The new device\'s fingerprint, as it sends it at sign-in; default: the `X-Device-Fingerprint` header.', examples: ['a3f1c9e2-agent-tablet-0042'] })),
}, { additionalProperties: false, examples: [{ recovery_id: EXAMPLE_ID, channel: 'agent', device_fingerprint: 'a3f1c9e2-agent-tablet-0042' }] });

export const RebindAnswerSchema = Type.Object({
  ...statusProperties,
  binding: Type.Union([Type.Object({
    id: Type.String({ format: 'uuid', description: 'The binding\'s id, as the administrators\' device-binding routes show it.' }),
    status: Type.Unsafe<'pending' | 'approved' | 'revoked'>({ type: 'string', enum: ['pending', 'approved', 'revoked'], description: '`pending` until an administrator approves it (`approved`: the device may sign in); `revoked`: refused.', examples: ['pending'] }),
    channel: Type.String({ examples: ['agent'] }),
  }), Type.Null()], { description: 'The new device\'s binding; null when none could be asked for (too many open requests).' }),
}, { title: 'RecoveryAccessPolicy' });

export const HandleBody = Type.Object({ recovery_id: RecoveryId }, { additionalProperties: false, examples: [{ recovery_id: EXAMPLE_ID }] });
