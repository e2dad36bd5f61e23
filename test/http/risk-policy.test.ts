/**
 * The risk response policy (issue 29, section 3), end to end on both databases: what a sign-in
 * does about its score and signals, by rule and channel, as administrators set it (audited).
 *
 * - the defaults (RISK_* settings): a second factor for a risky sign-in even of an account without
 *   one (a code to a contact on file; none on file: 403 RISK_TOO_HIGH; a set-up due: contact-based
 *   factors only), the travel signals alone asking for one;
 * - `refuse` (403 RISK_TOO_HIGH) on one channel and not on another; `lock_account` (429
 *   ACCOUNT_LOCKED, the right password too, until an administrator unlocks); `block_address`
 *   (credential stuffing: 429 ADDRESS_BLOCKED for right and wrong passwords alike, before any
 *   comparison, until the block ends);
 * - the administration: read, replace (validated, audited with before and after), back to the
 *   defaults, and refused without `policies.manage`.
 *
 * Clients reach the service through a proxy on loopback naming them in X-Forwarded-For; the test's
 * city and ASN databases put 41.90.0.0/16 in Nairobi and 85.138.0.0/16 in Lisbon. Frozen clock;
 * each scenario an hour after the last, so the 15-minute windows never meet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { clientNetwork } from '../../src/policy/network.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { writeNairobiLisbonDatabases } from '../harness/mmdb.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const NAIROBI = '41.90.12.7';
const LISBON = '85.138.7.20';
const POLICY = '/api/v1/admin/risk/policy';

let t: TestApp;
let dir: string;
let smtp: TestSmtp;
let admin: { uuid: string };
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-risk-policy-'));
  const { cityFile, asnFile } = writeNairobiLisbonDatabases(dir);
  smtp = await startSmtp();
  t = await createTestApp({
    clock: new ManualClock(Date.UTC(2026, 11, 8, 9, 0)),
    env: {
      TRUST_PROXY: 'loopback', GEOIP_CITY_DB: cityFile, GEOIP_ASN_DB: asnFile, MAX_LOGIN_ATTEMPTS: '100', MAX_CONCURRENT_SESSIONS: '20',
      SESSION_INACTIVITY_MINUTES: '60', SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', MFA_REQUIRED_ROLES: 'staff',
    },
  });
  admin = await seedUser(t.s, 'policy.admin', { roles: ['admin'] });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

const nextScenario = () => t.clock.advance(HOUR);
const from = (address: string): Record<string, string> => ({ 'x-forwarded-for': address, 'x-device-fingerprint': `device-${address}` });
/** A fresh sign-in of the administrator (the clock moves hours between scenarios). */
const adminToken = async () => (await signIn(t.app, 'policy.admin')).access_token;
const get = async () => t.app.inject({ method: 'GET', url: POLICY, headers: bearer(await adminToken()) });
const put = async (body: unknown, token?: string) => t.app.inject({ method: 'PUT', url: POLICY, headers: bearer(token ?? (await adminToken())), payload: body as object });
const reset = async () => t.app.inject({ method: 'DELETE', url: POLICY, headers: bearer(await adminToken()) });
const rule = (action: string, r: { channels?: string[]; min_score?: number | null; signals?: string[] }) => ({ action, channels: r.channels ?? [], min_score: r.min_score ?? null, signals: r.signals ?? [] });
const policy = (...rules: object[]) => ({ rules, account_lock_minutes: 30, address_block_minutes: 15 });
const audited = (event: 'RISK_POLICY_UPDATED' | 'RISK_SIGN_IN_REFUSED' | 'ACCOUNT_LOCKED' | 'RISK_ADDRESS_BLOCKED' | 'FAILED_LOGIN_ATTEMPT', userId?: string) => {
  let q = t.s.database.db.selectFrom('audit_log').select(['user_id', 'details']).where('event_type', '=', event);
  if (userId) q = q.where('user_id', '=', userId);
  return q.orderBy('timestamp').execute();
};

/** A failure from `address` on the `i`th account, as another node records it (keyed hashes as the service keeps them). */
function failureRow(address: string, i: number) {
  return { network_hash: t.s.ipHasher.hex(clientNetwork(address)), account_hash: `stuffed-account-${i}`, failed_at: new Date(t.clock.now()) };
}

