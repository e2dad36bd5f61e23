/**
 * Threat: an operator (an insider, or an impostor at the desk) resets a customer's USSD PIN and
 * holds the reset token in their browser. The customer must hear of it at once, on their own
 * contacts (src/pins/notices.ts): the email (a real SMTP server on loopback) and the phone by SMS
 * (the test gateway), in their language, with the time and "if this wasn't you, call us"; never
 * the reset token. A mail server that is down does not break the branch's reset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { pinResetSms } from '../../src/pins/notices.js';
import { createTestApp, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn } from '../harness/fixtures.js';
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

  it('a mail server that is down does not break the branch\'s reset: the token is given all the same', async () => {
    const down = await createTestApp({ database: t.s.database, clock: t.clock, secrets, env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`, SMTP_FROM: 'security@bank.example' } });
    try {
      const user = await seedUser(down.s, 'mail.down.pin', { email: 'mail.down.pin@bank.example' });
      const token = (await signIn(down.app, 'pin.operator')).access_token;
      const res = await resetPin(down.app, user.uuid, token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ customer_notified: ['email'], reset_token: expect.any(String) });
      await down.s.pinResetNotices.settled();
    } finally {
      await down.closeApp();
    }
  });
});
