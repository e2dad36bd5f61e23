/**
 * Personal-data breaches (issue 28), on both databases: a breach recorded over a window finds
 * exactly the accounts with audit entries in it (narrowed by channel and client network), its
 * notices reach each affected person's email and phone in their language over a real SMTP server
 * and SMS gateway, never anyone else, and parallel runs of the sender send each notice once; the
 * 72-hour deadline on a frozen clock, in the list and on /metrics; the report and the closing;
 * the validation errors and the permission.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, loginFrom, seedUser, signIn } from '../harness/fixtures.js';
import { startSmsGateway, type TestSmsGateway } from '../harness/sms-gateway.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

type Res = Awaited<ReturnType<App['inject']>>;
type Body = Record<string, unknown>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2026, 2, 4, 9, 0, 0);
const T1 = T0 + 2 * HOUR; // the breach: sign-ins at T1
const MAX_AFFECTED = 5;

let t: TestApp;
let smtp: TestSmtp;
let gw: TestSmsGateway;
const people: Record<string, { uuid: string; email: string | null; phone: string | null }> = {};

const BODY = {
  occurred_from: new Date(T1 - 10 * MINUTE).toISOString(),
  occurred_to: new Date(T1 + 10 * MINUTE).toISOString(),
  categories: ['contact_details', 'audit_data'],
  description: 'Sign-in records copied to a storage bucket readable from the internet.',
  consequences: 'Targeted phishing using the email addresses.',
  measures: 'Bucket closed; customers warned.',
  contact_point: 'Data Protection Officer, dpo@bank.example',
  notify_subjects: false,
};

async function token(username = 'dpo.officer'): Promise<string> {
  return (await signIn(t.app, username)).access_token;
}
async function post(url: string, payload: Body, who = 'dpo.officer'): Promise<Res> {
  return t.app.inject({ method: 'POST', url, payload, headers: bearer(await token(who)) });
}
async function get(url: string, who = 'dpo.officer'): Promise<Res> {
  return t.app.inject({ method: 'GET', url, headers: bearer(await token(who)) });
}
function ok(res: Res, code = 200): Body {
  expect(res.statusCode, res.body).toBe(code);
  return res.json() as Body;
}
const uuidsOf = (...names: string[]) => names.map((n) => people[n]!.uuid).sort();

async function affectedOf(id: string): Promise<string[]> {
  const page = ok(await get(`/api/v1/admin/breaches/${id}/affected?page_size=1000`));
  return (page.accounts as Array<{ user_id: string }>).map((a) => a.user_id).sort();
}

/** A subject as the reader sees it: RFC 2047 encoded words decoded. */
const subjectOf = (raw: string): string => raw.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) => (enc.toUpperCase() === 'B'
  ? Buffer.from(text, 'base64').toString('utf8')
  : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8')));

async function person(name: string, opts: { language?: 'pt' | 'fr'; phone?: boolean; email?: boolean } = {}): Promise<void> {
  const n = Object.keys(people).length;
  const email = opts.email === false ? null : `${name}@bank.example`;
  const phone = opts.phone === false ? null : `+25470010${String(n).padStart(4, '0')}`;
  const user = await seedUser(t.s, name, { email: email ?? undefined, phone: phone ?? undefined });
  if (opts.language) await t.s.database.db.updateTable('users').set({ language: opts.language }).where('id', '=', user.id).execute();
  people[name] = { uuid: user.uuid, email, phone };
}

beforeAll(async () => {
  smtp = await startSmtp();
  gw = await startSmsGateway();
  t = await createTestApp({
    env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', SMS_GATEWAY_URL: gw.url, SMS_GATEWAY_TOKEN: gw.token, BREACH_MAX_AFFECTED: String(MAX_AFFECTED) },
    clock: new ManualClock(T0),
  });
  const db = t.s.database.db;
  const role = await db.insertInto('roles').values({ name: 'dpo', description: 'Data protection officer' }).returning('id').executeTakeFirstOrThrow();
  const perm = await db.selectFrom('permissions').select('id').where('name', '=', 'breach.manage').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values({ role_id: role.id, permission_id: perm.id }).execute();
  await seedUser(t.s, 'dpo.officer', { roles: ['dpo'] });
  await seedUser(t.s, 'plain.clerk', { roles: ['staff'] });
  await person('amina');
  await person('joao', { language: 'pt' });
  await person('claire', { language: 'fr', phone: false });
  await person('bystander');
  await person('quiet');
  await person('late');
  // The breach window: three sign in from the exposed network, one from elsewhere; later, another.
  t.clock.set(T1);
  for (const [name, i] of [['amina', 7], ['joao', 8], ['claire', 9]] as const) expect((await loginFrom(`198.51.100.${i}`, t.app, name)).statusCode).toBe(200);
  expect((await loginFrom('203.0.113.5', t.app, 'bystander')).statusCode).toBe(200);
  t.clock.set(T1 + 3 * HOUR);
  expect((await loginFrom('198.51.100.10', t.app, 'late')).statusCode).toBe(200);
  t.clock.set(T1 + 4 * HOUR);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await gw?.close();
});

describe('recording a breach', () => {
  it('lists exactly the accounts with audit entries in the window, and audits the record', async () => {
    const b = ok(await post('/api/v1/admin/breaches', BODY), 201);
    expect(b).toMatchObject({ state: 'open', affected_accounts: 4, categories: ['contact_details', 'audit_data'], scope: {}, notify_subjects: false, notices: { pending: 0, sent: 0 } });
    expect(b.records_concerned as number).toBeGreaterThanOrEqual(4);
    expect(await affectedOf(b.id as string)).toEqual(uuidsOf('amina', 'joao', 'claire', 'bystander'));
    const audit = await t.s.database.db.selectFrom('audit_log').select(['details', 'username']).where('event_type', '=', 'BREACH_RECORDED').executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ username: 'dpo.officer', details: { breach_id: b.id, affected_accounts: 4 } });
  });

  it('narrows by channel and client network (no host bits): the bystander from another network is not affected', async () => {
    const b = ok(await post('/api/v1/admin/breaches', { ...BODY, scope: { channels: ['web'], client_networks: ['198.51.100.0/24', '2001:db8::/32'] } }), 201);
    expect(b.scope).toEqual({ channels: ['web'], client_networks: ['198.51.100.0/24', '2001:db8::/32'] });
    expect(await affectedOf(b.id as string)).toEqual(uuidsOf('amina', 'joao', 'claire'));
    const none = ok(await post('/api/v1/admin/breaches', { ...BODY, scope: { channels: ['ussd'] } }), 201);
    expect(none.affected_accounts).toBe(0);
  });

  it('refuses a scope matching more accounts than one breach may list, and records nothing', async () => {
    const before = (ok(await get('/api/v1/admin/breaches')).total as number);
    const wide = { ...BODY, occurred_from: new Date(T0 - MINUTE).toISOString(), occurred_to: new Date(T1 + 4 * HOUR).toISOString() };
    const body = expectError(await post('/api/v1/admin/breaches', wide), 422, 'BREACH_SCOPE_TOO_BROAD');
    expect((body.details as Body).max_affected).toBe(MAX_AFFECTED);
    expect(ok(await get('/api/v1/admin/breaches')).total).toBe(before);
  });
});

