/**
 * Erasure end to end (issue 28) on a frozen clock, on both databases: a customer with everything
 * (factors, sessions, devices and push tokens, consents, a recovery workflow, a contact change,
 * audit events) asks to be forgotten; signing in is refused (403 with the right password, 401
 * with a wrong one, as for an unknown user); the notice's link cancels a first request; a second
 * one runs past the grace period; the job erases; then EVERY table is dumped as text and the
 * person's username, email, phone, name and date of birth appear nowhere, while the
 * pseudonymised audit rows remain. Field encryption is off here on purpose: contacts then sit in
 * plaintext, so a value the job missed would show in the dump (with it on, the dump could not see
 * them either way).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MailMessage } from '../../src/mail/mailer.js';
import { maskEmail } from '../../src/mail/templates.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { Authenticator, enrolTotp } from '../harness/authenticator.js';
import { auditTotal, bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { dumpEveryTable as dumpAll, tablesHolding } from '../harness/table-dump.js';

let t: TestApp;
const mails: MailMessage[] = [];
const DELETE = '/api/v1/auth/gdpr/delete';
const CANCEL = '/api/v1/auth/gdpr/delete/cancel';
const PAGE = '/gdpr/erasure/cancel';
const ADMIN_LIST = '/api/v1/admin/gdpr/erasures';
const DAY = 86_400_000;

const PERSON = { username: 'erin.forget', email: 'erin.forget@example.com', phone: '+254712999333', fullName: 'Erin Forgetmenot', dob: '1988-04-12', newEmail: 'erin.elsewhere@example.com' };

const ask = (token: string, password = STRONG_PASSWORD) => t.app.inject({ method: 'POST', url: DELETE, headers: bearer(token), payload: { current_password: password } });
const cancel = (payload: Record<string, unknown>, url = CANCEL) => t.app.inject({ method: 'POST', url, payload });

/** The cancel token of the latest "requested" notice mailed to `to`. */
async function cancelTokenMailedTo(to: string, nth: number): Promise<string> {
  await vi.waitFor(() => expect(mails.filter((m) => m.to === to && /erased|apagada|effacé/.test(m.subject)).length).toBeGreaterThanOrEqual(nth));
  const mail = mails.filter((m) => m.to === to && /erased|apagada|effacé/.test(m.subject))[nth - 1]!;
  const link = /https:\/\/auth\.bank\.example\/gdpr\/erasure\/cancel#(erx_[A-Za-z0-9_-]{43})/.exec(mail.text);
  expect(link, mail.text).not.toBeNull();
  return link![1]!;
}

const dumpEveryTable = (): Promise<Map<string, string>> => dumpAll(t.s.db);
const found = tablesHolding;

let erinUuid: string;
let admin: string;
let authenticator: Authenticator;

/** A full sign-in with the password and the authenticator (a fresh session: a recent step-up). */
async function signInWithFactor(username: string): Promise<string> {
  t.clock.advance(31_000); // a TOTP code is accepted once per step
  const gate = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string };
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-login', payload: { two_factor_token: gate.two_factor_token, code: authenticator.code(t.clock.now()) } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { access_token: string }).access_token;
}

