/**
 * The risk evaluation of sign-ins (src/risk): whether it runs, what each signal weighs in the
 * score, the bounds of the signals that count, and what follows an assessment (src/risk/responses:
 * the scores that alert the security team and tell the account holder, the "this was not me" link). Read by config.ts, the only module that reads
 * the environment; every problem stops start-up with the others, naming the setting.
 *
 * RISK_WEIGHTS changes some weights and keeps the defaults of the others:
 * `new_device=10,new_country=30,unusual_hour=0` (a weight of 0 turns the signal off).
 */
import { RISK_SIGNALS, type RiskSignal } from '../risk/types.js';

export type RiskWeights = Readonly<Record<RiskSignal, number>>;

/**
 * What each signal adds to the score (0 to 100) unless RISK_WEIGHTS says otherwise. A signal that
 * alone means someone else holds the password (travel no one can make, an address failing on
 * many accounts) weighs most; what a person's own life produces (a new phone, a café's network,
 * a late night) weighs little, so that only several together make a high score.
 */
export const DEFAULT_RISK_WEIGHTS: RiskWeights = Object.freeze({
  new_device: 10,
  new_country: 25,
  new_network: 5,
  impossible_travel: 40,
  country_hop: 30,
  failed_passwords: 20,
  failed_second_factors: 25,
  unusual_hour: 5,
  address_failing_many_accounts: 35,
  breached_password: 30,
});

export interface RiskConfig {
  /** RISK_EVALUATION: off, nothing is evaluated, kept or written on the audit trail. */
  enabled: boolean;
  weights: RiskWeights;
  /** RISK_MAX_TRAVEL_KMH: a faster great-circle speed from the last located sign-in is `impossible_travel`. */
  maxTravelKmh: number;
  /** RISK_USUAL_COUNTRY_SIGNINS: a country with this many successful sign-ins is usual (raises no location signal). */
  usualCountrySignins: number;
  /** RISK_FAILED_PASSWORDS: more failed passwords than this on the account within the window is `failed_passwords`. */
  failedPasswords: number;
  /** RISK_FAILED_SECOND_FACTORS: this many failed second factors on the account within the window is `failed_second_factors`. */
  failedSecondFactors: number;
  /** RISK_STUFFING_ACCOUNTS: more distinct accounts failing from one client network within the window is `address_failing_many_accounts`. */
  stuffingAccounts: number;
  /** RISK_WINDOW_MINUTES: the window of the three counts above. */
  windowMinutes: number;
  /** RISK_HOUR_HISTORY: the successful sign-ins a user needs before `unusual_hour` can be raised. */
  hourHistory: number;
  /** What follows an assessment (src/risk/responses): alerts to the security team, notices to the account holder. */
  responses: RiskResponsesConfig;
}

export interface RiskResponsesConfig {
  /** RISK_ALERT_SCORE: an assessment scoring this or more raises a security alert. */
  alertScore: number;
  /** RISK_ALERT_SIGNALS: signals that raise an alert whatever the score (the bank's own alert triggers: failures, stuffing, impossible travel). */
  alertSignals: readonly RiskSignal[];
  /** RISK_NOTIFY_SCORE: a successful sign-in (or one waiting for its second factor) scoring this or more is told to the account holder. */
  notifyScore: number;
  /** RISK_NOT_ME_URL: the address of this service's "this was not me" page as account holders reach it; unset: notices carry no link. */
  notMeUrl: string | undefined;
  /** RISK_NOT_ME_DAYS: how long a notice's "this was not me" link works. */
  notMeDays: number;
  /** RISK_STEP_UP_SCORE: until an administrator saves a response policy, a sign-in scoring this or more is asked for a second factor. */
  stepUpScore: number;
  /** RISK_REFUSE_SCORE: until an administrator saves a response policy, a sign-in scoring this or more is refused; null (unset): none is. */
  refuseScore: number | null;
  /** RISK_ADDRESS_BLOCK_MINUTES: until an administrator saves a response policy, how long credential stuffing blocks the client's network (0: never). */
  addressBlockMinutes: number;
  /** RISK_ACCOUNT_LOCK_MINUTES: how long a response policy's `lock_account` locks an account, until an administrator saves another. */
  accountLockMinutes: number;
}

/** The signals that alone raise an alert unless RISK_ALERT_SIGNALS says otherwise. */
export const DEFAULT_ALERT_SIGNALS: readonly RiskSignal[] = Object.freeze(['impossible_travel', 'failed_passwords', 'failed_second_factors', 'address_failing_many_accounts']);