describe('notices to the people affected', () => {
  it('reach each affected person once by email and SMS in their language, never anyone else, however many senders run at once', async () => {
    const b = ok(await post('/api/v1/admin/breaches', { ...BODY, notify_subjects: true, scope: { client_networks: ['198.51.100.0/24'] } }), 201);
    const id = b.id as string;
    expect(b.notices).toEqual({ pending: 6, sending: 0, sent: 0, failed: 0, no_contact: 0 });
    // A burst of senders (as on several nodes, and the scheduler's own run) over the same queue.
    const runs = await Promise.all([...Array.from({ length: 6 }, () => t.s.breachNotices.run()), t.scheduler.runNow('breach notices')]);
    expect(runs.slice(0, 6).reduce((a, n) => (a as number) + (n as number), 0)).toBeLessThanOrEqual(5);
    await t.scheduler.runNow('breach notices'); // a retry finds nothing left to send
    const subjects = (name: string) => smtp.to(people[name]!.email!).map((m) => subjectOf(m.subject));
    expect(subjects('amina')).toEqual(['Important: a security incident may have affected your account']);
    expect(subjects('joao')).toEqual(['Importante: um incidente de segurança pode ter afetado a sua conta']);
    expect(subjects('claire')).toEqual(['Important : un incident de sécurité a pu toucher votre compte']);
    for (const name of ['bystander', 'quiet', 'late']) expect(smtp.to(people[name]!.email!), name).toEqual([]);
    expect(smtp.messages).toHaveLength(3);
    expect(smtp.to(people.joao!.email!)[0]!.text).toContain('Se tiver dúvidas, contacte: Data Protection Officer, dpo@bank.example');
    // SMS: amina and joao have phones (claire has none: no contact), each once, in their language.
    expect(gw.messages.map((m) => m.to).sort()).toEqual([people.amina!.phone, people.joao!.phone].sort());
    expect(gw.latest(people.joao!.phone!)!.message).toMatch(/^Banco: /);
    expect(gw.latest(people.amina!.phone!)!.message).toMatch(/^Bank: /);
    const record = ok(await get(`/api/v1/admin/breaches/${id}`));
    expect(record.notices).toEqual({ pending: 0, sending: 0, sent: 5, failed: 0, no_contact: 1 });
    expect((record.timeline as Array<{ event: string }>).map((e) => e.event)).toContain('first_notice_sent');
    const accounts = ok(await get(`/api/v1/admin/breaches/${id}/affected`)).accounts as Array<{ username: string; notices: Body }>;
    expect(accounts.find((a) => a.username === 'claire')!.notices).toEqual({ email: 'sent', sms: 'no_contact' });
  });
});