/** A customer who signed in from Nairobi; 20 minutes later. */
async function inNairobi(opts: { email?: boolean } = {}) {
  const username = `policy.customer${++n}`;
  const user = await seedUser(t.s, username, { email: opts.email === false ? undefined : `${username}@bank.example` });
  const first = await login(t.app, username, STRONG_PASSWORD, {}, from(NAIROBI));
  expect(first.statusCode, first.body).toBe(200);
  t.clock.advance(20 * MIN);
  return { user, username };
}

describe('the defaults', () => {
  it('read as the operator\'s settings until an administrator saves a policy', async () => {
    const res = await get();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      rules: [
        rule('step_up', { min_score: 40, signals: ['impossible_travel', 'country_hop'] }),
        rule('block_address', { signals: ['address_failing_many_accounts'] }),
      ],
      account_lock_minutes: 30, address_block_minutes: 15, source: 'environment', updated_at: null, updated_by: null,
    });
  });

  it('a sign-in from Lisbon 20 minutes after Nairobi, of an account without a factor: 2FA_REQUIRED with a code to the email on file', async () => {
    nextScenario();
    const { username } = await inNairobi();
    const res = expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(LISBON)), 401, '2FA_REQUIRED');
    expect(res.details).toMatchObject({ methods: ['email'], reason: 'unusual_sign_in' });
  });

  it('the same without any contact on file: 403 RISK_TOO_HIGH (no_second_factor), audited', async () => {
    nextScenario();
    const { username, user } = await inNairobi({ email: false });
    const res = expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(LISBON)), 403, 'RISK_TOO_HIGH');
    expect(res.details).toMatchObject({ reason: 'no_second_factor' });
    expect(await audited('RISK_SIGN_IN_REFUSED', user.uuid)).toEqual([{ user_id: user.uuid, details: expect.objectContaining({ reason: 'no_second_factor' }) }]);
  });

  it('an account that must set up a factor is offered only the contact-based ones: the password alone cannot enrol an authenticator app, nor a passkey (400 MFA_METHOD_UNAVAILABLE)', async () => {
    nextScenario();
    const { username, user } = await inNairobi();
    // Made staff since (MFA_REQUIRED_ROLES here): the next sign-in must set up a factor.
    await t.s.database.db.transaction().execute((trx) => t.s.users.setRoles(trx, user.id, ['staff']));
    const res = expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(LISBON)), 403, 'MFA_SETUP_INCOMPLETE');
    expect(res.details).toMatchObject({ setup_methods: ['email'], reason: 'unusual_sign_in' });
    // Nor can it set the security questions that back an MFA reset: it proves only the password.
    const pool = (await t.s.securityQuestions.pool()).slice(0, 3);
    const answers = pool.map((q, i) => ({ question_id: q.id, answer: ['Simba', 'Kisumu', 'Mango'][i]! }));
    const token = (res.details as { two_factor_token: string }).two_factor_token;
    const planted = await t.app.inject({ method: 'POST', url: '/api/v1/auth/security-questions/setup', headers: from(LISBON), payload: { answers, two_factor_token: token } });
    expectError(planted, 401, 'TOKEN_INVALID');
    expect(await t.s.database.db.selectFrom('user_security_answers').select('question_id').where('user_id', '=', user.id).execute()).toEqual([]);
    const passkey = await t.app.inject({ method: 'POST', url: '/api/v1/passkeys/registration/options', headers: from(LISBON), payload: { two_factor_token: token } });
    expectError(passkey, 400, 'MFA_METHOD_UNAVAILABLE');
  });

  it('an account with an enrolled factor is asked for it, as always', async () => {
    nextScenario();
    const username = `policy.customer${++n}`;
    await seedUser(t.s, username, { email: `${username}@bank.example` });
    const first = await login(t.app, username, STRONG_PASSWORD, {}, { 'x-forwarded-for': NAIROBI }); // no fingerprint: the harness enrols without one
    const { setup } = await enrolTotp(t.app, t.clock, (first.json() as { access_token: string }).access_token);
    t.clock.advance(20 * MIN - setup.period * 1000);
    const res = expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(LISBON)), 401, '2FA_REQUIRED');
    expect((res.details as { methods: string[] }).methods).toContain('totp');
    expect(res.details).not.toHaveProperty('reason');
  });
});