/** RISK_ALERT_SIGNALS: signal names separated by commas, or `none`. */
export function parseAlertSignals(raw: string | undefined, problems: string[]): readonly RiskSignal[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_ALERT_SIGNALS;
  if (raw.trim() === 'none') return Object.freeze([]);
  const known = new Set<string>(RISK_SIGNALS);
  const list = [...new Set(raw.split(',').map((p) => p.trim()).filter(Boolean))];
  const bad = list.filter((s) => !known.has(s));
  if (bad.length > 0) problems.push(`RISK_ALERT_SIGNALS: ${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not a risk signal; the signals are ${RISK_SIGNALS.join(', ')} (or "none")`);
  return Object.freeze(list.filter((s) => known.has(s)) as RiskSignal[]);
}

/** RISK_NOT_ME_URL: an absolute http(s) address without a query or fragment (the token goes in the fragment). */
export function parseNotMeUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const example = 'https://auth.bank.example/security/not-me';
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    problems.push(`RISK_NOT_ME_URL must be an absolute address, such as ${example}`);
    return undefined;
  }
  if (!/^https?:$/.test(url.protocol) || url.hash !== '' || url.search !== '' || url.username !== '' || url.password !== '') {
    problems.push(`RISK_NOT_ME_URL must be an http(s) address without credentials, query or fragment, such as ${example}`);
    return undefined;
  }
  return url.toString();
}

function readResponses(opt: (name: string) => string | undefined, problems: string[], int: Int): RiskResponsesConfig {
  return {
    alertScore: int('RISK_ALERT_SCORE', 50, 1, 100),
    alertSignals: parseAlertSignals(opt('RISK_ALERT_SIGNALS'), problems),
    notifyScore: int('RISK_NOTIFY_SCORE', 40, 1, 100),
    notMeUrl: parseNotMeUrl(opt('RISK_NOT_ME_URL'), problems),
    notMeDays: int('RISK_NOT_ME_DAYS', 7, 1, 30),
    stepUpScore: int('RISK_STEP_UP_SCORE', 40, 1, 100),
    refuseScore: (opt('RISK_REFUSE_SCORE') ?? '').trim() === '' ? null : int('RISK_REFUSE_SCORE', 100, 1, 100),
    addressBlockMinutes: int('RISK_ADDRESS_BLOCK_MINUTES', 15, 0, 24 * 60),
    accountLockMinutes: int('RISK_ACCOUNT_LOCK_MINUTES', 30, 1, 24 * 60),
  };
}

type Int = (name: string, fallback: number, min: number, max: number) => number;
type Bool = (name: string, fallback: boolean) => boolean;

/** RISK_WEIGHTS: `signal=weight` pairs over the defaults; a bad pair is a problem naming it. */
export function parseRiskWeights(raw: string | undefined, problems: string[]): RiskWeights {
  const weights: Record<RiskSignal, number> = { ...DEFAULT_RISK_WEIGHTS };
  if (raw === undefined || raw.trim() === '') return Object.freeze(weights);
  const known = new Set<string>(RISK_SIGNALS);
  const seen = new Set<string>();
  for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([a-z_]+)\s*=\s*(\d{1,3})$/.exec(part);
    const key = m?.[1] ?? part.split('=')[0]!.trim();
    if (!known.has(key)) {
      problems.push(`RISK_WEIGHTS: "${key}" is not a risk signal; the signals are ${RISK_SIGNALS.join(', ')}`);
      continue;
    }
    const weight = m ? Number(m[2]) : NaN;
    if (!(weight >= 0 && weight <= 100)) {
      problems.push(`RISK_WEIGHTS: ${key} must be a whole number from 0 (off) to 100, as in ${key}=${DEFAULT_RISK_WEIGHTS[key as RiskSignal]} (got "${part}")`);
      continue;
    }
    if (seen.has(key)) problems.push(`RISK_WEIGHTS: ${key} is given twice`);
    seen.add(key);
    weights[key as RiskSignal] = weight;
  }
  return Object.freeze(weights);
}

export function readRiskEnv(opt: (name: string) => string | undefined, problems: string[], read: { int: Int; bool: Bool }): RiskConfig {
  const { int, bool } = read;
  return {
    enabled: bool('RISK_EVALUATION', true),
    weights: parseRiskWeights(opt('RISK_WEIGHTS'), problems),
    maxTravelKmh: int('RISK_MAX_TRAVEL_KMH', 1000, 100, 100_000),
    usualCountrySignins: int('RISK_USUAL_COUNTRY_SIGNINS', 3, 1, 1000),
    failedPasswords: int('RISK_FAILED_PASSWORDS', 5, 1, 1000),
    failedSecondFactors: int('RISK_FAILED_SECOND_FACTORS', 3, 1, 1000),
    stuffingAccounts: int('RISK_STUFFING_ACCOUNTS', 20, 2, 100_000),
    windowMinutes: int('RISK_WINDOW_MINUTES', 15, 1, 24 * 60),
    hourHistory: int('RISK_HOUR_HISTORY', 20, 1, 100_000),
    responses: readResponses(opt, problems, int),
  };
}
