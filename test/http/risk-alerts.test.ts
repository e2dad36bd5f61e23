/**
 * Security alerts (issue 29, section 3), on both databases, two nodes on one database and a
 * frozen clock: one event raised on both nodes at once is one alert with one delivery per
 * channel; parallel runs of the delivery job on both nodes send each delivery once; the email
 * arrives over a real SMTP server and the webhook at a receiver on loopback that verifies the
 * signature and its timestamp; a receiver failing twice then answering 200 gets three attempts and
 * no more, one failing for ever gets SECURITY_ALERT_MAX_ATTEMPTS; the administration routes with
 * their filters, keyset pages, the audit trail around an alert, acknowledge and resolve, 409, 404
 * and 403; the counters on /metrics.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/platform/http/app.js';
import { verifySignature, type SignatureCheck } from '../../src/risk/alerts/webhook.js';
import type { AlertInput } from '../../src/risk/types.js';
import { createTwoNodes, type TestApp, type TwoNodes } from '../harness/app.js';
import { bearer, expectError, loginFrom, seedUser, signIn } from '../harness/fixtures.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

type Res = Awaited<ReturnType<App['inject']>>;
type Body = Record<string, unknown>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SECRET = 'f3c1a9e7'.repeat(8);
const SOC = 'soc@bank.example';
const MAX_ATTEMPTS = 4;

interface Received { deliveryId: string; alertId: string; rule: string; check: SignatureCheck; status: number; body: Body }

/** The SIEM's side: verifies each delivery's signature and timestamp, answers as `plan` says (then 200), keeps everything. */
class Receiver {
  readonly received: Received[] = [];
  /** Statuses to answer next, in order, for deliveries of alerts of a rule; 200 once none is left. */
  readonly plan = new Map<string, number[]>();
  private server!: http.Server;
  url = '';

