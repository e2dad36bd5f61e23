/**
 * The risk capability's shared vocabulary: what a sign-in's evaluation answers (a score and the
 * indicators that made it) and what an alert carries. The evaluation (signals.ts, score.ts) and
 * the responses (alerts, notices, the security team's webhook) meet only here.
 */
import type { GeoLocation } from '../geo/types.js';

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