async function giveEverything(uuid: string, token: string): Promise<void> {
  const user = (await t.s.users.findByUuid(uuid))!;
  const db = t.s.db;
  const now = new Date(t.clock.now());
  const profile = await t.app.inject({ method: 'PUT', url: '/api/v1/auth/profile/update', headers: bearer(token), payload: { full_name: PERSON.fullName, date_of_birth: PERSON.dob, language: 'pt', email: PERSON.newEmail, current_password: STRONG_PASSWORD } });
  expect(profile.statusCode, profile.body).toBe(200);
  const device = await t.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(token), payload: { push_token: 'fcm:Erin_phone_APA91bH2x7k3Lq9Zr0Xc3A_token', platform: 'mobile', device_name: 'Erin Forgetmenot phone' } });
  expect(device.statusCode, device.body).toBe(201);
  await db.insertInto('recovery_workflows').values({
    handle_hash: 'handle-hash-erin', kind: 'password', state: 'cancelled', user_id: user.id, decoy: false, account_hash: 'account-hash-erin', holds_slot: false,
    login_key: `u:${user.id}`, subject_masked: 'e***@example.com', created_at: now, expires_at: now, verified_at: null, completed_at: null, ended_at: now, reference: 'REFERIN1',
    initiated_by: null, waiting_until: null, cooling_off_hours: null,
  }).execute();
  const purpose = (await sql<{ id: number; sha256: string }>`SELECT p.id, t.sha256 FROM consent_purposes p JOIN consent_texts t ON t.purpose_id = p.id AND t.version = 1 AND t.language = 'en' WHERE p.key = 'marketing_email'`.execute(db)).rows[0]!;
  const h = (await sql<{ id: number }>`INSERT INTO consent_history (user_id, purpose_id, version, language, text_hash, given, at, channel, client_address, user_agent)
    VALUES (${user.id}, ${purpose.id}, 1, 'en', ${purpose.sha256}, true, ${now}, 'web', '203.0.113.77', 'Erin-Browser/1.0') RETURNING id`.execute(db)).rows[0]!;
  await sql`INSERT INTO user_consents (user_id, purpose_id, history_id, given, version, changed_at) VALUES (${user.id}, ${purpose.id}, ${h.id}, true, 1, ${now})`.execute(db);
  // A failed sign-in: an audit entry with the client's address and agent.
  expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: PERSON.username, password: WRONG_PASSWORD }, headers: { 'user-agent': 'Erin-Browser/1.0' }, remoteAddress: '203.0.113.77' }), 401, 'INVALID_CREDENTIALS');
  // The authenticator (with backup codes): from now on signing in asks it.
  authenticator = (await enrolTotp(t.app, t.clock, token)).authenticator;
}

beforeAll(async () => {
  t = await createTestApp({
    env: { DB_FIELD_ENCRYPTION: '0', GDPR_ERASURE_CANCEL_URL: 'https://auth.bank.example/gdpr/erasure/cancel', GDPR_ERASURE_GRACE_DAYS: '30' },
    mailer: { configured: true, send: async (m) => { mails.push(m); return { messageId: `m${mails.length}` }; } },
  });
  erinUuid = (await seedUser(t.s, PERSON.username, { email: PERSON.email, phone: PERSON.phone })).uuid;
  await seedUser(t.s, 'erasure.admin', { roles: ['admin'] });
  await seedUser(t.s, 'erasure.bystander', { email: 'bystander@example.com' });
  admin = (await signIn(t.app, 'erasure.admin')).access_token;
  await giveEverything(erinUuid, (await signIn(t.app, PERSON.username)).access_token);
});
afterAll(async () => t.close());

const erasureState = async (uuid: string) => (await sql<{ state: string }>`SELECT state FROM gdpr_erasures WHERE user_uuid = ${uuid} ORDER BY requested_at`.execute(t.s.db)).rows.map((r) => r.state);