describe('a notice the transport refuses', () => {
  it('is tried again 5 then 10 minutes later, then recorded as failed, and counted on /metrics', async () => {
    const b = ok(await post('/api/v1/admin/breaches', { ...BODY, notify_subjects: true, scope: { client_networks: ['198.51.100.7'] } }), 201);
    expect(b.affected_accounts).toBe(1); // amina
    const id = b.id as string;
    gw.mode = 'fail';
    try {
      await t.scheduler.runNow('breach notices');
      expect(ok(await get(`/api/v1/admin/breaches/${id}`)).notices).toMatchObject({ pending: 1, sent: 1, failed: 0 });
      await t.scheduler.runNow('breach notices'); // not due yet: nothing tried
      expect(gw.failed).toHaveLength(1);
      t.clock.advance(5 * MINUTE);
      await t.scheduler.runNow('breach notices');
      t.clock.advance(10 * MINUTE);
      await t.scheduler.runNow('breach notices');
    } finally {
      gw.mode = 'ok';
    }
    expect(gw.failed.map((f) => f.reference)).toEqual(Array(3).fill(gw.failed[0]!.reference));
    expect(ok(await get(`/api/v1/admin/breaches/${id}`)).notices).toMatchObject({ pending: 0, sent: 1, failed: 1 });
    await t.scheduler.runNow('breach notices');
    expect(gw.failed).toHaveLength(3);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^strongroom_breach_notices_total\{channel="sms",outcome="failed"\} 1$/m);
    expect(metrics).toMatch(/^strongroom_breach_notices_total\{channel="sms",outcome="retry"\} 2$/m);
  });
});

