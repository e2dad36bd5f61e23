/**
 * Account recovery, phase 2 (issue 27): "this was not me", on both databases. Every notice
 * carries a one-click cancel link whose single-use token sits in the URL's fragment; the real
 * owner's click stops a `waiting` workflow, raises an alert and locks recovery for the account
 * (an initiate meanwhile is a decoy). Notices come over real SMTP, in the account's language.
 * Everything the service logs is captured, to show a cancel token never reaches a log line.
 * The clock is frozen.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { expectError, login, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { HOUR, ok, recovery } from '../harness/recovery.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

const CANCEL_URL = 'https://auth.bank.example/recovery/cancel';

let t: TestApp;
let smtp: TestSmtp;
const logged: string[] = [];
const tokensSeen: string[] = [];
let n = 0;

const r = recovery(() => t);
const { post, initiate, verify, status, cancelWith, withAnswers } = r;

/** A subject as the reader sees it: RFC 2047 encoded words (non-ASCII subjects) decoded. */
function subjectOf(raw: string): string {
  return raw.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) => (enc.toUpperCase() === 'B'
    ? Buffer.from(text, 'base64').toString('utf8')
    : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8')));
}

const subjectsTo = (address: string): string[] => smtp.to(address).map((m) => subjectOf(m.subject));

/** The cancel token of the last mail to `address` with `subject`, read from the link's fragment. */
async function tokenIn(address: string, subject: string): Promise<string> {
  await t.s.recovery.settled();
  const mail = smtp.to(address).filter((m) => subjectOf(m.subject) === subject).at(-1)!;
  const m = new RegExp(`${CANCEL_URL.replace(/[./]/g, '\\$&')}#(rcx_[A-Za-z0-9_-]{43})`).exec(mail.text);
  expect(m, mail.text).not.toBeNull();
  tokensSeen.push(m![1]!);
  return m![1]!;
}

/** An `mfa` workflow proved to `waiting` by a thief holding the password, the mailbox and the answers. */
async function waitingWorkflow(language?: 'pt' | 'fr') {
  const username = `owner.${++n}`;
  const email = `owner.${n}@bank.example`;
  const user = await seedUser(t.s, username, { email });
  if (language) await t.s.database.db.updateTable('users').set({ language }).where('id', '=', user.id).execute();
  const answers = await withAnswers(username, ['Simba', 'Kisumu', 'Blue']);
  const id = ok(await initiate(username, 'mfa'), 202).recovery_id!;
  ok(await verify(id, { proof: 'email_code' }));
  ok(await verify(id, { proof: 'email_code', code: await r.mailedCode(smtp, email) }));
  ok(await verify(id, { proof: 'password', password: STRONG_PASSWORD }));
  const asked = ok(await verify(id, { proof: 'security_questions' })).questions as Array<{ id: string }>;
  expect(ok(await verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: answers.get(q.id)! })) })).state).toBe('waiting');
  return { id, user, email };
}

