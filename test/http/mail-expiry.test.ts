/**
 * Password expiry warnings (SPEC "Password rules": a warning is emailed 7 days before expiry)
 * over real SMTP: once per password, never twice even with two nodes running the job at once,
 * re-armed by a password change, skipped for users without an email, inert without SMTP_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createTwoNodes, type TestApp, type TwoNodes } from '../harness/app.js';
import { admin, auditTotal, bearer, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { closedPort, startSmtp, type TestSmtp } from '../harness/smtp.js';

const DAY = 86_400_000;

async function warnedAt(t: TestApp, userId: number): Promise<Date | null> {
  const row = await t.s.database.db.selectFrom('credentials').select('expiry_warned_at').where('user_id', '=', userId).where('type', '=', 'password').executeTakeFirstOrThrow();
  return row.expiry_warned_at;
}

describe('with SMTP_URL set, on two nodes sharing one database', () => {
  let smtp: TestSmtp;
  let a: TestApp;
  let b: TestApp;
  let nodes: TwoNodes;

  beforeAll(async () => {
    smtp = await startSmtp();
    nodes = await createTwoNodes({ env: { SMTP_URL: smtp.url } });
    ({ a, b } = nodes);
  });
  afterAll(async () => {
    await nodes.close();
    await smtp.close();
  });

  it('emails one warning when the password is within 7 days of expiry (90-day regular password), and only once', async () => {
    const user = await seedUser(a.s, 'ella.expiring', { email: 'ella@bank.example' });
    a.clock.advance(82 * DAY); // 8 days left: not yet
    await a.s.expiryWarnings.run();
    expect(smtp.to('ella@bank.example')).toHaveLength(0);

    a.clock.advance(2 * DAY); // 6 days left
    expect(await a.s.expiryWarnings.run()).toBe(1);
    const [mail] = smtp.to('ella@bank.example');
    expect(mail!.subject).toBe('Your password expires in 6 days');
    expect(mail!.text).toContain('The password of your account (ella.expiring) expires on');
    expect(mail!.text).not.toContain(STRONG_PASSWORD);
    expect(await warnedAt(a, user.id)).not.toBeNull();
    expect(await auditTotal(a.s, user.uuid, 'PASSWORD_EXPIRY_WARNING')).toBe(1);

    expect(await a.s.expiryWarnings.run()).toBe(0);
    expect(await b.s.expiryWarnings.run()).toBe(0);
    expect(smtp.to('ella@bank.example')).toHaveLength(1);
  });

  it('two nodes running the job at the same time still send one mail per user', async () => {
    const users = [];
    for (let i = 1; i <= 5; i++) users.push(await seedUser(a.s, `race.user.${i}`, { email: `race${i}@bank.example` }));
    a.clock.advance(84 * DAY);
    const counts = await Promise.all([a.s.expiryWarnings.run(), b.s.expiryWarnings.run(), a.s.expiryWarnings.run(), b.s.expiryWarnings.run()]);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(5);
    for (let i = 1; i <= 5; i++) expect(smtp.to(`race${i}@bank.example`), `race${i}`).toHaveLength(1);
    for (const u of users) expect(await auditTotal(a.s, u.uuid, 'PASSWORD_EXPIRY_WARNING')).toBe(1);
  });

  it('changing the password clears the warning, and the new password gets its own', async () => {
    const user = await seedUser(a.s, 'pat.changer', { email: 'pat@bank.example' });
    a.clock.advance(84 * DAY);
    await a.s.expiryWarnings.run();
    expect(smtp.to('pat@bank.example')).toHaveLength(1);

    const session = await signIn(a.app, 'pat.changer');
    expect(session.actions).toContain('CHANGE_PASSWORD_SOON');
    const res = await a.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(session.access_token), payload: { current_password: STRONG_PASSWORD, new_password: OTHER_PASSWORD } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await warnedAt(a, user.id)).toBeNull();

    await b.s.expiryWarnings.run();
    expect(smtp.to('pat@bank.example')).toHaveLength(1); // the new password expires in 90 days
    a.clock.advance(84 * DAY);
    await b.s.expiryWarnings.run();
    expect(smtp.to('pat@bank.example')).toHaveLength(2);
  });

  it('skips users without an email address; their sign-in response carries CHANGE_PASSWORD_SOON', async () => {
    const user = await seedUser(a.s, 'no.email.user');
    a.clock.advance(84 * DAY);
    const before = smtp.messages.length;
    await a.s.expiryWarnings.run();
    expect(smtp.messages.length).toBe(before);
    expect(await warnedAt(a, user.id)).toBeNull();
    expect(await auditTotal(a.s, user.uuid, 'PASSWORD_EXPIRY_WARNING')).toBe(0);
    expect((await signIn(a.app, 'no.email.user')).actions).toContain('CHANGE_PASSWORD_SOON');
  });

  it('never warns about a temporary password (it has no expiry; it must be changed at first sign-in)', async () => {
    await admin(a.s).createUser({ username: 'temp.only', email: 'temp@bank.example', roles: ['customer'] }, { uuid: null, username: 'test' });
    a.clock.advance(84 * DAY);
    await a.s.expiryWarnings.run();
    expect(smtp.to('temp@bank.example')).toHaveLength(0);
  });
});

describe('when the SMTP server is down', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` } });
  });
  afterAll(async () => t.close());

  it('releases the claim so a later run retries, and does not crash', async () => {
    const user = await seedUser(t.s, 'retry.later', { email: 'retry@bank.example' });
    t.clock.advance(84 * DAY);
    expect(await t.s.expiryWarnings.run()).toBe(0);
    expect(await warnedAt(t, user.id)).toBeNull();
    expect(await auditTotal(t.s, user.uuid, 'PASSWORD_EXPIRY_WARNING')).toBe(0);
  });
});

describe('without SMTP_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('sends nothing, claims nothing, and returns temporary passwords in the response', async () => {
    expect(t.s.mailer.configured).toBe(false);
    const user = await seedUser(t.s, 'quiet.user', { email: 'quiet@bank.example' });
    await seedUser(t.s, 'quiet.admin', { roles: ['admin'] });
    const token = (await signIn(t.app, 'quiet.admin')).access_token;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(token), payload: { username: 'quiet.new', email: 'new@bank.example', roles: ['customer'] } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ delivery: 'response', temporary_password: expect.any(String) });
    const reset = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/reset-password`, headers: bearer(token) });
    expect(reset.json()).toMatchObject({ status: 'success', delivery: 'response', temporary_password: expect.any(String) });

    await seedUser(t.s, 'quiet.other', { email: 'other@bank.example' });
    t.clock.advance(84 * DAY);
    expect(await t.s.expiryWarnings.run()).toBe(0);
    const other = (await t.s.users.findByLogin('quiet.other'))!;
    expect(await warnedAt(t, other.id)).toBeNull();
  });
});
