/**
 * The risk capability's shared vocabulary: what a sign-in's evaluation answers (a score and the
 * indicators that made it) and what an alert carries. The evaluation (signals.ts, score.ts) and
 * the responses (alerts, notices, the security team's webhook) meet only here.
 */
import type { GeoLocation } from '../geo/types.js';
import type { Db } from '../platform/db/database.js';

/** Each signal the evaluation can raise; its weight in the score is configurable (RISK_WEIGHTS). */
export const RISK_SIGNALS = [
  'new_device', // a device fingerprint this user never signed in from
  'new_country', // a country outside the user's usual ones
  'new_network', // an autonomous system (ASN) the user never signed in from
  'impossible_travel', // the great-circle speed from the last successful sign-in above RISK_MAX_TRAVEL_KMH
  'country_hop', // another country than the last successful sign-in's, within an hour
  'failed_passwords', // more than 5 failed passwords on the account within 15 minutes
  'failed_second_factors', // repeated failed second factors on the account
  'unusual_hour', // an hour of the day at which this user (with enough history) never signs in
  'address_failing_many_accounts', // the client's address fails on many accounts (credential stuffing)
  'breached_password', // the password is in the operator's breach corpus
] as const;
export type RiskSignal = (typeof RISK_SIGNALS)[number];

/** One reason a score rose. `details` carry no personal data beyond country codes, network numbers, distances and counts. */
export interface RiskIndicator {
  signal: RiskSignal;
  /** Its contribution to the score (its configured weight). */
  weight: number;
  details: Record<string, string | number | boolean | null>;
}

/** A sign-in's evaluation: 0 (nothing unusual) to 100, and why. */
export interface RiskAssessment {
  score: number;
  indicators: RiskIndicator[];
  /** Where the client address is, when known (null: unknown; `{internal: true}`: a private network). */
  location: GeoLocation | null;
}

export type AlertSeverity = 'low' | 'medium' | 'high' | 'critical';

/** The severities, least first: `SECURITY_ALERT_MIN_SEVERITY` and the admin list's filter compare by this order. */
export const ALERT_SEVERITIES: readonly AlertSeverity[] = ['low', 'medium', 'high', 'critical'];

/** What raises an alert: the rule, whom and what it concerns. */
export interface AlertInput {
  /** The rule that raised it, e.g. `impossible_travel`, `failed_passwords`, `credential_stuffing`, `not_me`. */
  rule: string;
  severity: AlertSeverity;
  /** The account's public uuid, when the alert concerns one account. */
  userId: string | null;
  /** The audit entry of the event that raised it, when there is one. */
  auditId: string | null;
  channel: string | null;
  /** The keyed hash of the client's address (as sessions keep it), never the address. */
  ipHash: string | null;
  location: GeoLocation | null;
  score: number | null;
  indicators: RiskIndicator[];
  /**
   * One event raises one alert, however many nodes see it: the alert is recorded under this key
   * once (a unique index); a second raise with the same key is a no-op.
   */
  dedupeKey: string;
}

/**
 * The breach corpus the `breached_password` signal asks (the operator's imported Pwned Passwords
 * filter). Optional: without one the signal is off. Checked only for a password that proved right.
 */
export interface BreachedPasswords {
  isBreached(password: string): boolean;
}

/** How an evaluated sign-in attempt ended, when the listeners hear of it. */
export type AssessedOutcome =
  /** A session was opened: `auditId` is its USER_LOGIN entry, written in the transaction the listener is given. */
  | 'signed_in'
  /** The password was right and a second factor is asked for (the MFA_REQUIRED or MFA_SETUP_REQUIRED entry carries the score). */
  | 'second_factor_required'
  /** A wrong password (its FAILED_LOGIN_ATTEMPT entry carries the score): only the failure signals are evaluated. */
  | 'failed'
  /** A right password the response policy refused (RISK_SIGN_IN_REFUSED), locked (ACCOUNT_LOCKED) or whose network it blocked. */
  | 'refused';

/** What a listener of the sign-in's evaluation hears (src/signin/pipeline.ts calls them). */
export interface AssessedSignIn {
  outcome: AssessedOutcome;
  assessment: RiskAssessment;
  /** The account; null when the identifier named none (a failure). */
  user: { id: number; uuid: string; username: string } | null;
  channel: string;
  /** The keyed hash of the client's address, as sessions keep it. */
  ipHash: string;
  /** The keyed hash of the client's network (an IPv4 address, an IPv6 /64). */
  networkHash: string;
  /** The client's User-Agent as sent (at most 512 characters; '' when none): the notice describes the device from it. */
  userAgent: string;
  /** The audit entry that carries the assessment, when its id is known (USER_LOGIN); else null. */
  auditId: string | null;
  /** Unix milliseconds (the service's clock). */
  at: number;
}

/**
 * Called for every evaluated sign-in attempt that raised at least one indicator, after the audit
 * entry that carries the assessment is written. `db` is that entry's transaction for
 * `signed_in` (what the listener writes commits with the session, or not at all), else the
 * pool. An error it throws fails the sign-in: a listener that must not, catches its own.
 */
export type AssessmentListener = (event: AssessedSignIn, db: Db) => Promise<void>;
