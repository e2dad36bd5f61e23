import { describe, expect, it } from 'vitest';
import { DEFAULT_RISK_WEIGHTS } from '../platform/config-risk.js';
import type { GeoLocation } from '../geo/types.js';
import type { RiskProfile } from './profile.js';
import { riskScore } from './score.js';
import { evaluateSignals, type SignalSettings, type SignInFacts } from './signals.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 11, 7, 9, 0); // 09:00 UTC
const SETTINGS: SignalSettings = Object.freeze({
  weights: DEFAULT_RISK_WEIGHTS, maxTravelKmh: 1000, usualCountrySignins: 3, failedPasswords: 5,
  failedSecondFactors: 3, stuffingAccounts: 20, windowMinutes: 15, hourHistory: 20,
});

const NAIROBI: GeoLocation = Object.freeze({ country: 'KE', asn: 33771, city: 'Nairobi', latitude: -1.2864, longitude: 36.8172, accuracy_km: 20 });
const LISBON: GeoLocation = Object.freeze({ country: 'PT', asn: 3243, city: 'Lisbon', latitude: 38.7223, longitude: -9.1393, accuracy_km: 50 });
const MOMBASA: GeoLocation = Object.freeze({ country: 'KE', asn: 33771, city: 'Mombasa', latitude: -4.0435, longitude: 39.6682, accuracy_km: 20 });

/** Ten sign-ins from Nairobi on one phone at 09:00, the last one at T0. */
function kenyan(over: Partial<RiskProfile> = {}): RiskProfile {
  const hours = Array.from({ length: 24 }, (_, h) => (h === 9 ? 10 : 0));
  return Object.freeze({
    successCount: 10, devices: ['phone-1'], countries: { KE: 10 }, asns: [33771], hours, lastAt: T0,
    lastLocated: { at: T0, country: 'KE', latitude: -1.2864, longitude: 36.8172, accuracyKm: 20 }, ...over,
  });
}

function facts(over: Partial<SignInFacts>): SignInFacts {
  return Object.freeze({
    now: T0 + 20 * MIN, location: NAIROBI, deviceHash: 'phone-1', profile: kenyan(),
    failedPasswords: 0, failedSecondFactors: 0, failingAccounts: 0, breachedPassword: null, ...over,
  });
}

const signals = (f: SignInFacts, s: SignalSettings = SETTINGS) => evaluateSignals(f, s).map((i) => i.signal);

