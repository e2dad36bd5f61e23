/**
 * Threat: an operator (an insider, or an impostor at the desk) resets a customer's USSD PIN and
 * holds the reset token in their browser. The customer must hear of it at once, on their own
 * contacts (src/pins/notices.ts): the email (a real SMTP server on loopback) and the phone by SMS
 * (the test gateway), in their language, with the time and "if this wasn't you, call us"; never
 * the reset token. A mail server that is down, or that accepts the connection and never answers,
 * does not hold the branch's reset (the notice is started once the removal is committed and runs
 * in the background); a notice that could not be delivered is logged at warn and audited
 * PIN_RESET_NOTICE_FAILED, so the customer can be called.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { pinResetSms } from '../../src/pins/notices.js';
import { createTestApp, testSecrets, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, seedUser, signIn } from '../harness/fixtures.js';
import { captureLog, type LogLine } from '../harness/log-capture.js';
import { startSmsGateway, type TestSmsGateway } from '../harness/sms-gateway.js';
import { closedPort, startSmtp, type TestSmtp } from '../harness/smtp.js';

const AT = Date.parse('2026-11-27T08:42:10.000Z');
let t: TestApp;
let smtp: TestSmtp;
let gw: TestSmsGateway;
let adminToken: string;
const secrets = testSecrets();

beforeAll(async () => {
  smtp = await startSmtp();
  gw = await startSmsGateway();
  t = await createTestApp({
    clock: new ManualClock(AT), secrets,
    env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', SMS_GATEWAY_URL: gw.url, SMS_GATEWAY_TOKEN: gw.token },
  });
  await seedUser(t.s, 'pin.operator', { roles: ['admin'] });
  adminToken = (await signIn(t.app, 'pin.operator')).access_token;
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await gw?.close();
});

const resetPin = (app: TestApp['app'], id: string, token: string) => app.inject({ method: 'POST', url: `/api/v1/admin/users/${id}/reset-pin`, headers: bearer(token) });

describe('threat: a PIN reset by an operator is told to the customer at once', () => {
  it('by email and by SMS, with the time and "call us", never the reset token; the answer and the audit trail say who was told', async () => {
    const email = 'wanjiru.pin@bank.example';
    const phone = '+254712000451';
    const user = await seedUser(t.s, 'wanjiru.pin', { email, phone });
    const res = await resetPin(t.app, user.uuid, adminToken);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ reset_token: string; customer_notified: string[] }>();
    expect(body.customer_notified).toEqual(['email', 'sms']);
    await t.s.pinResetNotices.settled();

    const mail = smtp.to(email).at(-1)!;
    expect(mail.subject).toBe('Your USSD PIN was reset by the bank');
    expect(mail.text).toContain('The USSD PIN of your account (wanjiru.pin) was reset by a member of the bank\'s staff on 2026-11-27 08:42 (UTC).');
    expect(mail.text).toContain('If this wasn\'t you');
    const sms = gw.latest(phone)!;
    expect(sms.message).toBe('Strongroom: your USSD PIN was reset by the bank on 2026-11-27 08:42 UTC. If this wasn\'t you, call us now on the number you know.');
    for (const text of [mail.raw, sms.message, sms.reference]) expect(text).not.toContain(body.reset_token);

    const audit = await t.s.database.db.selectFrom('audit_log').select('details').where('user_id', '=', user.uuid).where('event_type', '=', 'PIN_RESET_BY_ADMIN').executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ customer_notified: ['email', 'sms'], reset_by: 'pin.operator' });
  });

  it('in the customer\'s language; a customer with a phone only is told by SMS', async () => {
    const phone = '+351912000452';
    const user = await seedUser(t.s, 'joao.pin', { phone });
    await t.s.database.db.updateTable('users').set({ language: 'pt' }).where('id', '=', user.id).execute();
    const res = await resetPin(t.app, user.uuid, adminToken);
    expect(res.json()).toMatchObject({ customer_notified: ['sms'] });
    await t.s.pinResetNotices.settled();
    expect(gw.latest(phone)!.message).toBe(pinResetSms('Strongroom', new Date(AT), 'pt'));
    expect(gw.latest(phone)!.message).toContain('Nao foi voce? Ligue-nos');
  });

  it('told even when a step after the commit fails: the PIN is removed, so the customer hears of it though the operator gets a 500', async () => {
    const phone = '+254712000453';
    const user = await seedUser(t.s, 'late.failure.pin', { phone });
    await t.s.database.db.transaction().execute(async (trx) => t.s.pins.store(trx, user, await t.s.pins.prepare(user, '2580')));
    const issue = vi.spyOn(t.s.tokens, 'issue').mockRejectedValueOnce(new Error('the token service failed'));
    try {
      const res = await resetPin(t.app, user.uuid, adminToken);
      expect(res.statusCode, res.body).toBe(500);
    } finally {
      issue.mockRestore();
    }
    await t.s.pinResetNotices.settled();
    expect(await t.s.pins.verify(user, '2580', 'test')).toBe(false);
    expect(gw.latest(phone)!.message).toBe(pinResetSms('Strongroom', new Date(AT), user.language));
  });

  it('a mail server that is down does not break the branch\'s reset: the token is given all the same; the failed notice is logged and audited', async () => {
    const { log, lines } = captureLog('warn');
    const down = await createTestApp({ database: t.s.database, clock: t.clock, secrets, log, env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`, SMTP_FROM: 'security@bank.example' } });
    try {
      const user = await seedUser(down.s, 'mail.down.pin', { email: 'mail.down.pin@bank.example' });
      const token = (await signIn(down.app, 'pin.operator')).access_token;
      const res = await resetPin(down.app, user.uuid, token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ customer_notified: ['email'], reset_token: expect.any(String) });
      await down.s.pinResetNotices.settled();
      await expectNoticeFailed(user.uuid, lines);
    } finally {
      await down.closeApp();
    }
  });

  it('a mail server that accepts the connection and never answers does not hold the reset: the answer comes while the connection hangs', async () => {
    const held: net.Socket[] = [];
    const received: Buffer[] = [];
    let accepted!: () => void;
    const connected = new Promise<void>((resolve) => { accepted = resolve; });
    const silent = net.createServer((socket) => {
      held.push(socket);
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.on('error', () => undefined);
      accepted();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { log, lines } = captureLog('warn');
    const hung = await createTestApp({ database: t.s.database, clock: t.clock, secrets, log, env: { SMTP_URL: `smtp://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, SMTP_FROM: 'security@bank.example' } });
    try {
      const user = await seedUser(hung.s, 'mail.hangs.pin', { email: 'mail.hangs.pin@bank.example' });
      const token = (await signIn(hung.app, 'pin.operator')).access_token;
      const res = await resetPin(hung.app, user.uuid, token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ customer_notified: ['email'], reset_token: expect.any(String) });

      // The answer is in, and the notice is still under way: the server holds the connection it
      // accepted and has been sent nothing (the client waits for a greeting that never comes),
      // and no failure was logged or audited yet.
      await connected;
      expect(held.map((s) => s.destroyed)).toEqual([false]);
      expect(received).toEqual([]);
      expect(lines.filter((l) => l.msg === 'PIN reset notice not delivered')).toEqual([]);
      expect(await auditTotal(t.s, user.uuid, 'PIN_RESET_NOTICE_FAILED')).toBe(0);

      // The server hangs up: the notice fails, logged and audited.
      for (const socket of held) socket.destroy();
      await hung.s.pinResetNotices.settled();
      await expectNoticeFailed(user.uuid, lines);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await hung.closeApp();
    }
  });
});

/** The warn line and the PIN_RESET_NOTICE_FAILED entry of a notice by email that did not go. */
async function expectNoticeFailed(userUuid: string, lines: LogLine[]): Promise<void> {
  expect(lines.filter((l) => l.msg === 'PIN reset notice not delivered').map((l) => ({ via: l.via, user_id: l.user_id }))).toEqual([{ via: 'email', user_id: userUuid }]);
  const failed = await t.s.database.db.selectFrom('audit_log').select(['status', 'details']).where('user_id', '=', userUuid).where('event_type', '=', 'PIN_RESET_NOTICE_FAILED').execute();
  expect(failed).toEqual([{ status: 'FAILURE', details: { via: 'email', reason: expect.stringMatching(/^E[A-Z]+/), reset_by: 'pin.operator', reset_by_id: expect.any(String) } }]);
}