  constructor(private readonly now: () => number) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8'); // verified as received, before any parse
        const check = verifySignature(req.headers['strongroom-signature'] as string | undefined, raw, SECRET, Math.floor(this.now() / 1000));
        const body = JSON.parse(raw) as Body & { delivery_id: string; alert: { id: string; rule: string } };
        const status = check === 'valid' ? this.plan.get(body.alert.rule)?.shift() ?? 200 : 401;
        this.received.push({ deliveryId: body.delivery_id, alertId: body.alert.id, rule: body.alert.rule, check, status, body });
        expect(req.headers['strongroom-delivery']).toBe(body.delivery_id);
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/strongroom`;
  }

  of(rule: string): Received[] {
    return this.received.filter((r) => r.rule === rule);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let nodes: TwoNodes;
let a: TestApp;
let b: TestApp;
let smtp: TestSmtp;
let receiver: Receiver;
let clockNow: () => number = () => Date.now();
const users: Record<string, string> = {};

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = new Receiver(() => clockNow());
  await receiver.start();
  nodes = await createTwoNodes({
    env: {
      SMTP_URL: smtp.url, SECURITY_ALERT_EMAIL: SOC, SECURITY_WEBHOOK_URL: receiver.url, SECURITY_WEBHOOK_SECRET: SECRET,
      SECURITY_ALERT_MIN_SEVERITY: 'medium', SECURITY_ALERT_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    },
  });
  ({ a, b } = nodes);
  clockNow = () => a.clock.now();
  const db = a.s.database.db;
  const role = await db.insertInto('roles').values({ name: 'security.officer', description: 'Security operations' }).returning('id').executeTakeFirstOrThrow();
  const perm = await db.selectFrom('permissions').select('id').where('name', '=', 'alerts.manage').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values({ role_id: role.id, permission_id: perm.id }).execute();
  await seedUser(a.s, 'sec.officer', { roles: ['security.officer'] });
  await seedUser(a.s, 'plain.clerk', { roles: ['staff'] });
  for (const name of ['amina', 'joao', 'claire']) users[name] = (await seedUser(a.s, name)).uuid;
});
afterAll(async () => {
  await nodes?.close();
  await smtp?.close();
  await receiver?.close();
});

let seq = 0;
function input(over: Partial<AlertInput> = {}): AlertInput {
  seq++;
  return {
    rule: 'impossible_travel', severity: 'high', userId: users.amina!, auditId: null, channel: 'web', ipHash: `hash-${seq}`,
    location: { country: 'PT', city: 'Lisbon', asn: 3243, as_org: 'MEO' }, score: 85,
    indicators: [{ signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', km: 6470, minutes: 20 } }],
    dedupeKey: `test:${seq}`, ...over,
  };
}

async function call(method: 'GET' | 'POST', url: string, who = 'sec.officer', payload?: Body): Promise<Res> {
  const token = (await signIn(a.app, who)).access_token;
  return a.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload }) });
}
function ok(res: Res, code = 200): Body {
  expect(res.statusCode, res.body).toBe(code);
  return res.json() as Body;
}
const deliveries = async (alertId: string) => (await sql<{ channel: string; state: string; attempts: number; last_error: string | null }>`
  SELECT channel, state, attempts, last_error FROM security_alert_deliveries WHERE alert_id = ${alertId}::uuid ORDER BY channel`.execute(a.s.db)).rows;
const runJob = (node: TestApp = a) => node.scheduler.runNow('security alert delivery');
const metric = async (node: TestApp, pattern: RegExp): Promise<number> => Number(pattern.exec((await node.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? 0);

describe('raising an alert', () => {
  it('one event raised by two nodes at once is one alert, one audit entry and one delivery per channel; counted once', async () => {
    const event = input({ rule: 'country_hop', dedupeKey: 'signin:0195a1b2-twice' });
    const ids = await Promise.all([a.s.alerts.raise(a.s.db, event), b.s.alerts.raise(b.s.db, event), a.s.alerts.raise(a.s.db, event), b.s.alerts.raise(b.s.db, event)]);
    const raised = ids.filter((id): id is string => id !== null);
    expect(raised).toHaveLength(1);
    expect(await b.s.alerts.raise(b.s.db, event)).toBeNull(); // later, too
    const rows = (await sql<{ id: string; state: string }>`SELECT id, state FROM security_alerts WHERE dedupe_key = 'signin:0195a1b2-twice'`.execute(a.s.db)).rows;
    expect(rows).toEqual([{ id: raised[0], state: 'open' }]);
    expect(await deliveries(raised[0]!)).toEqual([
      { channel: 'email', state: 'pending', attempts: 0, last_error: null }, { channel: 'webhook', state: 'pending', attempts: 0, last_error: null }]);
    const audited = await a.s.db.selectFrom('audit_log').select(['user_id', 'status', 'details']).where('event_type', '=', 'SECURITY_ALERT_RAISED')
      .where(sql`details->>'alert_id'`, '=', raised[0]!).execute();
    expect(audited).toEqual([{ user_id: users.amina, status: 'DETECTED', details: { alert_id: raised[0], rule: 'country_hop', severity: 'high' } }]);
    const counted = (await metric(a, /^strongroom_security_alerts_total\{rule="country_hop",severity="high"\} (\d+)$/m)) + (await metric(b, /^strongroom_security_alerts_total\{rule="country_hop",severity="high"\} (\d+)$/m));
    expect(counted).toBe(1);
  });

  it('in the caller\'s transaction: rolled back with it; below SECURITY_ALERT_MIN_SEVERITY: recorded, not sent', async () => {
    const event = input({ rule: 'rolled_back' });
    await expect(a.s.db.transaction().execute(async (trx) => {
      expect(await a.s.alerts.raise(trx, event)).not.toBeNull();
      throw new Error('the caller\'s change failed');
    })).rejects.toThrow('the caller\'s change failed');
    expect((await sql`SELECT 1 FROM security_alerts WHERE dedupe_key = ${event.dedupeKey}`.execute(a.s.db)).rows).toHaveLength(0);
    const low = await a.s.alerts.raise(a.s.db, input({ rule: 'unusual_hour', severity: 'low' }));
    expect(low).not.toBeNull();
    expect(await deliveries(low!)).toEqual([]);
    await expect(a.s.alerts.raise(a.s.db, input({ rule: 'Bad Rule' }))).rejects.toThrow(/rule must be/);
  });
});

describe('delivery to the security team', () => {
  it('parallel runs of the job on both nodes send each delivery once: the webhook signed and fresh, the email over SMTP', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => a.s.alerts.raise(a.s.db, input({ rule: 'burst', severity: 'critical', userId: users.joao! }))));
    const mailsBefore = smtp.messages.length;
    await Promise.all([runJob(a), runJob(b), a.s.alertDelivery.run(), b.s.alertDelivery.run(), a.s.alertDelivery.run()]);
    await Promise.all([runJob(a), runJob(b)]); // nothing left
    const got = receiver.of('burst');
    expect(got.map((r) => r.alertId).sort()).toEqual([...ids].sort());
    expect(new Set(got.map((r) => r.deliveryId)).size).toBe(5);
    expect(got.every((r) => r.check === 'valid' && r.status === 200)).toBe(true);
    const burstMails = smtp.messages.slice(mailsBefore).filter((m) => m.subject.includes('burst'));
    expect(burstMails).toHaveLength(5);
    for (const id of ids) expect((await deliveries(id!)).map((d) => [d.channel, d.state, d.attempts])).toEqual([['email', 'sent', 1], ['webhook', 'sent', 1]]);
    // The document a SIEM indexes.
    expect(got[0]!.body).toEqual({
      type: 'security_alert', delivery_id: got[0]!.deliveryId,
      alert: {
        id: got[0]!.alertId, rule: 'burst', severity: 'critical', state: 'open', created_at: new Date(a.clock.now()).toISOString(), user_id: users.joao, username: 'joao',
        audit_id: null, channel: 'web', ip_hash: expect.stringMatching(/^hash-\d+$/), location: { country: 'PT', city: 'Lisbon', asn: 3243, as_org: 'MEO' }, score: 85,
        indicators: [{ signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', km: 6470, minutes: 20 } }],
      },
    });
  });

  it('the email reaches SECURITY_ALERT_EMAIL over the real SMTP server, saying what, whom and where', async () => {
    const id = await a.s.alerts.raise(a.s.db, input({ rule: 'mail_check', severity: 'high', userId: users.claire! }));
    const next = smtp.next();
    await runJob();
    let mail = await next;
    while (!mail.subject.includes('mail_check')) mail = await smtp.next();
    expect(mail.rcptTo).toEqual([SOC]);
    expect(mail.subject).toBe('[Strongroom] HIGH security alert: mail_check (claire)');
    expect(mail.text).toContain(`Account:     claire (${users.claire})`);
    expect(mail.text).toContain('Where:       Lisbon, PT, AS3243 (MEO)');
    expect(mail.text).toContain('  - impossible_travel (weight 40): from_country=KE, km=6470, minutes=20, to_country=PT');
    expect(mail.text).toContain(`GET /api/v1/admin/alerts/${id}`);
  });

  it('a receiver failing twice then answering 200 gets three attempts, spaced by the backoff, then no more; counted by outcome', async () => {
    const retriesBefore = await metric(a, /^strongroom_security_alert_deliveries_total\{channel="webhook",outcome="retry"\} (\d+)$/m);
    receiver.plan.set('flaky', [503, 500]);
    const id = (await a.s.alerts.raise(a.s.db, input({ rule: 'flaky' })))!;
    await runJob();
    expect(receiver.of('flaky').map((r) => r.status)).toEqual([503]);
    await runJob(); // not due yet
    await runJob(b);
    expect(receiver.of('flaky')).toHaveLength(1);
    expect((await deliveries(id)).find((d) => d.channel === 'webhook')).toEqual({ channel: 'webhook', state: 'pending', attempts: 1, last_error: 'HTTP 503' });
    a.clock.advance(HOUR);
    await runJob(b);
    a.clock.advance(HOUR);
    await runJob(a);
    a.clock.advance(HOUR);
    await Promise.all([runJob(a), runJob(b)]);
    const got = receiver.of('flaky');
    expect(got.map((r) => r.status)).toEqual([503, 500, 200]);
    expect(new Set(got.map((r) => r.deliveryId)).size).toBe(1); // one delivery, tried three times
    expect(got.every((r) => r.check === 'valid')).toBe(true); // each attempt signed afresh, within the receiver's tolerance
    expect(await deliveries(id)).toEqual([{ channel: 'email', state: 'sent', attempts: 1, last_error: null }, { channel: 'webhook', state: 'sent', attempts: 3, last_error: null }]);
    const retries = (await metric(a, /^strongroom_security_alert_deliveries_total\{channel="webhook",outcome="retry"\} (\d+)$/m)) + (await metric(b, /^strongroom_security_alert_deliveries_total\{channel="webhook",outcome="retry"\} (\d+)$/m));
    expect(retries - retriesBefore).toBe(2);
  });

  it('a receiver that never accepts gets SECURITY_ALERT_MAX_ATTEMPTS tries, then the delivery is failed, shown with its reason', async () => {
    receiver.plan.set('unreachable', Array(10).fill(500));
    const id = (await a.s.alerts.raise(a.s.db, input({ rule: 'unreachable' })))!;
    for (let i = 0; i < MAX_ATTEMPTS + 2; i++) {
      await runJob();
      a.clock.advance(HOUR);
    }
    expect(receiver.of('unreachable')).toHaveLength(MAX_ATTEMPTS);
    expect((await deliveries(id)).find((d) => d.channel === 'webhook')).toEqual({ channel: 'webhook', state: 'failed', attempts: MAX_ATTEMPTS, last_error: 'HTTP 500' });
    const view = ok(await call('GET', `/api/v1/admin/alerts/${id}`));
    expect(view.deliveries).toEqual([
      { channel: 'email', state: 'sent', attempts: 1, last_error: null, next_attempt_at: null, sent_at: expect.any(String) },
      { channel: 'webhook', state: 'failed', attempts: MAX_ATTEMPTS, last_error: 'HTTP 500', next_attempt_at: null, sent_at: null }]);
    expect(await metric(a, /^strongroom_security_alert_deliveries_total\{channel="webhook",outcome="failed"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(await metric(a, /^strongroom_security_alert_deliveries_pending (\d+)$/m)).toBe(0);
  });
});

describe('the administration routes', () => {
  let raisedAt: number;
  let alertId: string;

  it('an alert shows the account\'s audit trail from 30 minutes before it to 30 minutes after', async () => {
    const t0 = a.clock.now();
    const at = (m: number) => a.clock.set(t0 + m * MINUTE);
    at(0);
    expect((await loginFrom('203.0.113.10', a.app, 'amina')).statusCode).toBe(200); // 40 minutes before: outside
    at(20);
    expect((await loginFrom('203.0.113.11', a.app, 'amina')).statusCode).toBe(200); // 20 minutes before
    at(40);
    raisedAt = a.clock.now();
    alertId = (await a.s.alerts.raise(a.s.db, input({ rule: 'trail_check' })))!;
    at(60);
    expect((await loginFrom('203.0.113.12', a.app, 'amina')).statusCode).toBe(200); // 20 minutes after
    at(80);
    expect((await loginFrom('203.0.113.13', a.app, 'amina')).statusCode).toBe(200); // 40 minutes after: outside
    const view = ok(await call('GET', `/api/v1/admin/alerts/${alertId}`));
    expect(view).toMatchObject({ id: alertId, rule: 'trail_check', state: 'open', user_id: users.amina, username: 'amina', acknowledged: null, resolved: null });
    const trail = view.audit_trail as { from: string; to: string; entries: Array<{ timestamp: string; event_type: string; ip_address: string | null }>; truncated: boolean };
    expect(trail.from).toBe(new Date(raisedAt - 30 * MINUTE).toISOString());
    expect(trail.to).toBe(new Date(raisedAt + 30 * MINUTE).toISOString());
    expect(trail.truncated).toBe(false);
    const logins = trail.entries.filter((e) => e.event_type === 'USER_LOGIN').map((e) => e.ip_address);
    expect(logins).toEqual(['203.0.113.12', '203.0.113.11']); // newest first; the two outside the window are not there
    expect(trail.entries.map((e) => e.event_type)).toContain('SECURITY_ALERT_RAISED');
    for (const e of trail.entries) expect(Math.abs(Date.parse(e.timestamp) - raisedAt)).toBeLessThan(30 * MINUTE);
  });

  it('acknowledge, then resolve with a note, each once and audited; a second time 409; an unknown id 404', async () => {
    const acked = ok(await call('POST', `/api/v1/admin/alerts/${alertId}/acknowledge`, 'sec.officer', { note: 'Calling the customer.' }));
    expect(acked).toMatchObject({ state: 'acknowledged', acknowledged: { at: new Date(a.clock.now()).toISOString(), by_username: 'sec.officer', note: 'Calling the customer.' }, resolved: null });
    const again = expectError(await call('POST', `/api/v1/admin/alerts/${alertId}/acknowledge`, 'sec.officer', {}), 409, 'ALERT_ALREADY_ACKNOWLEDGED');
    expect(again.details).toMatchObject({ acknowledged_at: new Date(a.clock.now()).toISOString() });
    expectError(await call('POST', `/api/v1/admin/alerts/${alertId}/resolve`, 'sec.officer', {}), 422, 'VALIDATION_ERROR'); // a note is required
    const resolved = ok(await call('POST', `/api/v1/admin/alerts/${alertId}/resolve`, 'sec.officer', { note: 'Customer confirmed the trip; no action.' }));
    expect(resolved).toMatchObject({ state: 'resolved', resolved: { by_username: 'sec.officer', note: 'Customer confirmed the trip; no action.' } });
    expectError(await call('POST', `/api/v1/admin/alerts/${alertId}/resolve`, 'sec.officer', { note: 'again' }), 409, 'ALERT_RESOLVED');
    expectError(await call('POST', `/api/v1/admin/alerts/${alertId}/acknowledge`, 'sec.officer', {}), 409, 'ALERT_RESOLVED');
    const unknown = '0195a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
    expectError(await call('GET', `/api/v1/admin/alerts/${unknown}`), 404, 'ALERT_NOT_FOUND');
    expectError(await call('POST', `/api/v1/admin/alerts/${unknown}/acknowledge`, 'sec.officer', {}), 404, 'ALERT_NOT_FOUND');
    expectError(await call('POST', `/api/v1/admin/alerts/${unknown}/resolve`, 'sec.officer', { note: 'x' }), 404, 'ALERT_NOT_FOUND');
    const audited = await a.s.db.selectFrom('audit_log').select(['event_type', 'username', 'details']).where('event_type', 'in', ['SECURITY_ALERT_ACKNOWLEDGED', 'SECURITY_ALERT_RESOLVED'])
      .where(sql`details->>'alert_id'`, '=', alertId).orderBy('event_type').execute(); // one frozen instant: by name
    expect(audited.map((e) => [e.event_type, e.username, (e.details as Body).note])).toEqual([
      ['SECURITY_ALERT_ACKNOWLEDGED', 'sec.officer', 'Calling the customer.'], ['SECURITY_ALERT_RESOLVED', 'sec.officer', 'Customer confirmed the trip; no action.']]);
  });

  it('a parallel burst of resolutions resolves once: one 200, the rest 409 ALERT_RESOLVED', async () => {
    const id = (await a.s.alerts.raise(a.s.db, input({ rule: 'race' })))!;
    const tokens = await Promise.all([(await signIn(a.app, 'sec.officer')).access_token, (await signIn(b.app, 'sec.officer')).access_token]);
    const results = await Promise.all([0, 1, 0, 1].map((i) => [a, b][i]!.app.inject({ method: 'POST', url: `/api/v1/admin/alerts/${id}/resolve`, headers: bearer(tokens[i]!), payload: { note: `by ${i}` } })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409]);
    for (const r of results.filter((x) => x.statusCode === 409)) expect((r.json() as Body).error_code).toBe('ALERT_RESOLVED');
  });

  it('lists with filters (state, severity, rule, user, time) and keyset pages that cover every match once', async () => {
    const start = a.clock.now() + MINUTE;
    a.clock.set(start);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await a.s.alerts.raise(a.s.db, input({ rule: 'paging', severity: i % 2 === 0 ? 'medium' : 'critical', userId: i < 3 ? users.claire! : users.joao! })))!);
      if (i !== 2) a.clock.advance(MINUTE); // two alerts share one instant: the page order breaks the tie by id
    }
    const list = async (q: string) => ok(await call('GET', `/api/v1/admin/alerts?${q}`)) as { alerts: Array<{ id: string; severity: string; user_id: string }>; total: number; total_exact: boolean; next_cursor: string | null };
    const all = await list('rule=paging');
    expect(all).toMatchObject({ total: 5, total_exact: true, next_cursor: null });
    expect(new Set(all.alerts.map((x) => x.id))).toEqual(new Set(made));
    expect((await list('rule=paging&severity=critical')).alerts.map((x) => x.id).sort()).toEqual([made[1], made[3]].sort());
    expect((await list(`rule=paging&user_id=${users.joao}`)).alerts.map((x) => x.id).sort()).toEqual([made[3], made[4]].sort());
    expect((await list(`rule=paging&from=${encodeURIComponent(new Date(start + 2 * MINUTE).toISOString())}`)).alerts.map((x) => x.id).sort()).toEqual([made[2], made[3], made[4]].sort());
    expect((await list(`rule=paging&to=${encodeURIComponent(new Date(start + MINUTE).toISOString())}`)).total).toBe(1);
    ok(await call('POST', `/api/v1/admin/alerts/${made[0]}/resolve`, 'sec.officer', { note: 'done' }));
    expect((await list('rule=paging&state=open')).total).toBe(4);
    expect((await list('state=resolved')).alerts.map((x) => x.id)).toContain(made[0]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`rule=paging&page_size=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.alerts.length).toBeLessThanOrEqual(2);
      seen.push(...page.alerts.map((x) => x.id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(all.alerts.map((x) => x.id)); // the same order, each once
    expectError(await call('GET', '/api/v1/admin/alerts?cursor=bm90LWEtY3Vyc29y'), 422, 'VALIDATION_ERROR');
    expectError(await call('GET', '/api/v1/admin/alerts?severity=severe'), 422, 'VALIDATION_ERROR');
  });

  it('threat: an account without alerts.manage is refused every route (403 PERMISSION_DENIED), and the admin role holds it', async () => {
    const routes: Array<['GET' | 'POST', string, Body | undefined]> = [
      ['GET', '/api/v1/admin/alerts', undefined], ['GET', `/api/v1/admin/alerts/${alertId}`, undefined],
      ['POST', `/api/v1/admin/alerts/${alertId}/acknowledge`, {}], ['POST', `/api/v1/admin/alerts/${alertId}/resolve`, { note: 'x' }]];
    for (const [method, url, payload] of routes) expectError(await call(method, url, 'plain.clerk', payload), 403, 'PERMISSION_DENIED');
    const holders = await a.s.db.selectFrom('role_permissions as rp').innerJoin('roles as r', 'r.id', 'rp.role_id').innerJoin('permissions as p', 'p.id', 'rp.permission_id')
      .select('r.name').where('p.name', '=', 'alerts.manage').orderBy('r.name').execute();
    expect(holders.map((h) => h.name)).toEqual(['admin', 'security.officer']);
  });
});