describe('the signals of a sign-in', () => {
  it('the same phone from the same city at the usual hour raises nothing', () => {
    expect(evaluateSignals(facts({}), SETTINGS)).toEqual([]);
  });

  it('Nairobi then Lisbon 20 minutes later: new country, impossible travel and a country hop, with their details', () => {
    expect(evaluateSignals(facts({ location: LISBON }), SETTINGS)).toEqual([
      { signal: 'new_country', weight: 25, details: { country: 'PT', known_countries: 1 } },
      { signal: 'new_network', weight: 5, details: { asn: 3243, country: 'PT' } },
      { signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', distance_km: 6462, minutes: 20, speed_kmh: 19176 } },
      { signal: 'country_hop', weight: 30, details: { from_country: 'KE', to_country: 'PT', minutes: 20 } },
    ]);
  });

  it('Lisbon nine hours after Nairobi: a new country, but a flight can do that (no travel, no hop)', () => {
    expect(signals(facts({ location: LISBON, now: T0 + 9 * 60 * MIN }))).toEqual(['new_country', 'new_network']);
  });

  it('a country seen before but not yet usual raises no new_country, yet still a hop within the hour', () => {
    const profile = kenyan({ countries: { KE: 10, PT: 2 }, asns: [33771, 3243] });
    expect(signals(facts({ profile, location: LISBON }))).toEqual(['impossible_travel', 'country_hop']);
  });

  it('a usual second country (RISK_USUAL_COUNTRY_SIGNINS sign-ins) raises nothing, even 20 minutes after Nairobi', () => {
    const profile = kenyan({ countries: { KE: 10, PT: 3 }, asns: [33771] });
    expect(signals(facts({ profile, location: LISBON }))).toEqual([]);
  });

  it('a new phone in a new country: new device and new country', () => {
    expect(signals(facts({ location: LISBON, deviceHash: 'phone-2', now: T0 + 24 * 60 * MIN }))).toEqual(['new_device', 'new_country', 'new_network']);
  });

  it('a client without a fingerprint raises no device signal', () => {
    expect(signals(facts({ deviceHash: null }))).toEqual([]);
  });

  it('Nairobi to Mombasa (440 km) in 20 minutes within a usual country: no travel signal', () => {
    expect(signals(facts({ location: MOMBASA }))).toEqual([]);
  });

  it('the same journey for a user whose country is not yet usual is impossible travel, never a hop', () => {
    const profile = kenyan({ successCount: 2, countries: { KE: 2 } });
    expect(signals(facts({ profile, location: MOMBASA }))).toEqual(['impossible_travel']);
  });

  it('internal addresses are no country: no location signal, whatever the history', () => {
    expect(signals(facts({ location: { internal: true } }))).toEqual([]);
    expect(signals(facts({ location: null }))).toEqual([]);
  });

  it('without coordinates (a country database only) travel is not computed; the hop still is', () => {
    expect(signals(facts({ location: { country: 'PT' } }))).toEqual(['new_country', 'country_hop']);
  });

  it('the first sign-in of an account raises no history signal', () => {
    expect(signals(facts({ profile: null, location: LISBON, deviceHash: 'phone-9', now: Date.UTC(2026, 11, 7, 3) }))).toEqual([]);
    expect(signals(facts({ profile: kenyan({ successCount: 0 }), location: LISBON, deviceHash: 'phone-9' }))).toEqual([]);
  });

  it('a profile with no located sign-in yet has no country or network to be new against', () => {
    const profile = kenyan({ countries: {}, asns: [], lastLocated: null });
    expect(signals(facts({ profile, location: LISBON }))).toEqual([]);
  });

  it('failed passwords: more than RISK_FAILED_PASSWORDS (5) in the window', () => {
    expect(signals(facts({ failedPasswords: 5 }))).toEqual([]);
    expect(evaluateSignals(facts({ failedPasswords: 6 }), SETTINGS)).toEqual([{ signal: 'failed_passwords', weight: 20, details: { failures: 6, window_minutes: 15 } }]);
  });

  it('failed second factors: RISK_FAILED_SECOND_FACTORS (3) or more in the window', () => {
    expect(signals(facts({ failedSecondFactors: 2 }))).toEqual([]);
    expect(evaluateSignals(facts({ failedSecondFactors: 3 }), SETTINGS)).toEqual([{ signal: 'failed_second_factors', weight: 25, details: { failures: 3, window_minutes: 15 } }]);
  });

  it('an address failing on more than RISK_STUFFING_ACCOUNTS (20) accounts', () => {
    expect(signals(facts({ failingAccounts: 20 }))).toEqual([]);
    expect(evaluateSignals(facts({ failingAccounts: 21 }), SETTINGS)).toEqual([{ signal: 'address_failing_many_accounts', weight: 35, details: { accounts: 21, window_minutes: 15 } }]);
  });

  it('unusual hour: only with RISK_HOUR_HISTORY sign-ins, and an hour next to a usual one is usual', () => {
    const seasoned = kenyan({ successCount: 20 });
    expect(evaluateSignals(facts({ profile: seasoned, now: Date.UTC(2026, 11, 8, 3, 10) }), SETTINGS)).toEqual([{ signal: 'unusual_hour', weight: 5, details: { hour_utc: 3 } }]);
    expect(signals(facts({ profile: seasoned, now: Date.UTC(2026, 11, 8, 10, 10) }))).toEqual([]);
    expect(signals(facts({ profile: seasoned, now: Date.UTC(2026, 11, 8, 8, 10) }))).toEqual([]);
    expect(signals(facts({ profile: kenyan({ successCount: 19 }), now: Date.UTC(2026, 11, 8, 3, 10) }))).toEqual([]);
  });

  it('the unusual hour wraps around midnight', () => {
    const night = kenyan({ successCount: 20, hours: Array.from({ length: 24 }, (_, h) => (h === 23 ? 20 : 0)) });
    expect(signals(facts({ profile: night, now: Date.UTC(2026, 11, 8, 0, 30) }))).toEqual([]);
    expect(signals(facts({ profile: night, now: Date.UTC(2026, 11, 8, 1, 30) }))).toEqual(['unusual_hour']);
  });

  it('a breached password, when the corpus was asked', () => {
    expect(evaluateSignals(facts({ breachedPassword: true }), SETTINGS)).toEqual([{ signal: 'breached_password', weight: 30, details: {} }]);
    expect(signals(facts({ breachedPassword: false }))).toEqual([]);
  });

  it('a weight of 0 turns a signal off; another weight is carried on the indicator', () => {
    const weights = { ...DEFAULT_RISK_WEIGHTS, country_hop: 0, impossible_travel: 70 };
    expect(evaluateSignals(facts({ location: LISBON }), { ...SETTINGS, weights }).map((i) => [i.signal, i.weight])).toEqual([
      ['new_country', 25], ['new_network', 5], ['impossible_travel', 70],
    ]);
  });
});

describe('the score', () => {
  it('is the sum of the raised weights', () => {
    expect(riskScore(evaluateSignals(facts({ location: LISBON }), SETTINGS))).toBe(25 + 5 + 40 + 30);
    expect(riskScore([])).toBe(0);
  });

  it('is capped at 100', () => {
    const all = evaluateSignals(facts({ location: LISBON, deviceHash: 'phone-2', failedPasswords: 9, failingAccounts: 50, breachedPassword: true }), SETTINGS);
    expect(all.reduce((n, i) => n + i.weight, 0)).toBe(10 + 25 + 5 + 40 + 30 + 20 + 35 + 30);
    expect(riskScore(all)).toBe(100);
  });
});