describe('erasure end to end (frozen clock)', () => {
  it('request, refused sign-in, cancel by the notice\'s link, second request, hold, release, job: nothing personal left in any table; the audit trail remains pseudonymised', async () => {
    const before = await dumpEveryTable();
    // The dump sees the person before (else the final check could not fail).
    // The masks too: the contact change's audit entries name the old and the new address masked.
    for (const v of [PERSON.username, PERSON.email, PERSON.phone, PERSON.fullName, PERSON.dob, PERSON.newEmail, '203.0.113.77', 'erin-browser', maskEmail(PERSON.email), maskEmail(PERSON.newEmail)]) expect(found(before, v), v).not.toEqual([]);

    // A step-up older than 10 minutes is refused for an account with a second factor.
    let token = await signInWithFactor(PERSON.username);
    t.clock.advance(11 * 60_000);
    expectError(await ask(token), 403, 'STEP_UP_REQUIRED');
    token = await signInWithFactor(PERSON.username);
    expectError(await ask(token, WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');

    const first = await ask(token);
    expect(first.statusCode, first.body).toBe(202);
    const requested = first.json() as { erase_after: string; sessions_ended: number };
    expect(new Date(requested.erase_after).getTime()).toBe(t.clock.now() + 30 * DAY);
    expect(requested.sessions_ended).toBeGreaterThanOrEqual(1);
    // Every session ended: the token that asked no longer works.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/profile', headers: bearer(token) })).statusCode).toBe(401);
    expect((await sql<{ n: number }>`SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.uuid = ${erinUuid} AND s.is_active`.execute(t.s.db)).rows[0]!.n).toBe(0);
    expect((await sql<{ n: number }>`SELECT count(*)::int AS n FROM refresh_families f JOIN users u ON u.id = f.user_id WHERE u.uuid = ${erinUuid} AND f.revoked_at IS NULL`.execute(t.s.db)).rows[0]!.n).toBe(0);

    // Signing in: the right password learns of the erasure; a wrong one is told what an unknown user is.
    const pending = expectError(await login(t.app, PERSON.username), 403, 'ACCOUNT_ERASURE_PENDING');
    expect(pending.details).toMatchObject({ erase_after: requested.erase_after, cancel_path: CANCEL });
    const wrong = expectError(await login(t.app, PERSON.username, WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    const unknown = expectError(await login(t.app, 'nobody.at.all', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expect(wrong.message).toBe(unknown.message);

    // The notice (in Portuguese, the account's language) carries the link; the page serves; its POST cancels once.
    const link = await cancelTokenMailedTo(PERSON.email, 1);
    const page = await t.app.inject({ method: 'GET', url: PAGE });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    const cancelled = await cancel({ token: link }, PAGE);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expectError(await cancel({ token: link }), 404, 'ERASURE_NOT_FOUND');
    expect(await erasureState(erinUuid)).toEqual(['cancelled']);
    expect(await auditTotal(t.s, erinUuid, 'GDPR_ERASURE_CANCELLED')).toBe(1);
    await vi.waitFor(() => expect(mails.some((m) => m.to === PERSON.email && m.subject.includes('cancelado'))).toBe(true));
    // Signing in works again (with the factor).
    token = await signInWithFactor(PERSON.username);

    // A second request; the clock passes the grace under a legal hold: the job leaves it.
    expect((await ask(token)).statusCode).toBe(202);
    const list = await t.app.inject({ method: 'GET', url: ADMIN_LIST, headers: bearer(admin) });
    expect(list.statusCode, list.body).toBe(200);
    const mine = (list.json() as { erasures: Array<{ id: string; user_id: string; hold: unknown }> }).erasures.find((e) => e.user_id === erinUuid)!;
    expect(mine.hold).toBeNull();
    const held = await t.app.inject({ method: 'POST', url: `${ADMIN_LIST}/${mine.id}/hold`, headers: bearer(admin), payload: { reason: 'Fraud case FR-118: keep until closed' } });
    expect(held.statusCode, held.body).toBe(200);
    expectError(await t.app.inject({ method: 'POST', url: `${ADMIN_LIST}/${mine.id}/hold`, headers: bearer(admin), payload: { reason: 'again' + '!'.repeat(5) } }), 409, 'ERASURE_HOLD_CONFLICT');
    t.clock.advance(31 * DAY);
    expect(await t.s.erasureJob.run()).toBe(0);
    expect(await erasureState(erinUuid)).toEqual(['cancelled', 'pending']);
    admin = (await signIn(t.app, 'erasure.admin')).access_token; // a month on: a new session
    expect((await t.app.inject({ method: 'POST', url: `${ADMIN_LIST}/${mine.id}/release`, headers: bearer(admin) })).statusCode).toBe(200);
    expect(await auditTotal(t.s, erinUuid, 'GDPR_ERASURE_HELD')).toBe(1);
    expect(await auditTotal(t.s, erinUuid, 'GDPR_ERASURE_RELEASED')).toBe(1);

    const auditBefore = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE user_id = ${erinUuid}`.execute(t.s.db)).rows[0]!.n;
    expect(await t.scheduler.runNow('gdpr erasure')).toBe(true);
    expect(await erasureState(erinUuid)).toEqual(['cancelled', 'erased']);

    // Nothing personal left in any table.
    const after = await dumpEveryTable();
    for (const v of [PERSON.username, PERSON.email, PERSON.phone, PERSON.fullName, PERSON.dob, PERSON.newEmail, '203.0.113.77', 'erin-browser', 'erin_phone', maskEmail(PERSON.email), maskEmail(PERSON.newEmail)]) {
      expect(found(after, v), `${v} still in`).toEqual([]);
    }
    // The audit rows remain, pseudonymised: the same count (plus GDPR_ERASED), one pseudonym.
    const audit = (await sql<{ username: string | null; ip_address: string | null; user_agent: string | null; event_type: string }>`SELECT username, ip_address, user_agent, event_type FROM audit_log WHERE user_id = ${erinUuid}`.execute(t.s.db)).rows;
    expect(audit.length).toBe(auditBefore + 1);
    expect(audit.length).toBeGreaterThan(15);
    const pseudonym = audit[0]!.username!;
    expect(pseudonym).toMatch(/^erased-[0-9a-f]{20}$/);
    expect(audit.every((r) => r.username === pseudonym && r.user_agent === null && (r.ip_address === null || r.ip_address.startsWith('k:')))).toBe(true);
    expect(audit.filter((r) => r.event_type === 'GDPR_ERASED')).toHaveLength(1);
    const tomb = (await sql<Record<string, unknown>>`SELECT username, email, phone, full_name, date_of_birth, is_active, erased_at FROM users WHERE uuid = ${erinUuid}`.execute(t.s.db)).rows[0]!;
    expect(tomb).toMatchObject({ username: pseudonym, email: null, phone: null, full_name: null, date_of_birth: null, is_active: false });
    expect(tomb.erased_at).not.toBeNull();
    // The consent it gave stays provable: purpose, version, hash, when; the address keyed-hashed.
    const consent = (await sql<{ client_address: string; user_agent: string | null }>`SELECT h.client_address, h.user_agent FROM consent_history h JOIN users u ON u.id = h.user_id WHERE u.uuid = ${erinUuid}`.execute(t.s.db)).rows;
    expect(consent).toHaveLength(1);
    expect(consent[0]!.client_address).toMatch(/^k:[0-9a-f]{32}$/);
    // The request log has the two requests and the erasure; a bystander is untouched.
    const log = (await sql<{ format: string }>`SELECT format FROM gdpr_requests WHERE user_uuid = ${erinUuid} AND kind = 'erasure' ORDER BY requested_at`.execute(t.s.db)).rows.map((r) => r.format);
    expect(log).toEqual(['requested', 'requested', 'erased']);
    expect(found(after, 'erasure.bystander')).not.toEqual([]);
    expect(found(after, 'bystander@example.com')).toEqual(['users']);
    // Signing in as the erased person, or cancelling: the answers of an unknown user.
    expectError(await login(t.app, PERSON.username), 401, 'INVALID_CREDENTIALS');
    expectError(await cancel({ username: PERSON.username, password: STRONG_PASSWORD }), 401, 'INVALID_CREDENTIALS');
  });
});

describe('erasure threats', () => {
  it('last administrator: refused with 409 LAST_ADMIN; an administrator whose erasure is pending does not count as the other one', async () => {
    await seedUser(t.s, 'erasure.admin2', { roles: ['admin'] });
    const second = (await signIn(t.app, 'erasure.admin2')).access_token;
    const first = (await signIn(t.app, 'erasure.admin')).access_token;
    const ok = await ask(second);
    expect(ok.statusCode, ok.body).toBe(202);
    expectError(await ask(first), 409, 'LAST_ADMIN');
    const uuid = (await t.s.users.findByLogin('erasure.admin2'))!.uuid;
    expect(await erasureState(uuid)).toEqual(['pending']);
    expect((await cancel({ username: 'erasure.admin2', password: STRONG_PASSWORD })).statusCode).toBe(200);
  });

  it('service account: 409 ERASURE_NOT_ALLOWED_SERVICE_ACCOUNT; a customer on the operators\' routes: 403 PERMISSION_DENIED; no bearer: 401', async () => {
    const svc = await seedUser(t.s, 'erasure.service');
    const token = (await signIn(t.app, 'erasure.service')).access_token;
    await sql`UPDATE users SET is_service_account = true WHERE uuid = ${svc.uuid}`.execute(t.s.db);
    expectError(await ask(token), 409, 'ERASURE_NOT_ALLOWED_SERVICE_ACCOUNT');
    const customer = (await signIn(t.app, 'erasure.bystander')).access_token;
    expectError(await t.app.inject({ method: 'GET', url: ADMIN_LIST, headers: bearer(customer) }), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'POST', url: `${ADMIN_LIST}/0b9e6c1e-7d3a-4f5e-8a2b-1c9d0e7f6a5b/hold`, headers: bearer(customer), payload: { reason: 'not mine to hold' } }), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'POST', url: DELETE, payload: { current_password: STRONG_PASSWORD } }), 401, 'TOKEN_MISSING');
  });

  it('cancel by credentials: a wrong password and an unknown username answer alike and count toward the lockout; neither or both ways: 422', async () => {
    const u = await seedUser(t.s, 'erasure.canceller');
    expect((await ask((await signIn(t.app, 'erasure.canceller')).access_token)).statusCode).toBe(202);
    const wrong = expectError(await cancel({ username: 'erasure.canceller', password: WRONG_PASSWORD }), 401, 'INVALID_CREDENTIALS');
    const unknown = expectError(await cancel({ username: 'nobody.erasure', password: WRONG_PASSWORD }), 401, 'INVALID_CREDENTIALS');
    expect(wrong.message).toBe(unknown.message);
    const counted = (await sql<{ failed_count: number }>`SELECT failed_count FROM login_attempts WHERE subject_key = ${`u:${(await t.s.users.findByUuid(u.uuid))!.id}`}`.execute(t.s.db)).rows[0];
    expect(counted?.failed_count).toBe(1);
    expectError(await cancel({}), 422, 'VALIDATION_ERROR');
    expectError(await cancel({ username: 'erasure.canceller', password: STRONG_PASSWORD, token: `erx_${'A'.repeat(43)}` }), 422, 'VALIDATION_ERROR');
    expectError(await cancel({ token: `erx_${'A'.repeat(43)}` }), 404, 'ERASURE_NOT_FOUND');
    expect((await cancel({ username: 'erasure.canceller', password: STRONG_PASSWORD })).statusCode).toBe(200);
    expectError(await cancel({ username: 'erasure.canceller', password: STRONG_PASSWORD }), 404, 'ERASURE_NOT_FOUND');
    expect((await login(t.app, 'erasure.canceller')).statusCode).toBe(200);
  });

  it('parallel requests: exactly one is recorded; parallel cancels: exactly one wins', async () => {
    const u = await seedUser(t.s, 'erasure.racer', { email: 'racer@example.com' });
    const tokens = await Promise.all(Array.from({ length: 4 }, () => signIn(t.app, 'erasure.racer')));
    const answers = await Promise.all(tokens.map((x) => ask(x.access_token)));
    expect(answers.filter((r) => r.statusCode === 202)).toHaveLength(1);
    for (const r of answers.filter((x) => x.statusCode !== 202)) expect([401, 409]).toContain(r.statusCode);
    expect(await erasureState(u.uuid)).toEqual(['pending']);
    const link = await cancelTokenMailedTo('racer@example.com', 1);
    const cancels = await Promise.all([cancel({ token: link }), cancel({ token: link }), cancel({ username: 'erasure.racer', password: STRONG_PASSWORD }), cancel({ token: link }, PAGE)]);
    expect(cancels.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of cancels.filter((x) => x.statusCode !== 200)) expectError(r, 404, 'ERASURE_NOT_FOUND');
    expect(await erasureState(u.uuid)).toEqual(['cancelled']);
    expect(await auditTotal(t.s, u.uuid, 'GDPR_ERASURE_CANCELLED')).toBe(1);
  });

  it('a cancel racing the job: exactly one of them wins (cancelled, or erased and the cancel refused)', async () => {
    const u = await seedUser(t.s, 'erasure.late', { email: 'late@example.com' });
    expect((await ask((await signIn(t.app, 'erasure.late')).access_token)).statusCode).toBe(202);
    const link = await cancelTokenMailedTo('late@example.com', 1);
    t.clock.advance(30 * DAY + 1000);
    const [res, erased] = await Promise.all([cancel({ token: link }), t.s.erasureJob.run()]);
    const state = await erasureState(u.uuid);
    if (res.statusCode === 200) expect(state).toEqual(['cancelled']);
    else {
      expectError(res, 404, 'ERASURE_NOT_FOUND');
      expect(state).toEqual(['erased']);
      expect(erased).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('erasure of a long audit trail', () => {
  it('pseudonymises every one of 1,200 audit rows (three batches; found by uuid, or by the username or email address typed alone, in any case; equal timestamps across batch ends) and the held copies', async () => {
    const name = 'erasure.longtrail';
    const email = 'long.trail@example.com';
    const u = await seedUser(t.s, name, { email });
    const at = t.clock.now();
    const entry = (i: number) => ({
      ...t.s.audit.row({
        eventType: 'USER_LOGIN', status: i % 3 === 0 ? 'FAILURE' : 'SUCCESS', userId: i % 4 === 0 ? null : u.uuid, username: i % 8 === 0 ? email.toUpperCase() : i % 2 === 0 ? name.toUpperCase() : name,
        ip: `198.51.100.${i % 250}`, userAgent: 'Trail-Agent/2.0', deviceFingerprint: `trail-fp-${i}`, details: { email, note: `signed in as ${name}`, n: i },
        riskScore: 25, suspiciousIndicators: [{ signal: 'new_country', weight: 25, details: { country: 'PT', from_country: 'KE', distance_km: 6420 } }],
      }),
      // Seven entries per instant: batch ends fall inside a run of equal timestamps.
      timestamp: new Date(at - Math.floor(i / 7) * 1000),
    });
    for (let from = 0; from < 1200; from += 300) await t.s.db.insertInto('audit_log').values(Array.from({ length: 300 }, (_, k) => entry(from + k))).execute();
    await t.s.db.insertInto('audit_log_held').values(Array.from({ length: 5 }, (_, k) => entry(2000 + k))).execute();
    const mine = sql`(user_id = ${u.uuid} OR lower(username) IN (${name}, ${email}))`;
    expect((await sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE ${mine} AND details ? 'n'`.execute(t.s.db)).rows[0]!.n).toBe(1200);

    expect((await ask((await signIn(t.app, name)).access_token)).statusCode).toBe(202);
    t.clock.advance(31 * DAY);
    expect(await t.s.erasureJob.run()).toBeGreaterThanOrEqual(1);

    const pseudonym = (await sql<{ username: string }>`SELECT username FROM users WHERE uuid = ${u.uuid}`.execute(t.s.db)).rows[0]!.username;
    expect(pseudonym).toMatch(/^erased-[0-9a-f]{20}$/);
    for (const table of ['audit_log', 'audit_log_held']) {
      const rows = (await sql<{ username: string; ip_address: string; device_fingerprint: string; user_agent: string | null; details: { n: number }; suspicious_indicators: unknown }>`
        SELECT username, ip_address, device_fingerprint, user_agent, details, suspicious_indicators FROM ${sql.table(table)} WHERE details ? 'n' AND details->>'note' IS NOT NULL`.execute(t.s.db)).rows;
      expect(rows, table).toHaveLength(table === 'audit_log' ? 1200 : 5);
      expect(new Set(rows.map((r) => r.details.n)).size).toBe(rows.length);
      for (const r of rows) {
        expect(r.username).toBe(pseudonym);
        expect(r.ip_address).toMatch(/^k:[0-9a-f]{32}$/);
        expect(r.device_fingerprint).toMatch(/^k:[0-9a-f]{32}$/);
        expect(r.user_agent).toBeNull();
        expect(r.details).toEqual({ note: pseudonym, n: r.details.n });
        expect(r.suspicious_indicators).toEqual([{ signal: 'new_country', weight: 25 }]); // which signal, not where
      }
    }
    const left = await dumpEveryTable();
    for (const v of [name, email, 'trail-agent', 'trail-fp-', '198.51.100.']) expect(found(left, v), `${v} still in`).toEqual([]);
    const counts = (await sql<{ counts: Record<string, number> }>`SELECT counts FROM gdpr_erasures WHERE user_uuid = ${u.uuid} AND state = 'erased'`.execute(t.s.db)).rows[0]!.counts;
    expect(counts.audit_log).toBeGreaterThanOrEqual(1200);
    expect(counts.audit_log_held).toBe(5);
  });
});
