/**
 * What a sign-in does about its risk assessment (issue 29, section 3): the *response policy*, a
 * list of rules an administrator edits (GET/PUT /api/v1/admin/risk/policy), each naming an action,
 * the channels it covers and when it applies (a score reached, or one of some signals raised).
 * Pure: `decide` is tested with frozen inputs; the store (store.ts) holds the policy in force.
 *
 * Actions, strongest first:
 * - `lock_account`: the account is locked for `account_lock_minutes` (the lockout's own lock, lifted
 *   by time or by an administrator's unlock) and this sign-in refused as a locked one;
 * - `refuse`: this sign-in is refused (403 RISK_TOO_HIGH), nothing else changes;
 * - `step_up`: a second factor is asked for even when the account has none enrolled (a one-time
 *   code to the email address or phone number on file); an enrolled factor is asked for anyway;
 * - `block_address`: the client's network is refused every sign-in for `address_block_minutes`
 *   (credential stuffing), before any password is compared, whatever the password. It applies to
 *   failed attempts too (the evaluation of a wrong password raises the stuffing signal): the only
 *   action that does.
 *
 * Of the rules that apply, every side effect happens (a lock, a block) and the strongest answer
 * wins. No rule applying: the sign-in goes on as without evaluation.
 */
import { CHANNELS, type Channel } from '../../access/policy.js';
import type { RiskResponsesConfig } from '../../platform/config-risk.js';
import type { RiskAssessment, RiskSignal } from '../types.js';

export const RISK_ACTIONS = ['step_up', 'refuse', 'lock_account', 'block_address'] as const;
export type RiskAction = (typeof RISK_ACTIONS)[number];

export interface RiskRule {
  action: RiskAction;
  /** The channels whose sign-ins it covers; empty: every channel. */
  channels: Channel[];
  /** It applies at this score or more (1 to 100); null: not by score. */
  min_score: number | null;
  /** It applies when any of these signals is raised; empty: not by signal. */
  signals: RiskSignal[];
}

export interface RiskPolicy {
  rules: RiskRule[];
  /** How long `lock_account` locks the account. */
  account_lock_minutes: number;
  /** How long `block_address` refuses the client's network. */
  address_block_minutes: number;
}

/** What the sign-in does: `answer` is the strongest applying action's (or `allow`), `blockAddress` a side effect. */
export interface RiskDecision {
  answer: 'allow' | 'step_up' | 'refuse' | 'lock_account';
  blockAddress: boolean;
  /** The indexes of the rules that applied (in the policy's list), for the audit entry. */
  rules: number[];
}

export const ALLOW: RiskDecision = Object.freeze({ answer: 'allow', blockAddress: false, rules: [] }) as RiskDecision;

const STRENGTH: Record<RiskDecision['answer'], number> = { allow: 0, step_up: 1, refuse: 2, lock_account: 3 };

/** Whether `rule` covers a sign-in on `channel` assessed as `risk`. */
export function applies(rule: RiskRule, risk: Pick<RiskAssessment, 'score' | 'indicators'>, channel: string): boolean {
  if (rule.channels.length > 0 && !rule.channels.includes(channel as Channel)) return false;
  if (rule.min_score !== null && risk.score >= rule.min_score) return true;
  return rule.signals.length > 0 && risk.indicators.some((i) => rule.signals.includes(i.signal));
}

/**
 * The decision for an assessment. `failed`: the password was wrong, so only `block_address`
 * matters (the attempt is refused anyway). `lock_account` is for right passwords only: on a wrong
 * one it would let anyone lock any account with one guess (the failed-attempt lockout, counted
 * per account, covers wrong passwords).
 */
export function decide(policy: RiskPolicy, risk: Pick<RiskAssessment, 'score' | 'indicators'>, channel: string, failed = false): RiskDecision {
  if (risk.indicators.length === 0) return ALLOW;
  let answer: RiskDecision['answer'] = 'allow';
  let blockAddress = false;
  const rules: number[] = [];
  policy.rules.forEach((rule, index) => {
    if (!applies(rule, risk, channel)) return;
    if (failed && rule.action !== 'block_address') return;
    rules.push(index);
    if (rule.action === 'block_address') blockAddress = true;
    else if (STRENGTH[rule.action] > STRENGTH[answer]) answer = rule.action;
  });
  return rules.length === 0 ? ALLOW : { answer, blockAddress, rules };
}

/** The signals that ask for a second factor whatever the score unless the administrators say otherwise: someone far away has the password. */
export const DEFAULT_STEP_UP_SIGNALS: readonly RiskSignal[] = Object.freeze(['impossible_travel', 'country_hop']);

/**
 * The policy in force until an administrator saves one, from the operator's settings:
 * RISK_STEP_UP_SCORE (and the travel signals) ask for a second factor, RISK_REFUSE_SCORE refuses,
 * and credential stuffing blocks the address for RISK_ADDRESS_BLOCK_MINUTES (0: never).
 */
export function defaultPolicy(s: Pick<RiskResponsesConfig, 'stepUpScore' | 'refuseScore' | 'addressBlockMinutes' | 'accountLockMinutes'>): RiskPolicy {
  const rules: RiskRule[] = [
    { action: 'step_up', channels: [], min_score: s.stepUpScore, signals: [...DEFAULT_STEP_UP_SIGNALS] },
  ];
  if (s.refuseScore !== null) rules.push({ action: 'refuse', channels: [], min_score: s.refuseScore, signals: [] });
  if (s.addressBlockMinutes > 0) rules.push({ action: 'block_address', channels: [], min_score: null, signals: ['address_failing_many_accounts'] });
  return { rules, account_lock_minutes: s.accountLockMinutes, address_block_minutes: Math.max(1, s.addressBlockMinutes) };
}

/** A policy's problems (each a sentence naming the rule), beyond what the request schema checks. */
export function policyProblems(policy: RiskPolicy): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  policy.rules.forEach((rule, i) => {
    if (rule.min_score === null && rule.signals.length === 0) out.push({ field: `rules[${i}]`, message: 'applies never: give min_score, signals, or both' });
    const unknown = rule.channels.filter((c) => !CHANNELS.includes(c));
    if (unknown.length > 0) out.push({ field: `rules[${i}].channels`, message: `names no channel: ${unknown.join(', ')} (the channels are ${CHANNELS.join(', ')})` });
  });
  return out;
}
