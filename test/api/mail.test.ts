/**
 * Email delivery of temporary passwords (issue 2 section 3, issue 4 section 3) over real SMTP:
 * an smtp-server on loopback receives what nodemailer sends. When email applies, the password
 * reaches only the user's mailbox; when the SMTP server refuses, nothing is changed (503).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/service.js';
import { createMailer } from '../../src/mail/mailer.js';
import { loadConfig } from '../../src/platform/config.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn } from '../harness/fixtures.js';
import { closedPort, startSmtp, type ReceivedMail, type TestSmtp } from '../harness/smtp.js';

type Res = Awaited<ReturnType<typeof login>>;

const passwordIn = (mail: ReceivedMail): string => /^Temporary password: (\S+)$/m.exec(mail.text)![1]!;

async function audit(t: TestApp, token: string, query: string): Promise<AuditEntry[]> {
  return ((await t.app.inject({ method: 'GET', url: `/api/v1/admin/audit?${query}`, headers: bearer(token) })).json() as { entries: AuditEntry[] }).entries;
}

/** The temporary password signs in only to be changed (ruling 11); the change works. */
async function changeFromTemporary(t: TestApp, username: string, temporary: string): Promise<void> {
  const forced = expectError(await login(t.app, username, temporary), 403, 'PASSWORD_CHANGE_REQUIRED');
  const resetToken = (forced.details as { reset_token: string }).reset_token;
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/password', payload: { reset_token: resetToken, new_password: OTHER_PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  await signIn(t.app, username, OTHER_PASSWORD);
}

describe('with SMTP_URL set', () => {
  let smtp: TestSmtp;
  let t: TestApp;
  let root: string;
  const create = (payload: Record<string, unknown>): Promise<Res> => t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(root), payload });

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await createTestApp({ env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>' } });
    await seedUser(t.s, 'root.admin', { roles: ['admin'], email: 'root@bank.example' });
    root = (await signIn(t.app, 'root.admin')).access_token;
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('creating a user with an email mails the temporary password and leaves it out of the response', async () => {
    const arrived = smtp.next();
    const res = await create({ username: 'nia.wambui', email: 'Nia@Bank.example', full_name: 'Nia Wambui', roles: ['customer'] });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ delivery: 'email', user: { username: 'nia.wambui', must_change_password: true } });
    expect(body).not.toHaveProperty('temporary_password');

    const mail = await arrived;
    expect(mail.rcptTo).toEqual(['Nia@bank.example']); // nodemailer normalises the domain
    expect(mail.from).toBe('Strongroom Bank <security@bank.example>');
    expect(mail.subject).toBe('Your new account: temporary password');
    expect(mail.text).toContain('Dear Nia Wambui,');
    expect(mail.text).toContain('Username: nia.wambui');
    const password = passwordIn(mail);
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(res.body).not.toContain(password);

    const [created] = await audit(t, root, `event_type=USER_CREATED&user_id=${(body.user as { uuid: string }).uuid}`);
    expect(created).toMatchObject({ status: 'SUCCESS', details: { delivery: 'email', recipient: 'N***@Bank.example' } });
    expect(JSON.stringify(created)).not.toContain(password);

    await changeFromTemporary(t, 'nia.wambui', password);
  });

  it('a user without an email gets the password in the response (delivery "response") and no mail is sent', async () => {
    const before = smtp.messages.length;
    const res = await create({ username: 'kiosk.operator', roles: ['operator'] });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as { delivery: string; temporary_password: string };
    expect(body.delivery).toBe('response');
    expect(body.temporary_password.length).toBeGreaterThanOrEqual(12);
    expect(smtp.messages.length).toBe(before);
    await changeFromTemporary(t, 'kiosk.operator', body.temporary_password);
  });

  it('reset-password mails the new temporary password, ends the sessions and returns no password', async () => {
    const user = await seedUser(t.s, 'omar.reset', { email: 'omar@bank.example' });
    const session = await signIn(t.app, 'omar.reset');
    const arrived = smtp.next();
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/reset-password`, headers: bearer(root) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'success', delivery: 'email' });
    const mail = await arrived;
    expect(mail.rcptTo).toEqual(['omar@bank.example']);
    expect(mail.subject).toBe('Your password has been reset: temporary password');
    expect(mail.text).toContain('Dear omar.reset,');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(session.access_token) }), 401, 'SESSION_INVALID');
    const [entry] = await audit(t, root, `event_type=PASSWORD_RESET_BY_ADMIN&user_id=${user.uuid}`);
    expect(entry).toMatchObject({ status: 'SUCCESS', details: { delivery: 'email', recipient: 'o***@bank.example', sessions_ended: 1 } });
    await changeFromTemporary(t, 'omar.reset', passwordIn(mail));
  });
});

describe('when the SMTP server is down', () => {
  let t: TestApp;
  let root: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` } });
    await seedUser(t.s, 'root.admin', { roles: ['admin'] });
    root = (await signIn(t.app, 'root.admin')).access_token;
  });
  afterAll(async () => t.close());

  it('creating a user with an email answers 503 MAIL_DELIVERY_FAILED and creates nothing', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(root), payload: { username: 'lost.mail', email: 'lost@bank.example', roles: ['customer'] } });
    const body = expectError(res, 503, 'MAIL_DELIVERY_FAILED');
    expect(body).not.toHaveProperty('temporary_password');
    expect(await t.s.users.findByLogin('lost.mail')).toBeUndefined();
    expect(await t.s.users.findByLogin('lost@bank.example')).toBeUndefined();

    const failed = (await audit(t, root, 'event_type=USER_CREATED')).filter((e) => e.status === 'FAILURE');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ user_id: null, username: 'lost.mail', details: { delivery: 'email', recipient: 'l***@bank.example', error_code: 'MAIL_DELIVERY_FAILED', reason: 'ESOCKET ECONNREFUSED during CONN', rolled_back: true } });

    // Nothing half-done: the same request goes through once mail is not needed.
    const retry = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(root), payload: { username: 'lost.mail', roles: ['customer'] } });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.json()).toMatchObject({ delivery: 'response' });
  });

  it('reset-password answers 503 MAIL_DELIVERY_FAILED and keeps the old password and the sessions', async () => {
    const user = await seedUser(t.s, 'kept.password', { email: 'kept@bank.example' });
    const session = await signIn(t.app, 'kept.password');
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/reset-password`, headers: bearer(root) });
    expectError(res, 503, 'MAIL_DELIVERY_FAILED');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(session.access_token) })).statusCode).toBe(200);
    await signIn(t.app, 'kept.password');
    const entries = await audit(t, root, `event_type=PASSWORD_RESET_BY_ADMIN&user_id=${user.uuid}`);
    expect(entries).toHaveLength(1); // only the failure: the reset itself rolled back
    expect(entries[0]).toMatchObject({ status: 'FAILURE', details: { error_code: 'MAIL_DELIVERY_FAILED', rolled_back: true } });
  });
});

describe('SMTP credentials in SMTP_URL', () => {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp({ auth: { user: 'strongroom', pass: 'S3cret/Pa ss' } });
  });
  afterAll(async () => smtp.close());

  it('authenticates with them, and a refused login never puts them in the log', async () => {
    const good = createMailer(loadConfig({ SMTP_URL: `smtp://strongroom:${encodeURIComponent('S3cret/Pa ss')}@127.0.0.1:${smtp.port}` }), log);
    const { messageId } = await good.send({ to: 'a@bank.example', subject: 'hello', text: 'body' });
    expect(messageId).toMatch(/^<.+>$/);
    expect(smtp.to('a@bank.example')).toHaveLength(1);

    const bad = createMailer(loadConfig({ SMTP_URL: `smtp://strongroom:WrongPassw0rd@127.0.0.1:${smtp.port}` }), log);
    await expect(bad.send({ to: 'b@bank.example', subject: 'hello', text: 'body' })).rejects.toMatchObject({ name: 'MailDeliveryError', reason: 'EAUTH SMTP 535 during AUTH' });
    expect(smtp.to('b@bank.example')).toHaveLength(0);
    const text = lines.join('');
    expect(text).toContain(`SMTP at 127.0.0.1:${smtp.port}`);
    for (const secret of ['WrongPassw0rd', 'S3cret', Buffer.from('\0strongroom\0WrongPassw0rd').toString('base64')]) expect(text).not.toContain(secret);
  });
});