describe('the 72-hour deadline', () => {
  it('counts down from awareness on a frozen clock, shows overdue in the list and on /metrics, until reported', async () => {
    const now = t.clock.now();
    const old = { ...BODY, occurred_from: new Date(T0 - 100 * HOUR).toISOString(), occurred_to: new Date(T0 - 99 * HOUR).toISOString(), aware_at: new Date(now - 70 * HOUR).toISOString() };
    const b = ok(await post('/api/v1/admin/breaches', old), 201);
    const id = b.id as string;
    expect(b).toMatchObject({ state: 'open', deadline_at: new Date(now + 2 * HOUR).toISOString(), seconds_left: 7200, overdue: false, authority_report: null });
    let metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^strongroom_breach_deadline_seconds 7200$/m);
    const open = Number(/^strongroom_breaches_unreported (\d+)$/m.exec(metrics)![1]);
    expect(open).toBeGreaterThanOrEqual(1);

    t.clock.advance(3 * HOUR);
    const listed = (ok(await get('/api/v1/admin/breaches')).breaches as Body[]).find((x) => x.id === id)!;
    expect(listed).toMatchObject({ state: 'open', seconds_left: -3600, overdue: true });
    metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^strongroom_breach_deadline_seconds -3600$/m);

    const reported = ok(await post(`/api/v1/admin/breaches/${id}/report`, { reference: 'ODPC-2026-00417' }));
    expect(reported).toMatchObject({ state: 'reported', seconds_left: null, overdue: false, authority_report: { reference: 'ODPC-2026-00417', within_deadline: false, reported_at: new Date(t.clock.now()).toISOString() } });
    metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(new RegExp(`^strongroom_breaches_unreported ${open - 1}$`, 'm'));
    expect(metrics).not.toMatch(/^strongroom_breach_deadline_seconds -3600$/m);
    expectError(await post(`/api/v1/admin/breaches/${id}/report`, { reference: 'again' }), 409, 'BREACH_ALREADY_REPORTED');

    const closed = ok(await post(`/api/v1/admin/breaches/${id}/close`, { note: 'Investigation complete.' }));
    expect(closed).toMatchObject({ state: 'closed', closing_note: 'Investigation complete.' });
    expect((closed.timeline as Array<{ event: string }>).map((e) => e.event)).toEqual(['breach_began', 'breach_ended', 'bank_aware', 'recorded', 'authority_deadline', 'reported_to_authority', 'closed']);
    expectError(await post(`/api/v1/admin/breaches/${id}/close`, { note: 'again' }), 409, 'BREACH_CLOSED');
    const events = await t.s.database.db.selectFrom('audit_log').select('event_type').where('event_type', 'in', ['BREACH_REPORTED', 'BREACH_CLOSED']).execute();
    expect(events.map((e) => e.event_type).sort()).toEqual(['BREACH_CLOSED', 'BREACH_REPORTED']);
  });
});

