/** Request and answer schemas of the risk response policy's administration. */
import Type from 'typebox';
import { CHANNELS } from '../../access/policy.js';
import { RISK_SIGNALS } from '../types.js';
import { RISK_ACTIONS } from './policy.js';

const enumOf = <T extends string>(values: readonly T[], description: string, example: T) => Type.Unsafe<T>({ type: 'string', enum: [...values], description, examples: [example] });

const Rule = Type.Object({
  action: enumOf(RISK_ACTIONS, '`step_up`: ask for a second factor, even of an account without one (a one-time code to the email address or phone number on file; refused when it has neither). `refuse`: 403 RISK_TOO_HIGH. `lock_account`: lock the account for `account_lock_minutes` (429 ACCOUNT_LOCKED; an administrator\'s unlock lifts it). `block_address`: refuse every sign-in from the client\'s network for `address_block_minutes` (429 ADDRESS_BLOCKED), before any password is compared; applies to failed attempts too.', 'step_up'),
  channels: Type.Array(enumOf(CHANNELS, 'A channel.', 'web'), { uniqueItems: true, maxItems: CHANNELS.length, description: 'The channels whose sign-ins the rule covers; empty: every channel.', examples: [['web', 'mobile']] }),
  min_score: Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), Type.Null()], { description: 'The rule applies at this risk score or more; null: not by score.', examples: [40] }),
  signals: Type.Array(enumOf(RISK_SIGNALS, 'A risk signal.', 'impossible_travel'), { uniqueItems: true, maxItems: RISK_SIGNALS.length, description: 'The rule applies when any of these signals is raised, whatever the score; empty: not by signal.', examples: [['impossible_travel', 'country_hop']] }),
}, { additionalProperties: false, description: 'One rule: an action, the channels it covers, and when it applies (a score reached, or a signal raised: either suffices).' });

const POLICY_FIELDS = {
  rules: Type.Array(Rule, { maxItems: 50, description: 'Every rule that applies to a sign-in acts: a lock or a block always happens, and of the answers the strongest wins (`lock_account`, then `refuse`, then `step_up`).' }),
  account_lock_minutes: Type.Integer({ minimum: 1, maximum: 1440, description: 'How long `lock_account` locks the account.', examples: [30] }),
  address_block_minutes: Type.Integer({ minimum: 1, maximum: 1440, description: 'How long `block_address` refuses the client\'s network.', examples: [15] }),
};

const EXAMPLE_POLICY = {
  rules: [
    { action: 'step_up', channels: [], min_score: 40, signals: ['impossible_travel', 'country_hop'] },
    { action: 'refuse', channels: ['ussd', 'agent'], min_score: 70, signals: [] },
    { action: 'block_address', channels: [], min_score: null, signals: ['address_failing_many_accounts'] },
  ],
  account_lock_minutes: 30,
  address_block_minutes: 15,
};

export const PolicyBody = Type.Object(POLICY_FIELDS, { additionalProperties: false, examples: [EXAMPLE_POLICY] });

export const PolicyView = Type.Object({
  ...POLICY_FIELDS,
  source: enumOf(['database', 'environment'] as const, '`database`: saved by an administrator; `environment`: the operator\'s defaults (RISK_STEP_UP_SCORE, RISK_REFUSE_SCORE, RISK_ADDRESS_BLOCK_MINUTES, RISK_ACCOUNT_LOCK_MINUTES), until one is saved.', 'database'),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it was saved; null for the defaults.' }),
  updated_by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The administrator who saved it (uuid); null for the defaults.' }),
}, { examples: [{ ...EXAMPLE_POLICY, source: 'database', updated_at: '2026-03-04T09:20:00.000Z', updated_by: '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e' }] });