describe('clear-text email (issue 9 section 9): SMTP_REQUIRE_TLS', () => {
  const log = pino({ level: 'silent' });
  const message = (to: string) => ({ to, subject: 'Your one-time code', text: 'Code: 123456' });
  let plain: TestSmtp;
  let selfSigned: TestSmtp;
  beforeAll(async () => {
    plain = await startSmtp(); // offers no STARTTLS
    selfSigned = await startSmtp({ starttls: true });
  });
  afterAll(async () => {
    await plain.close();
    await selfSigned.close();
  });

  it('clear-text email: with SMTP_REQUIRE_TLS a server that offers no STARTTLS gets nothing: the send fails and the message never reaches it', async () => {
    const mailer = createMailer(loadConfig({ SMTP_URL: plain.url, SMTP_REQUIRE_TLS: '1' }), log);
    await expect(mailer.send(message('required@bank.example'))).rejects.toMatchObject({ name: 'MailDeliveryError', reason: expect.stringMatching(/^ETLS SMTP 5\d\d during STARTTLS$/) });
    expect(plain.messages).toHaveLength(0);
    mailer.close?.();
  });

  it('control: the same server gets the message when TLS is not required (what production refuses by default)', async () => {
    const mailer = createMailer(loadConfig({ SMTP_URL: plain.url, SMTP_REQUIRE_TLS: '0' }), log);
    await mailer.send(message('not.required@bank.example'));
    expect(plain.to('not.required@bank.example')).toHaveLength(1);
    mailer.close?.();
  });

  it('a server whose STARTTLS certificate does not verify gets nothing either: no fallback to clear text', async () => {
    // smtp-server's built-in certificate: self-signed, and expired.
    const mailer = createMailer(loadConfig({ SMTP_URL: selfSigned.url, SMTP_REQUIRE_TLS: '1' }), log);
    await expect(mailer.send(message('untrusted@bank.example'))).rejects.toMatchObject({ name: 'MailDeliveryError', reason: expect.stringMatching(/^ESOCKET (CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT|UNABLE_TO_VERIFY)/) });
    expect(selfSigned.messages).toHaveLength(0);
    mailer.close?.();
  });
});