describe('rules by channel, and their actions', () => {
  it('refuse on the web only: Lisbon is refused on the web (403 RISK_TOO_HIGH, audited, alerted) and asked for nothing more on mobile', async () => {
    nextScenario();
    expect((await put(policy(rule('refuse', { channels: ['web'], min_score: 50 })))).statusCode).toBe(200);
    const { username, user } = await inNairobi();
    const refused = expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(LISBON)), 403, 'RISK_TOO_HIGH');
    expect(refused.details).toMatchObject({ reason: 'score' });
    expect(await audited('RISK_SIGN_IN_REFUSED', user.uuid)).toEqual([{ user_id: user.uuid, details: expect.objectContaining({ reason: 'score', rules: [0] }) }]);
    const alerts = await t.s.database.db.selectFrom('security_alerts').select('rule').where('user_uuid', '=', user.uuid).execute();
    expect(alerts).toEqual([{ rule: 'impossible_travel' }]);
    // The holder is told: someone has the password.
    await t.s.riskResponses.settled();
    const told = smtp.to(`${username}@bank.example`);
    expect(told.map((m) => m.subject)).toEqual(['A sign-in with your password was refused']);
    expect(told[0]!.text).toContain('Lisbon, Portugal');
    const mobile = await login(t.app, username, STRONG_PASSWORD, { channel: 'mobile', device_fingerprint: 'policy-phone-1' }, { 'x-forwarded-for': LISBON });
    expect(mobile.statusCode, mobile.body).toBe(200);
  });

  it('lock_account on impossible travel: 429 ACCOUNT_LOCKED, then the right password from home too, until an administrator unlocks', async () => {
    nextScenario();
    expect((await put(policy(rule('lock_account', { signals: ['impossible_travel'] })))).statusCode).toBe(200);
    const { username, user } = await inNairobi();
    expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(LISBON)), 429, 'ACCOUNT_LOCKED');
    expectError(await login(t.app, username, STRONG_PASSWORD, {}, from(NAIROBI)), 429, 'ACCOUNT_LOCKED');
    expect(await audited('ACCOUNT_LOCKED', user.uuid)).toEqual([{ user_id: user.uuid, details: expect.objectContaining({ reason: 'risk', rules: [0] }) }]);
    // The password and the PIN alike: a lock on the web must not leave the USSD PIN open.
    const counters = await t.s.database.db.selectFrom('login_attempts').select(['subject_key', 'locked_until']).where('subject_key', 'in', [`u:${user.id}`, `p:u:${user.id}`]).orderBy('subject_key').execute();
    expect(counters.map((c) => [c.subject_key, c.locked_until !== null && new Date(c.locked_until).getTime() > t.clock.now()])).toEqual([[`p:u:${user.id}`, true], [`u:${user.id}`, true]]);
    const unlock = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/unlock`, headers: bearer(await adminToken()) });
    expect(unlock.statusCode, unlock.body).toBe(200);
    expect((await login(t.app, username, STRONG_PASSWORD, {}, from(NAIROBI))).statusCode).toBe(200);
  });

  it('block_address: from the 21st failing account the network is refused, right password or wrong, with one answer and nothing compared, until the block ends', async () => {
    nextScenario();
    expect((await reset()).statusCode).toBe(200); // the defaults block stuffing networks
    const victim = await seedUser(t.s, `policy.victim${++n}`);
    const stuffer = '198.51.100.90';
    const codes: string[] = [];
    for (let i = 0; i < 22; i++) codes.push((await login(t.app, `policy.stuffed.${n}.${i}`, WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer })).json<{ error_code: string }>().error_code);
    expect(codes).toEqual([...Array<string>(20).fill('INVALID_CREDENTIALS'), 'ADDRESS_BLOCKED', 'ADDRESS_BLOCKED']);
    expect(await audited('RISK_ADDRESS_BLOCKED')).toHaveLength(1);

    const right = await login(t.app, victim.username, STRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer });
    const wrong = await login(t.app, victim.username, WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer });
    const body = (r: typeof right) => ({ ...(r.json() as { details: object }), details: { ...(r.json() as { details: Record<string, unknown> }).details, request_id: 'x' } });
    expect([right.statusCode, wrong.statusCode]).toEqual([429, 429]);
    expect(body(right)).toEqual(body(wrong));
    expect(right.headers['retry-after']).toBe(String(15 * 60));
    expect(await audited('FAILED_LOGIN_ATTEMPT', victim.uuid)).toEqual([]); // refused before any comparison
    // Another address is not blocked.
    expect((await login(t.app, victim.username, STRONG_PASSWORD, {}, { 'x-forwarded-for': '198.51.100.91' })).statusCode).toBe(200);
    // The block ends; the failures have left the window too.
    t.clock.advance(16 * MIN);
    expect((await login(t.app, victim.username, STRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer })).statusCode).toBe(200);
  });

  it('threat: a burst of failures crossing the threshold at once blocks the network twice — recorded and audited once', async () => {
    nextScenario();
    expect((await reset()).statusCode).toBe(200);
    const stuffer = '198.51.100.150';
    const blocksBefore = (await audited('RISK_ADDRESS_BLOCKED')).length;
    for (let i = 0; i < 18; i++) expectError(await login(t.app, `policy.burst.${i}`, WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer }), 401, 'INVALID_CREDENTIALS');
    // Eight accounts at once take the network from 18 failing accounts to 26: the 21st blocks it.
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => login(t.app, `policy.burst.${18 + i}`, WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer })));
    const codes = burst.map((r) => r.json<{ error_code: string }>().error_code);
    expect(codes.every((c) => c === 'INVALID_CREDENTIALS' || c === 'ADDRESS_BLOCKED'), codes.join()).toBe(true);
    expect(codes).toContain('ADDRESS_BLOCKED');
    expect(await audited('RISK_ADDRESS_BLOCKED')).toHaveLength(blocksBefore + 1);
    const network = t.s.ipHasher.hex(clientNetwork(stuffer));
    expect(await t.s.database.db.selectFrom('risk_address_blocks').select('network_hash').where('network_hash', '=', network).execute()).toHaveLength(1);
    expectError(await login(t.app, 'policy.burst.after', WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer }), 429, 'ADDRESS_BLOCKED');
  });
});

describe('a lock and a block that both apply', () => {
  it('threat: a right password from a stuffing network tells itself apart by its answer — both happen, and the answer is the block\'s', async () => {
    nextScenario();
    expect((await put(policy(rule('block_address', { signals: ['address_failing_many_accounts'] }), rule('lock_account', { signals: ['address_failing_many_accounts'] })))).statusCode).toBe(200);
    const victim = await seedUser(t.s, `policy.both${++n}`);
    const stuffer = '198.51.100.120';
    // Failures recorded as if from other nodes: this node has not blocked the network yet.
    for (let i = 0; i < 21; i++) {
      const f = failureRow(stuffer, i);
      await sql`INSERT INTO risk_network_failures (network_hash, account_hash, failed_at) VALUES (${f.network_hash}, ${f.account_hash}, ${f.failed_at})`.execute(t.s.db);
    }
    const right = await login(t.app, victim.username, STRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer });
    expectError(right, 429, 'ADDRESS_BLOCKED');
    expect(await audited('ACCOUNT_LOCKED', victim.uuid)).toEqual([{ user_id: victim.uuid, details: expect.objectContaining({ reason: 'risk' }) }]);
    expectError(await login(t.app, victim.username, WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer }), 429, 'ADDRESS_BLOCKED');
    expect((await reset()).statusCode).toBe(200);
  });
});

describe('administration', () => {
  it('a policy is validated, saved, audited with what it replaced, and the defaults come back on DELETE', async () => {
    const never = expectError(await put(policy(rule('refuse', {}))), 422, 'VALIDATION_ERROR');
    expect(never.details).toMatchObject({ fields: [expect.objectContaining({ field: 'rules[0]' })] });
    expectError(await put(policy(rule('refuse', { channels: ['fax'], min_score: 50 }))), 422, 'VALIDATION_ERROR');
    expectError(await put(policy(rule('refuse', { signals: ['velocity'] }))), 422, 'VALIDATION_ERROR');
    expectError(await put(policy(rule('shrug', { min_score: 50 }))), 422, 'VALIDATION_ERROR');
    expectError(await put({ ...policy(), account_lock_minutes: 0 }), 422, 'VALIDATION_ERROR');

    t.clock.advance(1000); // the trail orders by time
    const before = (await get()).json() as { rules: unknown[] };
    const next = policy(rule('step_up', { channels: ['web', 'mobile'], min_score: 30 }), rule('refuse', { channels: ['ussd'], min_score: 60 }));
    const saved = await put(next);
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toEqual({ ...next, source: 'database', updated_at: new Date(t.clock.now()).toISOString(), updated_by: admin.uuid });
    expect((await get()).json()).toEqual(saved.json());
    const updates = await audited('RISK_POLICY_UPDATED');
    expect(updates.at(-1)).toEqual({ user_id: admin.uuid, details: { before: expect.objectContaining({ rules: before.rules }), after: next, reset_to_defaults: false } });

    t.clock.advance(1000); // the trail orders by time
    const back = await reset();
    expect(back.json()).toMatchObject({ source: 'environment', updated_by: null });
    expect((await audited('RISK_POLICY_UPDATED')).at(-1)).toEqual({ user_id: admin.uuid, details: { before: next, after: null, reset_to_defaults: true } });
  });

  it('threat: concurrent saves lose an administrator\'s change from the trail — a burst of eight saves is audited eight times, each "before" the "after" of the save before it', async () => {
    t.clock.advance(1000);
    const token = await adminToken();
    const start = ((await get()).json() as { rules: unknown[] }).rules;
    const count = (await audited('RISK_POLICY_UPDATED')).length;
    const bodies = Array.from({ length: 8 }, (_, i) => policy(rule('refuse', { channels: ['ussd'], min_score: 50 + i })));
    const saved = await Promise.all(bodies.map((b) => put(b, token)));
    expect(saved.map((r) => r.statusCode)).toEqual(Array<number>(8).fill(200));
    const entries = (await audited('RISK_POLICY_UPDATED')).slice(count).map((e) => e.details as { before: { rules: unknown[] }; after: { rules: unknown[] } });
    expect(entries).toHaveLength(8);
    // Serialised: the saves form one chain from the policy before the burst to the one in force now.
    // Key order aside (jsonb keeps its own): the rules as one comparable string.
    const key = (rules: unknown[]) => JSON.stringify(rules, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
    const next = new Map(entries.map((e) => [key(e.before.rules), key(e.after.rules)]));
    expect(next.size).toBe(8); // no two saves started from the same policy
    let at = key(start);
    for (let i = 0; i < 8; i++) at = next.get(at) ?? 'broken chain';
    expect(at).toBe(key(((await get()).json() as { rules: unknown[] }).rules));
    expect((await reset()).statusCode).toBe(200);
  });

  it('refused without policies.manage: 403 PERMISSION_DENIED, nothing changes', async () => {
    await seedUser(t.s, 'policy.teller');
    const teller = (await signIn(t.app, 'policy.teller')).access_token;
    const count = (await audited('RISK_POLICY_UPDATED')).length;
    expectError(await put(policy(), teller), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'GET', url: POLICY, headers: bearer(teller) }), 403, 'PERMISSION_DENIED');
    expect(await audited('RISK_POLICY_UPDATED')).toHaveLength(count);
  });
});

describe('two nodes on one database', () => {
  const nodes = useTwoNodes({ env: { TRUST_PROXY: 'loopback', MAX_LOGIN_ATTEMPTS: '100' } });

  it('threat: a stuffing network blocked on one node is let in by another — a block on node A refuses the right password on node B before any comparison; audited once', async () => {
    const { a, b } = nodes;
    const victim = await seedUser(a.s, 'nodes.victim');
    const stuffer = '203.0.113.66';
    const heard = new Promise<void>((resolve) => b.s.database.bus.subscribe((e) => e.type === 'risk-address.blocked' && resolve()));
    const codes: string[] = [];
    for (let i = 0; i < 21; i++) codes.push((await login(a.app, `nodes.stuffed.${i}`, WRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer })).json<{ error_code: string }>().error_code);
    expect(codes.at(-1)).toBe('ADDRESS_BLOCKED');
    await heard; // node B was told on the event bus
    const right = await login(b.app, victim.username, STRONG_PASSWORD, {}, { 'x-forwarded-for': stuffer });
    expectError(right, 429, 'ADDRESS_BLOCKED');
    const onB = await a.s.database.db.selectFrom('audit_log').select('event_type').where('user_id', '=', victim.uuid).where('event_type', '!=', 'USER_CREATED').execute();
    expect(onB).toEqual([]); // nothing compared, nothing recorded
    expect(await a.s.database.db.selectFrom('audit_log').select('audit_id').where('event_type', '=', 'RISK_ADDRESS_BLOCKED').execute()).toHaveLength(1);
    expect(await a.s.database.db.selectFrom('risk_address_blocks').select('network_hash').execute()).toHaveLength(1);
  });
});
