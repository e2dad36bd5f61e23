/**
 * The account holder is told when a passkey is added to or removed from their account, as a
 * contact change is told (src/passkeys/notices.ts): by email when the account has an address (a
 * real SMTP server on loopback), else by SMS to its phone (the test gateway), in the holder's
 * language, and never with the name whoever added the passkey chose.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { startSmsGateway, type TestSmsGateway } from '../harness/sms-gateway.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';
import { SoftAuthenticator } from '../harness/webauthn.js';

const ORIGIN = 'https://app.bank.example';
/** What an intruder might name a passkey, hoping the bank's notice carries it. */
const BAIT = 'Call 800-555-0199 to cancel';

type Json = Record<string, unknown>;
interface Options { challenge_id: string; options: { challenge: string; rp: { id: string }; user: { id: string } } }

let t: TestApp;
let smtp: TestSmtp;
let gw: TestSmsGateway;
let seq = 0;

beforeAll(async () => {
  smtp = await startSmtp();
  gw = await startSmsGateway();
  t = await createTestApp({
    env: {
      WEBAUTHN_RP_ID: 'bank.example', WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: ORIGIN,
      SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', SMS_GATEWAY_URL: gw.url, SMS_GATEWAY_TOKEN: gw.token,
    },
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await gw?.close();
});

/** A subject as the reader sees it: RFC 2047 encoded words (non-ASCII subjects) decoded. */
function subjectOf(raw: string): string {
  return raw.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) => (enc.toUpperCase() === 'B'
    ? Buffer.from(text, 'base64').toString('utf8')
    : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8')));
}

const post = (url: string, payload: Json, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });
const when = (): string => new Date(t.clock.now()).toISOString().slice(0, 16).replace('T', ' ');

/** A customer with these contacts and language, signed in, with a passkey named BAIT; the notices sent. */
async function withPasskey(contacts: { email?: string; phone?: string }, language: 'en' | 'pt' | 'fr') {
  const username = `notice.user${++seq}`;
  const user = await seedUser(t.s, username, contacts);
  await t.s.database.db.updateTable('users').set({ language }).where('id', '=', user.id).execute();
  const session = await signIn(t.app, username);
  const o = (await post('/api/v1/passkeys/registration/options', { current_password: STRONG_PASSWORD }, bearer(session.access_token))).json<Options>();
  const auth = new SoftAuthenticator();
  const res = await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: BAIT, response: auth.register(o.options, { origin: ORIGIN }) }, bearer(session.access_token));
  expect(res.statusCode, res.body).toBe(200);
  await t.s.passkeys.settled();
  return { user, username, session, auth, passkey: res.json<{ id: string }>() };
}

describe('passkey notices', () => {
  it('by email, in the holder\'s language, when a passkey is added and when the holder removes it; never with its name, and no SMS beside', async () => {
    const email = `notice.pt.${seq}@bank.example`;
    const phone = '+351912000001';
    const { username, session, auth, passkey } = await withPasskey({ email, phone }, 'pt');
    const added = smtp.to(email).at(-1)!;
    expect(subjectOf(added.subject)).toBe('Foi adicionada uma chave de acesso à sua conta');
    expect(added.text).toContain(`(${username}) em ${when()} (UTC)`);
    expect(added.text).not.toContain(BAIT);

    const o = (await post('/api/v1/auth/passkey/step-up/options', {}, bearer(session.access_token))).json<Options>();
    const stepped = await post('/api/v1/auth/passkey/step-up/verify', { challenge_id: o.challenge_id, response: auth.assert(o.options as never, { origin: ORIGIN }) }, bearer(session.access_token));
    expect(stepped.statusCode, stepped.body).toBe(200);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/passkeys/${passkey.id}`, headers: bearer(session.access_token) });
    expect(del.statusCode, del.body).toBe(200);
    await t.s.passkeys.settled();
    const removed = smtp.to(email).at(-1)!;
    expect(subjectOf(removed.subject)).toBe('Foi removida uma chave de acesso da sua conta');
    expect(removed.text).not.toContain('administrador');
    expect(removed.text).not.toContain(BAIT);
    expect(gw.messages.filter((m) => m.to === phone)).toEqual([]);
  });

  it('without an email address, by SMS to the phone, in one GSM-7 segment', async () => {
    const phone = '+254712000077';
    await withPasskey({ phone }, 'fr');
    const sms = gw.latest(phone)!;
    expect(sms.message).toBe(`Strongroom : une clé d'accès a été ajoutée à votre compte le ${when()} UTC. Pas vous ? Appelez la banque.`);
    expect(sms.message.length).toBeLessThanOrEqual(160);
  });

  it('an administrator\'s removal says so', async () => {
    const email = `notice.en.${seq}@bank.example`;
    const { user, passkey } = await withPasskey({ email }, 'en');
    expect(smtp.to(email).at(-1)!.subject).toBe('A passkey was added to your account');
    const adminName = `notice.admin${++seq}`;
    await seedUser(t.s, adminName, { roles: ['admin'] });
    const admin = await signIn(t.app, adminName);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${user.uuid}/passkeys/${passkey.id}`, headers: bearer(admin.access_token) });
    expect(res.statusCode, res.body).toBe(200);
    await t.s.passkeys.settled();
    const removed = smtp.to(email).at(-1)!;
    expect(removed.subject).toBe('A passkey was removed from your account');
    expect(removed.text).toContain(`on ${when()} (UTC) by an administrator of the bank.`);
  });
});