beforeAll(async () => {
  smtp = await startSmtp();
  const sink = new Writable({ write(chunk, _e, done) { logged.push(String(chunk)); done(); } });
  t = await createTestApp({
    env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', RECOVERY_CANCEL_URL: CANCEL_URL },
    clock: new ManualClock(Date.UTC(2026, 2, 6, 9, 0, 0)),
    log: pino({ level: 'debug' }, sink),
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('the cancel link from the old email', () => {
  it('stops a waiting workflow, alerts, locks recovery (the next initiate is a decoy), and the owner still signs in', async () => {
    const { id, user, email } = await waitingWorkflow();
    expect(await tokenIn(email, 'Someone started recovering your account')).not.toBe(await tokenIn(email, 'Your account will be recovered unless you stop it'));
    const token = tokensSeen.at(-1)!;
    // Only a keyed hash is stored.
    expect(JSON.stringify(await t.s.database.db.selectFrom('recovery_cancel_tokens').selectAll().execute())).not.toContain(token);

    const done = ok(await cancelWith(token));
    expect(done).toMatchObject({ state: 'cancelled', reported: true, recovery_locked_until: new Date(t.clock.now() + 24 * HOUR).toISOString() });
    expect(ok(await status(id)).state).toBe('cancelled');
    expect((await login(t.app, user.username)).statusCode).toBe(200); // nothing else ended
    await t.s.recovery.settled();
    expect(smtp.to(email).at(-1)!.subject).toBe('The recovery of your account was stopped');
    const alert = await t.s.database.db.selectFrom('audit_log').select(['details']).where('event_type', '=', 'RECOVERY_REPORTED_NOT_ME').where('user_id', '=', user.uuid).executeTakeFirstOrThrow();
    expect(alert.details).toMatchObject({ state: 'waiting', cancelled: true });
    expect(logged.some((l) => l.includes('"level":40') && l.includes(user.uuid) && l.includes('reported as not the owner'))).toBe(true);

    // Locked: a new initiate answers as a real one would, but is a decoy (no code reaches the owner).
    const unknown = ok(await initiate('nobody.at.all', 'mfa'), 202);
    const again = ok(await initiate(user.username, 'mfa'), 202);
    expect(Object.keys(again).sort()).toEqual(Object.keys(unknown).sort());
    const mails = smtp.to(email).length;
    expect(ok(await verify(again.recovery_id!, { proof: 'email_code' })).sent).toMatchObject({ destination: 'the email address on file' });
    await t.s.recovery.settled();
    expect(smtp.to(email)).toHaveLength(mails);
    expect((await r.workflow(again.recovery_id!)).decoy).toBe(true);

    // The lock lapses.
    t.clock.advance(24 * HOUR);
    ok(await initiate(user.username, 'password'), 202);
    await t.s.recovery.settled();
    expect(smtp.to(email).at(-1)!.subject).toBe('Someone started recovering your account');
  });

  it('the page serves the button, with the token read from the fragment by a script the CSP admits, and its POST cancels', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/recovery/cancel' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(page.body).toContain('location.hash');
    expect(page.body).not.toMatch(/src=|href=|https?:\/\//); // no external asset

    const { id, email } = await waitingWorkflow();
    const token = await tokenIn(email, 'Someone started recovering your account');
    const res = await post('/recovery/cancel', { cancel_token: token });
    expect(res.statusCode, res.body).toBe(200);
    expect(ok(await status(id)).state).toBe('cancelled');
  });
});

describe('threats', () => {
  it('threat: a replayed cancel token (409 RECOVERY_CANCEL_TOKEN_USED)', async () => {
    const { email } = await waitingWorkflow();
    const token = await tokenIn(email, 'Your account will be recovered unless you stop it');
    ok(await cancelWith(token));
    expect(expectError(await cancelWith(token), 409, 'RECOVERY_CANCEL_TOKEN_USED').details).toMatchObject({ state: 'cancelled' });
    expectError(await post('/recovery/cancel', { cancel_token: token }), 409, 'RECOVERY_CANCEL_TOKEN_USED');
  });

  it('threat: a forged cancel token (404 RECOVERY_NOT_FOUND)', async () => {
    expectError(await cancelWith(`rcx_${'A'.repeat(43)}`), 404, 'RECOVERY_NOT_FOUND');
  });

  it('threat: a cancel token in a query string is never accepted, and never logged', async () => {
    const { id, email } = await waitingWorkflow();
    const token = await tokenIn(email, 'Someone started recovering your account');
    expectError(await t.app.inject({ method: 'POST', url: `/api/v1/auth/reset/cancel?cancel_token=${token}`, payload: { recovery_id: id } }), 422, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'POST', url: `/recovery/cancel?cancel_token=${token}`, payload: { cancel_token: token } }), 422, 'VALIDATION_ERROR');
    expect(ok(await status(id)).state).toBe('waiting');
    await t.s.recovery.settled();
    expect(logged.length).toBeGreaterThan(0);
    for (const seen of tokensSeen) expect(logged.join('\n')).not.toContain(seen);
  });
});

describe('notices in the account holder\'s language', () => {
  it('pt and fr: the start and the cooling-off notices, with the cancel link', async () => {
    const pt = await waitingWorkflow('pt');
    await t.s.recovery.settled();
    expect(subjectsTo(pt.email)).toEqual(expect.arrayContaining(['Alguém iniciou a recuperação da sua conta', 'A sua conta será recuperada se não o impedir']));
    await tokenIn(pt.email, 'A sua conta será recuperada se não o impedir');
    const fr = await waitingWorkflow('fr');
    await t.s.recovery.settled();
    expect(subjectsTo(fr.email)).toEqual(expect.arrayContaining(['Quelqu\'un a commencé à récupérer votre compte', 'Votre compte sera récupéré si vous ne l\'arrêtez pas']));
    const token = await tokenIn(fr.email, 'Votre compte sera récupéré si vous ne l\'arrêtez pas');
    ok(await cancelWith(token));
    await t.s.recovery.settled();
    expect(subjectsTo(fr.email).at(-1)).toBe('La récupération de votre compte a été arrêtée');
    const lock = await sql<{ n: number }>`SELECT count(*)::int AS n FROM recovery_locks WHERE user_id = ${fr.user.id}`.execute(t.s.database.db);
    expect(lock.rows[0]!.n).toBe(1);
  });
});
