/**
 * The signals of a sign-in, as pure functions of what is known about it (`SignInFacts`): the
 * user's own history (`RiskProfile`), where the client is, and the recent failures around it.
 * Nothing here reads the database or the clock, so every rule is tested with frozen inputs.
 *
 * Rules of tolerance, because a bank's customers travel, change phones and ride mobile carriers
 * and VPNs that move their address across borders:
 * - history-based signals (device, country, network, travel, hour) need a history: the first
 *   sign-in of an account raises none of them, and `new_country` / `new_network` need a known
 *   set to be new against;
 * - a *usual* country (RISK_USUAL_COUNTRY_SIGNINS successful sign-ins from it) raises no location
 *   signal at all: a customer who works from Nairobi and Lisbon is not flagged flying between;
 * - internal addresses (the bank's own networks) are no country: they raise no location signal
 *   and do not count as the last place;
 * - a signal whose weight is 0 is off: it is not raised.
 */
import type { GeoLocation, GeoPlace } from '../geo/types.js';
import type { RiskConfig } from '../platform/config-risk.js';
import { RISK_SIGNALS, type RiskIndicator, type RiskSignal } from './types.js';
import type { RiskProfile } from './profile.js';
import { travel } from './travel.js';

/** "Different countries within one hour": the bank's rule for a hop. */
export const COUNTRY_HOP_MS = 3_600_000;

/** What the evaluation of one sign-in attempt knows. */
export interface SignInFacts {
  /** Unix ms. */
  now: number;
  location: GeoLocation | null;
  /** The keyed hash of the device fingerprint; null when the client sent none. */
  deviceHash: string | null;
  /** The account's history; null when it has none (or the attempt named no account). */
  profile: RiskProfile | null;
  /** Failed passwords on the account within the window, this attempt's included when it failed. */
  failedPasswords: number;
  /** Failed second factors on the account within the window. */
  failedSecondFactors: number;
  /** Distinct accounts that failed from the client's network within the window. */
  failingAccounts: number;
  /** Whether the (right) password is in the breach corpus; null: not checked. */
  breachedPassword: boolean | null;
}

export type SignalSettings = Pick<RiskConfig, 'weights' | 'maxTravelKmh' | 'usualCountrySignins' | 'failedPasswords' | 'failedSecondFactors' | 'stuffingAccounts' | 'windowMinutes' | 'hourHistory'>;

type Details = RiskIndicator['details'];
type Rule = (f: SignInFacts, s: SignalSettings) => Details | null;

/** The client's place when it is a country (not internal, not unknown). */
export function placeOf(location: GeoLocation | null): GeoPlace | null {
  return location !== null && !('internal' in location) ? location : null;
}

/** A country the user signs in from regularly: no location signal is raised for it. */
export function isUsualCountry(profile: RiskProfile | null, country: string, s: Pick<SignalSettings, 'usualCountrySignins'>): boolean {
  return (profile?.countries[country] ?? 0) >= s.usualCountrySignins;
}

const hasHistory = (p: RiskProfile | null): p is RiskProfile => p !== null && p.successCount > 0;

/** The place of this sign-in when a location rule may look at it: a country, not a usual one, with history. */
function unusualPlace(f: SignInFacts, s: SignalSettings): { place: GeoPlace; profile: RiskProfile } | null {
  const place = placeOf(f.location);
  if (place === null || !hasHistory(f.profile) || isUsualCountry(f.profile, place.country, s)) return null;
  return { place, profile: f.profile };
}

const RULES: Readonly<Record<RiskSignal, Rule>> = {
  new_device: (f) => {
    if (f.deviceHash === null || !hasHistory(f.profile) || f.profile.devices.includes(f.deviceHash)) return null;
    return { known_devices: f.profile.devices.length };
  },
  new_country: (f, s) => {
    const u = unusualPlace(f, s);
    const known = u ? Object.keys(u.profile.countries) : [];
    if (!u || known.length === 0 || known.includes(u.place.country)) return null;
    return { country: u.place.country, known_countries: known.length };
  },
  new_network: (f, s) => {
    const u = unusualPlace(f, s);
    if (!u || u.place.asn === undefined || u.profile.asns.length === 0 || u.profile.asns.includes(u.place.asn)) return null;
    return { asn: u.place.asn, country: u.place.country };
  },
  impossible_travel: (f, s) => {
    const u = unusualPlace(f, s);
    const last = u?.profile.lastLocated;
    if (!u || !last || last.latitude === null || last.longitude === null || u.place.latitude === undefined || u.place.longitude === undefined) return null;
    const t = travel(
      { latitude: last.latitude, longitude: last.longitude, accuracyKm: last.accuracyKm },
      last.at,
      { latitude: u.place.latitude, longitude: u.place.longitude, accuracyKm: u.place.accuracy_km },
      f.now,
    );
    if (t.speedKmh <= s.maxTravelKmh) return null;
    return { from_country: last.country, to_country: u.place.country, distance_km: Math.round(t.distanceKm), minutes: Math.round(t.elapsedMs / 60_000), speed_kmh: Math.round(t.speedKmh) };
  },
  country_hop: (f, s) => {
    const u = unusualPlace(f, s);
    const last = u?.profile.lastLocated;
    if (!u || !last || last.country === u.place.country || f.now - last.at >= COUNTRY_HOP_MS) return null;
    return { from_country: last.country, to_country: u.place.country, minutes: Math.round((f.now - last.at) / 60_000) };
  },
  failed_passwords: (f, s) => (f.failedPasswords > s.failedPasswords ? { failures: f.failedPasswords, window_minutes: s.windowMinutes } : null),
  failed_second_factors: (f, s) => (f.failedSecondFactors >= s.failedSecondFactors ? { failures: f.failedSecondFactors, window_minutes: s.windowMinutes } : null),
  unusual_hour: (f, s) => {
    if (f.profile === null || f.profile.successCount < s.hourHistory) return null;
    // An hour next to a usual one is usual too: summer time and a late train move habits by one.
    const hour = new Date(f.now).getUTCHours();
    const around = [23, 0, 1].map((d) => f.profile!.hours[(hour + d) % 24] ?? 0);
    return around.some((n) => n > 0) ? null : { hour_utc: hour };
  },
  address_failing_many_accounts: (f, s) => (f.failingAccounts > s.stuffingAccounts ? { accounts: f.failingAccounts, window_minutes: s.windowMinutes } : null),
  breached_password: (f) => (f.breachedPassword === true ? {} : null),
};

/** The indicators of a sign-in, in the order of RISK_SIGNALS, each with its configured weight. */
export function evaluateSignals(f: SignInFacts, s: SignalSettings): RiskIndicator[] {
  const raised: RiskIndicator[] = [];
  for (const signal of RISK_SIGNALS) {
    const weight = s.weights[signal];
    if (weight === 0) continue;
    const details = RULES[signal](f, s);
    if (details !== null) raised.push({ signal, weight, details });
  }
  return raised;
}
