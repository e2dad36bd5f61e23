/**
 * The risk signals and score of sign-ins (issue 29, section 2), end to end on both databases: the
 * profile is merged by an upsert in the session's transaction (a parallel burst of one user's
 * sign-ins counts exactly), failures are counted from the audit trail and per client network.
 *
 * Clients reach the service through a proxy on loopback (TRUST_PROXY=loopback) that names them
 * in X-Forwarded-For; the test's own city and ASN databases (test/harness/mmdb.ts) put
 * 41.90.0.0/16 in Nairobi (AS33771, 20 km) and 85.138.0.0/16 in Lisbon (AS3243, 50 km). The clock
 * is frozen; each scenario starts an hour after the last, so the 15-minute windows never meet.
 * The response policy has no rule here: every sign-in goes through, whatever its score.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { RISK_PURGE_JOB } from '../../src/risk/module.js';
import type { AssessedSignIn } from '../../src/risk/types.js';
import type { UserRow } from '../../src/users/store.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { expectError, login, seedUser, STRONG_PASSWORD, withoutRiskResponses, WRONG_PASSWORD } from '../harness/fixtures.js';
import { writeNairobiLisbonDatabases } from '../harness/mmdb.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let t: TestApp;
let dir: string;
const heard: AssessedSignIn[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-risk-'));
  const { cityFile, asnFile } = writeNairobiLisbonDatabases(dir);
  // 09:00 UTC: the hour matters to no assertion here, but a fixed start keeps every run alike.
  const clock = new ManualClock(Date.UTC(2026, 11, 7, 9, 0));
  t = await createTestApp({
    clock,
    // More failures than the risk signal's 5 must reach the password check, so the lockout is raised.
    env: { TRUST_PROXY: 'loopback', GEOIP_CITY_DB: cityFile, GEOIP_ASN_DB: asnFile, MAX_LOGIN_ATTEMPTS: '20', MAX_CONCURRENT_SESSIONS: '20' },
  });
  t.s.risk.onAssessed(async (event) => {
    heard.push(event);
  });
  // The signals alone: a response policy with no rule lets every sign-in through (the responses'
  // own tests are in risk-policy.test.ts).
  await withoutRiskResponses(t.s);
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Entry { audit_id: string; risk_score: number | null; suspicious_indicators: unknown[]; location: Record<string, unknown> | null }

/** The user's audit entries of `eventType`, oldest first. */
async function entries(user: UserRow, eventType: 'USER_LOGIN' | 'FAILED_LOGIN_ATTEMPT' | 'MFA_REQUIRED'): Promise<Entry[]> {
  const page = await t.s.audit.query({ userId: user.uuid, eventType, limit: 100, offset: 0 });
  return (page.entries as Entry[]).reverse();
}

const scores = (es: Entry[]) => es.map((e) => [e.risk_score, e.suspicious_indicators]);
const from = (address: string, fingerprint?: string): Record<string, string> => ({ 'x-forwarded-for': address, ...(fingerprint ? { 'x-device-fingerprint': fingerprint } : {}) });

async function signInFrom(username: string, address: string, fingerprint?: string): Promise<void> {
  const res = await login(t.app, username, STRONG_PASSWORD, {}, from(address, fingerprint));
  expect(res.statusCode, res.body).toBe(200);
}

async function profileOf(user: UserRow): Promise<Record<string, unknown> | undefined> {
  const r = await sql<Record<string, unknown>>`SELECT success_count, devices, countries, array_to_json(asns) AS asns, hours, located_country FROM risk_profiles WHERE user_id = ${user.id}`.execute(t.s.db);
  return r.rows[0];
}

const nextScenario = () => t.clock.advance(HOUR);