describe('once only', () => {
  it('a parallel burst of reports, then of closings: exactly one of each is recorded and audited, the rest answer 409', async () => {
    // One sign-in for the whole test, and no other while it runs. Each sign-in ends the oldest
    // session beyond MAX_CONCURRENT_SESSIONS, and on the frozen clock every session of the
    // operator is equally old, so which one goes is the database's choice: a second sign-in
    // (even after the burst) may end this one, and the next burst would answer 401 SESSION_INVALID.
    const headers = bearer(await token());
    const send = (method: 'GET' | 'POST', url: string, payload?: Body) => t.app.inject({ method, url, payload, headers });
    const b = ok(await send('POST', '/api/v1/admin/breaches', BODY), 201);
    const id = b.id as string;
    const count = async (event: string) => (await t.s.database.db.selectFrom('audit_log').select('audit_id').where('event_type', '=', event)
      .where(sql<boolean>`details->>'breach_id' = ${id}`).execute()).length;
    const burst = (path: string, body: (i: number) => Body) => Promise.all(Array.from({ length: 8 }, (_, i) => send('POST', `/api/v1/admin/breaches/${id}/${path}`, body(i))));
    /** Each answer's status and error code, sorted; the bodies go in the failure message. */
    const outcomes = (rs: Res[]) => rs.map((r) => (r.statusCode === 200 ? '200' : `${r.statusCode} ${String((r.json() as Body).error_code)}`)).sort();
    const bodies = (rs: Res[]) => rs.map((r) => r.body).join('\n');

    const reports = await burst('report', (i) => ({ reference: `REF-${i}` }));
    expect(outcomes(reports), bodies(reports)).toEqual(['200', ...Array<string>(7).fill('409 BREACH_ALREADY_REPORTED')]);
    expect(await count('BREACH_REPORTED')).toBe(1);
    const reported = (reports.find((r) => r.statusCode === 200)!.json() as { authority_report: { reference: string } }).authority_report.reference;
    expect((ok(await send('GET', `/api/v1/admin/breaches/${id}`)).authority_report as { reference: string }).reference).toBe(reported);

    const closings = await burst('close', (i) => ({ note: `Closed ${i}.` }));
    expect(outcomes(closings), bodies(closings)).toEqual(['200', ...Array<string>(7).fill('409 BREACH_CLOSED')]);
    expect(await count('BREACH_CLOSED')).toBe(1);
    const closed = (closings.find((r) => r.statusCode === 200)!.json() as { closing_note: string }).closing_note;
    const record = ok(await send('GET', `/api/v1/admin/breaches/${id}`));
    expect(record).toMatchObject({ state: 'closed', closing_note: closed, authority_report: { reference: reported } });
    expect((record.timeline as Array<{ event: string }>).filter((e) => e.event === 'reported_to_authority' || e.event === 'closed').map((e) => e.event)).toEqual(['reported_to_authority', 'closed']);
  });
});

describe('validation and permission', () => {
  it('names the field: a window ending before it starts, an unknown category, a bad CIDR or SQL injected into one, a future awareness', async () => {
    const field = (res: Res) => ((expectError(res, 422, 'VALIDATION_ERROR').details as { fields: Array<{ field: string }> }).fields.map((f) => f.field));
    expect(field(await post('/api/v1/admin/breaches', { ...BODY, occurred_to: new Date(T1 - 20 * MINUTE).toISOString() }))).toEqual(['occurred_to']);
    expect(field(await post('/api/v1/admin/breaches', { ...BODY, categories: ['bank_balances'] }))).toEqual(['categories.0']);
    expect(field(await post('/api/v1/admin/breaches', { ...BODY, scope: { client_networks: ['198.51.100.0/24', '198.51.100.7/24'] } }))).toEqual(['scope.client_networks.1']);
    expect(field(await post('/api/v1/admin/breaches', { ...BODY, scope: { client_networks: ["10.0.0.0/8' OR 1=1 --"] } }))).toEqual(['scope.client_networks.0']);
    expect(field(await post('/api/v1/admin/breaches', { ...BODY, aware_at: new Date(t.clock.now() + HOUR).toISOString() }))).toEqual(['aware_at']);
    expectError(await get('/api/v1/admin/breaches/3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77'), 404, 'BREACH_NOT_FOUND');
  });

  it('refuses an account without breach.manage (403), and the admin role holds it', async () => {
    expectError(await post('/api/v1/admin/breaches', BODY, 'plain.clerk'), 403, 'PERMISSION_DENIED');
    expectError(await get('/api/v1/admin/breaches', 'plain.clerk'), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/breaches' }), 401, 'TOKEN_MISSING');
    const granted = await t.s.database.db.selectFrom('role_permissions as rp').innerJoin('roles as r', 'r.id', 'rp.role_id').innerJoin('permissions as p', 'p.id', 'rp.permission_id')
      .select('r.name').where('p.name', '=', 'breach.manage').execute();
    expect(granted.map((g) => g.name).sort()).toEqual(['admin', 'dpo']);
  });
});
