import { describe, expect, it } from 'vitest';
import type { AssessedSignIn, RiskIndicator } from '../types.js';
import { alertFor, severityOf } from './alert-rules.js';

const S = { alertScore: 50, alertSignals: ['impossible_travel', 'failed_passwords', 'failed_second_factors', 'address_failing_many_accounts'] as const, windowMinutes: 15 };
const AT = Date.UTC(2026, 11, 7, 9, 0);
const ind = (signal: RiskIndicator['signal'], weight: number): RiskIndicator => ({ signal, weight, details: {} });
function event(over: Partial<AssessedSignIn>, indicators: RiskIndicator[]): AssessedSignIn {
  return {
    outcome: 'signed_in', assessment: { score: Math.min(100, indicators.reduce((n, i) => n + i.weight, 0)), indicators, location: null },
    user: { id: 7, uuid: '0195a1b2-0000-7000-8000-000000000007', username: 'amina' }, channel: 'web', ipHash: 'ip', networkHash: 'net',
    userAgent: '', auditId: '0195a1b2-0000-7000-8000-0000000000aa', at: AT, ...over,
  };
}

describe('which assessment raises an alert', () => {
  it('a score at RISK_ALERT_SCORE raises one under the strongest signal; below it, only an alerting signal does', () => {
    expect(alertFor(event({}, [ind('new_country', 25), ind('country_hop', 30)]), S)).toMatchObject({ rule: 'country_hop', severity: 'medium', score: 55, dedupeKey: `country_hop:0195a1b2-0000-7000-8000-000000000007:net:${Math.floor(AT / 900_000)}` });
    expect(alertFor(event({}, [ind('new_country', 25), ind('new_device', 10)]), S)).toBeNull();
    expect(alertFor(event({ outcome: 'failed', auditId: null }, [ind('failed_passwords', 20)]), S)).toMatchObject({ rule: 'failed_passwords', severity: 'low', userId: '0195a1b2-0000-7000-8000-000000000007' });
    expect(alertFor(event({}, []), S)).toBeNull();
  });

  it('the heaviest indicator names the rule; of equal weights the first; stuffing concerns no account', () => {
    expect(alertFor(event({}, [ind('new_country', 25), ind('new_network', 5), ind('impossible_travel', 40), ind('country_hop', 30)]), S)).toMatchObject({ rule: 'impossible_travel', severity: 'high' });
    expect(alertFor(event({}, [ind('new_country', 30), ind('country_hop', 30)]), S)!.rule).toBe('new_country');
    const stuffing = alertFor(event({ outcome: 'failed', auditId: null }, [ind('address_failing_many_accounts', 35)]), S)!;
    expect(stuffing).toMatchObject({ rule: 'credential_stuffing', userId: null, dedupeKey: `credential_stuffing:net:${Math.floor(AT / 900_000)}` });
  });

  it('credential stuffing that succeeded: a right password from an address failing on many accounts is about that account, and not swallowed by the burst\'s alert', () => {
    const burst = alertFor(event({ outcome: 'failed', auditId: null, user: null }, [ind('address_failing_many_accounts', 35)]), S)!;
    for (const outcome of ['second_factor_required', 'signed_in'] as const) {
      const hit = alertFor(event({ outcome, auditId: outcome === 'signed_in' ? '0195a1b2-0000-7000-8000-0000000000aa' : null }, [ind('address_failing_many_accounts', 35)]), S)!;
      expect(hit).toMatchObject({ rule: 'credential_stuffing', userId: '0195a1b2-0000-7000-8000-000000000007' });
      expect(hit.dedupeKey).not.toBe(burst.dedupeKey);
    }
  });

  it('a suspicious sign-in with a second factor is one alert: the challenge and the completed sign-in share the key', () => {
    const challenge = alertFor(event({ outcome: 'second_factor_required', auditId: null }, [ind('impossible_travel', 40)]), S)!;
    const signedIn = alertFor(event({ outcome: 'signed_in', at: AT + 60_000 }, [ind('impossible_travel', 40)]), S)!;
    expect(signedIn.dedupeKey).toBe(challenge.dedupeKey);
  });

  it('a burst is one alert per window: the same key within it, another in the next', () => {
    const key = (at: number) => alertFor(event({ outcome: 'failed', auditId: null, at }, [ind('failed_passwords', 20)]), S)!.dedupeKey;
    expect(key(AT)).toBe(key(AT + 14 * 60_000));
    expect(key(AT)).not.toBe(key(AT + 15 * 60_000));
    const challenge = alertFor(event({ outcome: 'second_factor_required', auditId: null }, [ind('impossible_travel', 40)]), S)!;
    expect(challenge.dedupeKey).toBe(`impossible_travel:0195a1b2-0000-7000-8000-000000000007:net:${Math.floor(AT / 900_000)}`);
  });

  it('severity: below 30 low, below 60 medium, else high', () => {
    expect([0, 29, 30, 59, 60, 100].map(severityOf)).toEqual(['low', 'low', 'medium', 'medium', 'high', 'high']);
  });
});