describe('travel', () => {
  it('a sign-in from Nairobi then from Lisbon 20 minutes later: new country and network, impossible travel, a country hop; score 100 on the audit entry', async () => {
    nextScenario();
    const amina = await seedUser(t.s, 'risk.amina');
    await signInFrom('risk.amina', '41.90.12.7');
    t.clock.advance(20 * MIN);
    heard.length = 0;
    await signInFrom('risk.amina', '85.138.7.20');

    const logins = await entries(amina, 'USER_LOGIN');
    expect(scores(logins)).toEqual([
      [0, []], // the first sign-in: no history to compare with
      [100, [
        { signal: 'new_country', weight: 25, details: { country: 'PT', known_countries: 1 } },
        { signal: 'new_network', weight: 5, details: { asn: 3243, country: 'PT' } },
        { signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', distance_km: 6462, minutes: 20, speed_kmh: 19176 } },
        { signal: 'country_hop', weight: 30, details: { from_country: 'KE', to_country: 'PT', minutes: 20 } },
      ]],
    ]);
    expect(logins[1]!.location).toMatchObject({ country: 'PT', city: 'Lisbon' });
    // The listeners heard it, with the id of the USER_LOGIN entry that carries it.
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatchObject({ outcome: 'signed_in', user: { id: amina.id, uuid: amina.uuid, username: 'risk.amina' }, channel: 'web', auditId: logins[1]!.audit_id, at: t.clock.now() });
    expect(heard[0]!.assessment).toEqual({ score: 100, indicators: logins[1]!.suspicious_indicators, location: logins[1]!.location });
  });

  it('a new phone in a new country: new device, country and network (score 40); the bank\'s own network raises nothing', async () => {
    nextScenario();
    const baraka = await seedUser(t.s, 'risk.baraka');
    await signInFrom('risk.baraka', '41.90.30.1', 'phone-android-1');
    t.clock.advance(DAY);
    await signInFrom('risk.baraka', '85.138.30.1', 'phone-iphone-2');
    t.clock.advance(HOUR);
    await signInFrom('risk.baraka', '10.20.30.40', 'phone-iphone-2'); // internal: no country, no travel
    expect(scores(await entries(baraka, 'USER_LOGIN'))).toEqual([
      [0, []],
      [40, [
        { signal: 'new_device', weight: 10, details: { known_devices: 1 } },
        { signal: 'new_country', weight: 25, details: { country: 'PT', known_countries: 1 } },
        { signal: 'new_network', weight: 5, details: { asn: 3243, country: 'PT' } },
      ]],
      [0, []],
    ]);
    // The internal sign-in counted, but left the last located place (Lisbon) as it was.
    expect(await profileOf(baraka)).toMatchObject({ success_count: 3, countries: { KE: 1, PT: 1 }, asns: [3243, 33771], located_country: 'PT' });
    expect((await profileOf(baraka))!.devices).toHaveLength(2);
  });

  it('a user\'s usual second country raises nothing, even 20 minutes after the first', async () => {
    nextScenario();
    const esi = await seedUser(t.s, 'risk.esi');
    for (let day = 0; day < 3; day++) {
      await signInFrom('risk.esi', '41.90.40.1');
      t.clock.advance(DAY);
      await signInFrom('risk.esi', '85.138.40.1');
      t.clock.advance(DAY);
    }
    await signInFrom('risk.esi', '41.90.40.1');
    t.clock.advance(20 * MIN);
    heard.length = 0;
    await signInFrom('risk.esi', '85.138.40.1');
    const logins = await entries(esi, 'USER_LOGIN');
    expect(logins).toHaveLength(8);
    // The second sign-in ever (Lisbon, a day later) was a new country; the third (Nairobi) known; none since.
    expect(logins.map((e) => e.risk_score)).toEqual([0, 30, 0, 0, 0, 0, 0, 0]);
    expect(logins.at(-1)!.suspicious_indicators).toEqual([]);
    expect(heard).toEqual([]); // nothing raised: the listeners are not called
  });
});

describe('failures', () => {
  it('6 failed passwords in 15 minutes: the 6th failure and the right password after it carry failed_passwords', async () => {
    nextScenario();
    const chidi = await seedUser(t.s, 'risk.chidi');
    await signInFrom('risk.chidi', '41.90.50.1');
    t.clock.advance(HOUR);
    heard.length = 0;
    for (let i = 0; i < 6; i++) {
      expectError(await login(t.app, 'risk.chidi', WRONG_PASSWORD, {}, from('41.90.50.1')), 401, 'INVALID_CREDENTIALS');
      t.clock.advance(2 * MIN);
    }
    await t.s.risk.settled(); // the listeners of a failure run after its answer
    await signInFrom('risk.chidi', '41.90.50.1');
    const failed = { signal: 'failed_passwords', weight: 20, details: { failures: 6, window_minutes: 15 } };
    expect(scores(await entries(chidi, 'FAILED_LOGIN_ATTEMPT'))).toEqual([[0, []], [0, []], [0, []], [0, []], [0, []], [20, [failed]]]);
    expect(scores(await entries(chidi, 'USER_LOGIN'))).toEqual([[0, []], [20, [failed]]]);
    expect(heard.map((e) => [e.outcome, e.assessment.score, e.user?.username, e.auditId === null])).toEqual([
      ['failed', 20, 'risk.chidi', true], ['signed_in', 20, 'risk.chidi', false],
    ]);

    // 15 minutes after the first of them, five are left in the window: nothing.
    t.clock.advance(4 * MIN);
    await signInFrom('risk.chidi', '41.90.50.1');
    expect((await entries(chidi, 'USER_LOGIN')).at(-1)!.risk_score).toBe(0);
  });

  it('with the default lockout (5 attempts), the attempt after the lock is the 6th failure: it carries failed_passwords', async () => {
    // The lockout stops wrong passwords at 5, so attempts refused while locked count as failures too.
    const d = await createTestApp({ clock: t.clock, env: { TRUST_PROXY: 'loopback', GEOIP_CITY_DB: path.join(dir, 'city.mmdb'), GEOIP_ASN_DB: path.join(dir, 'asn.mmdb') } });
    try {
      nextScenario();
      const eze = await seedUser(d.s, 'risk.eze');
      for (let i = 0; i < 5; i++) expect((await login(d.app, 'risk.eze', WRONG_PASSWORD, {}, from('41.90.50.2'))).statusCode).not.toBe(200);
      const locked = await login(d.app, 'risk.eze', STRONG_PASSWORD, {}, from('41.90.50.2'));
      expect(locked.statusCode, locked.body).not.toBe(200);
      const page = await d.s.audit.query({ userId: eze.uuid, eventType: 'LOCKED_LOGIN_ATTEMPT', limit: 10, offset: 0 });
      expect((page.entries as Entry[]).map((e) => [e.risk_score, e.suspicious_indicators])).toEqual([
        [20, [{ signal: 'failed_passwords', weight: 20, details: { failures: 6, window_minutes: 15 } }]],
      ]);
    } finally {
      await d.close();
    }
  });

  it('failed second factors: three wrong codes, then the right one; the challenge and the sign-in carry the score', async () => {
    nextScenario();
    const dede = await seedUser(t.s, 'risk.dede');
    const first = await login(t.app, 'risk.dede', STRONG_PASSWORD, {}, from('41.90.60.1'));
    const { authenticator, setup } = await enrolTotp(t.app, t.clock, first.json<{ access_token: string }>().access_token);
    t.clock.advance(20 * MIN - setup.period * 1000); // 20 minutes after the sign-in from Nairobi

    // The password from Lisbon: the challenge (MFA_REQUIRED) carries the location signals.
    const password = expectError(await login(t.app, 'risk.dede', STRONG_PASSWORD, {}, from('85.138.60.1')), 401, '2FA_REQUIRED');
    const token = (password.details as { two_factor_token: string }).two_factor_token;
    const travel = [
      { signal: 'new_country', weight: 25, details: { country: 'PT', known_countries: 1 } },
      { signal: 'new_network', weight: 5, details: { asn: 3243, country: 'PT' } },
      { signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', distance_km: 6462, minutes: 20, speed_kmh: 19176 } },
      { signal: 'country_hop', weight: 30, details: { from_country: 'KE', to_country: 'PT', minutes: 20 } },
    ];
    expect(scores(await entries(dede, 'MFA_REQUIRED'))).toEqual([[100, travel]]);

    const verify = (code: string) => t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-login', payload: { two_factor_token: token, code }, headers: from('85.138.60.1') });
    for (let i = 0; i < 3; i++) expectError(await verify(authenticator.wrongCode(t.clock.now())), 401, 'TOTP_INVALID');
    const done = await verify(authenticator.code(t.clock.now()));
    expect(done.statusCode, done.body).toBe(200);
    // Evaluated again at the second step (the password step's request is gone): the same
    // places, and now the three failed codes.
    const logins = await entries(dede, 'USER_LOGIN');
    expect(scores(logins.slice(1))).toEqual([[100, [...travel, { signal: 'failed_second_factors', weight: 25, details: { failures: 3, window_minutes: 15 } }]]]);
  });

  it('50 accounts tried from one address: from the 21st the failures, and a right password from there, carry address_failing_many_accounts', async () => {
    nextScenario();
    const victims: UserRow[] = [];
    for (let i = 0; i < 50; i++) victims.push(await seedUser(t.s, `risk.stuffed${i}`));
    const fola = await seedUser(t.s, 'risk.fola');
    await signInFrom('risk.fola', '85.138.70.9');
    t.clock.advance(HOUR);
    heard.length = 0;
    for (const v of victims) {
      expectError(await login(t.app, v.username, WRONG_PASSWORD, {}, from('85.138.70.9')), 401, 'INVALID_CREDENTIALS');
      t.clock.advance(10_000);
    }
    await t.s.risk.settled();
    const stuffing = (accounts: number) => [35, [{ signal: 'address_failing_many_accounts', weight: 35, details: { accounts, window_minutes: 15 } }]];
    const each = await Promise.all(victims.map(async (v) => scores(await entries(v, 'FAILED_LOGIN_ATTEMPT'))[0]));
    expect(each.slice(0, 20)).toEqual(Array.from({ length: 20 }, () => [0, []]));
    expect(each.slice(20)).toEqual(Array.from({ length: 30 }, (_, i) => stuffing(21 + i)));

    // The one account whose password was right, from the same address.
    await signInFrom('risk.fola', '85.138.70.9');
    expect(scores(await entries(fola, 'USER_LOGIN')).at(-1)).toEqual(stuffing(50));
    // Each evaluation runs on its own: the listeners hear them in any order.
    expect(heard.filter((e) => e.outcome === 'failed').map((e) => e.user?.username).sort()).toEqual(victims.slice(20).map((v) => v.username).sort());
    // Another address of the same provider is not that client.
    t.clock.advance(MIN);
    await signInFrom('risk.fola', '85.138.70.10');
    expect(scores(await entries(fola, 'USER_LOGIN')).at(-1)).toEqual([0, []]);

    // Past the window the clean-up job deletes the failures, and the address is clean again.
    t.clock.advance(16 * MIN);
    await t.scheduler.runNow(RISK_PURGE_JOB);
    const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM risk_network_failures`.execute(t.s.db);
    expect(left.rows[0]!.n).toBe(0);
    await signInFrom('risk.fola', '85.138.70.9');
    expect(scores(await entries(fola, 'USER_LOGIN')).at(-1)).toEqual([0, []]);
  });
});

describe('the profile', () => {
  it('a parallel burst of one user\'s sign-ins counts each exactly once', async () => {
    nextScenario();
    const gift = await seedUser(t.s, 'risk.gift');
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => login(t.app, 'risk.gift', STRONG_PASSWORD, {}, from('41.90.80.1', `device-${i % 3}`))));
    expect(burst.map((r) => r.statusCode)).toEqual(Array.from({ length: 8 }, () => 200));
    const profile = await profileOf(gift);
    const hours = Array.from({ length: 24 }, (_, h) => (h === new Date(t.clock.now()).getUTCHours() ? 8 : 0));
    expect(profile).toMatchObject({ success_count: 8, countries: { KE: 8 }, asns: [33771], hours, located_country: 'KE' });
    expect([...(profile!.devices as string[])].sort()).toHaveLength(3);
    expect(await entries(gift, 'USER_LOGIN')).toHaveLength(8);
  });

  it('keeps at most 20 devices, most recent first', async () => {
    nextScenario();
    const hana = await seedUser(t.s, 'risk.hana');
    for (let i = 0; i < 25; i++) {
      await signInFrom('risk.hana', '41.90.90.1', `tablet-${i}`);
      t.clock.advance(MIN);
    }
    await signInFrom('risk.hana', '41.90.90.1', 'tablet-10'); // still known: no new_device
    expect((await entries(hana, 'USER_LOGIN')).at(-1)!.risk_score).toBe(0);
    t.clock.advance(MIN);
    await signInFrom('risk.hana', '41.90.90.1', 'tablet-0'); // pushed out by the 20 after it
    expect(scores(await entries(hana, 'USER_LOGIN')).at(-1)).toEqual([10, [{ signal: 'new_device', weight: 10, details: { known_devices: 20 } }]]);
    expect(((await profileOf(hana))!.devices as string[])).toHaveLength(20);
  });
});
