/**
 * Which assessment raises a security alert, and as what (pure: tested with frozen inputs).
 *
 * - **When**: the score reaches RISK_ALERT_SCORE (50), or a signal of RISK_ALERT_SIGNALS is raised
 *   whatever the score (the bank's alert triggers: more than 5 failed passwords in 15 minutes, failing
 *   second factors, an address failing on many accounts, impossible travel).
 * - **Rule**: the strongest indicator's signal (the heaviest; of equal weights, the first in
 *   RISK_SIGNALS order), `address_failing_many_accounts` named `credential_stuffing`.
 * - **Severity** from the score: below 30 `low`, below 60 `medium`, else `high`. `critical` is
 *   kept for what a person confirmed: the holder's "this was not me" (`not_me`).
 * - **One event, one alert** (the dedupe key): a session opened is its USER_LOGIN audit id; a
 *   burst is one alert per window (RISK_WINDOW_MINUTES, aligned to the clock): failures on an
 *   account, the account; credential stuffing, the client's network; a sign-in waiting for its
 *   second factor, the account and the network. Thirty failures in a window raise one alert.
 */
import type { RiskResponsesConfig } from '../../platform/config-risk.js';
import type { AlertInput, AlertSeverity, AssessedSignIn, RiskIndicator } from '../types.js';

export type AlertSettings = Pick<RiskResponsesConfig, 'alertScore' | 'alertSignals'> & { windowMinutes: number };

/** The severities' lower bounds on the score. */
export const SEVERITY_FROM_SCORE: readonly { min: number; severity: AlertSeverity }[] = [{ min: 60, severity: 'high' }, { min: 30, severity: 'medium' }, { min: 0, severity: 'low' }];

/** The rule an alert of this signal is raised under. */
export const ruleOf = (signal: RiskIndicator['signal']): string => (signal === 'address_failing_many_accounts' ? 'credential_stuffing' : signal);

export function severityOf(score: number): AlertSeverity {
  return SEVERITY_FROM_SCORE.find((s) => score >= s.min)!.severity;
}

/** The heaviest indicator (the first of equal weights: the evaluation lists them in RISK_SIGNALS order). */
function strongest(indicators: readonly RiskIndicator[]): RiskIndicator {
  return indicators.reduce((best, i) => (i.weight > best.weight ? i : best));
}

/**
 * One event, one alert. A failure burst is one alert per account (or, for credential stuffing,
 * per network) and window. A sign-in whose password was right is one alert per rule, account,
 * network and window, whether it stopped at the second factor or went through: the challenge and
 * the completed sign-in after it are one event, and two nodes seeing either agree on the key.
 */
function dedupeKey(e: AssessedSignIn, rule: string, windowMinutes: number): string {
  const window = Math.floor(e.at / (windowMinutes * 60_000));
  if (e.outcome === 'failed' && rule === 'credential_stuffing') return `credential_stuffing:${e.networkHash}:${window}`;
  const account = e.user?.uuid ?? 'unknown';
  if (e.outcome === 'failed') return `${rule}:${account}:${window}`;
  return `${rule}:${account}:${e.networkHash}:${window}`;
}

/** The alert an assessed sign-in raises, or null. */
export function alertFor(e: AssessedSignIn, s: AlertSettings): AlertInput | null {
  const { score, indicators, location } = e.assessment;
  if (indicators.length === 0) return null;
  if (score < s.alertScore && !indicators.some((i) => s.alertSignals.includes(i.signal))) return null;
  const rule = ruleOf(strongest(indicators).signal);
  return {
    rule, severity: severityOf(score),
    // Failures from an address failing on many accounts are about no one account; a right
    // password from it is about the account it opened (credential stuffing that succeeded).
    userId: rule === 'credential_stuffing' && e.outcome === 'failed' ? null : e.user?.uuid ?? null,
    auditId: e.auditId, channel: e.channel, ipHash: e.ipHash, location, score, indicators,
    dedupeKey: dedupeKey(e, rule, s.windowMinutes),
  };
}
