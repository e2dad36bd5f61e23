/**
 * The account pages' own-data screens in real Chromium, against a service enforcing transport
 * encryption and a real SMTP server: a customer changes their email and confirms it with the code
 * mailed to the new address, turns off a device's notifications and chooses their language, gives
 * and withdraws a consent, sets up security questions, sees a recovery someone else started and
 * stops it as not theirs (reported, but not locked: a session cannot lock recovery), sees one a
 * branch started without a *Stop*, locks recovery with the email's "this was not me" link and then
 * sees the next attempt listed as blocked, downloads their data, asks for their account to be deleted (signed out, shown when it will be erased) and
 * cancels it. Each effect is read back through the service; on every screen: no CSP violation and
 * no serious or critical axe finding.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient } from '../../packages/client/src/index.js';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { freePort } from '../harness/postgres.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

let t: TestApp;
let smtp: TestSmtp;
let browser: Browser;
let origin: string;
let user: { id: number; uuid: string };

const USERNAME = 'amani.account';
const OLD_EMAIL = 'amani@bank.example';
const NEW_EMAIL = 'amani.new@bank.example';
const PHONE_NAME = "Amani's phone";

beforeAll(async () => {
  smtp = await startSmtp();
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', OTP_RESEND_SECONDS: '0', RECOVERY_CANCEL_URL: `${origin}/recovery/cancel` } });
  user = await seedUser(t.s, USERNAME, { email: OLD_EMAIL });
  await t.s.deviceTokens.register(user.id, { pushToken: 'fcm:AmaniPhoneToken0123456789', platform: 'mobile', deviceName: PHONE_NAME }, async () => {});
  ({ browser } = await serveToChromium(t.app, { port }));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.close();
});

/** The latest message to `address`, waiting (on the SMTP server, not a timer) until one with `subject` has come. */
async function mailTo(address: string, subject: string): Promise<string> {
  const found = () => smtp.to(address).filter((m) => m.subject === subject).at(-1);
  while (!found()) await smtp.next();
  return found()!.text;
}

type Csp = Awaited<ReturnType<typeof watchCsp>>;
const nav = (page: Page, name: string) => page.getByRole('navigation').getByRole('link', { name }).click();

async function changeEmail(page: Page, csp: Csp): Promise<void> {
  await nav(page, 'Email and phone');
  const form = page.getByRole('form', { name: 'Change your email' });
  await form.getByLabel('New email').fill(NEW_EMAIL);
  await form.getByLabel('Current password').fill(STRONG_PASSWORD);
  await form.getByRole('button', { name: 'Send a code' }).click();
  await page.getByText('A code is on its way to a***@bank.example.').waitFor();
  await page.getByRole('heading', { name: 'Confirm your new email' }).waitFor();
  await checkScreen(page, csp, 'contacts, a change pending');
  const code = /^Code: (\d{6})$/m.exec(await mailTo(NEW_EMAIL, 'Confirm your new email address'))![1]!;
  expect(await mailTo(OLD_EMAIL, 'A change of your email address was requested')).not.toContain(NEW_EMAIL);
  await page.getByRole('form', { name: 'Confirm your new email' }).getByLabel('The code you received').fill(code);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByText(`Your email is now ${NEW_EMAIL}.`).waitFor();
  expect((await t.s.users.findByUuid(user.uuid))!.email).toBe(NEW_EMAIL);
  await mailTo(OLD_EMAIL, 'Your email address has been changed');
}

async function devices(page: Page, csp: Csp): Promise<void> {
  await nav(page, 'Devices');
  await page.getByRole('rowheader', { name: PHONE_NAME }).waitFor();
  await checkScreen(page, csp, 'devices');
  await page.getByRole('button', { name: `Turn off notifications to ${PHONE_NAME}` }).click();
  await page.getByText(`Notifications to ${PHONE_NAME} are off.`).waitFor();
  await page.getByRole('button', { name: `Turn on notifications to ${PHONE_NAME}` }).waitFor();
  expect((await t.s.deviceTokens.list(user.id, false)).map((d) => d.is_active)).toEqual([false]);
  await page.getByRole('radiogroup').getByText('Français').click(); // the label: React Aria hides the input under it
  await page.getByText('Your notifications are now written in Français.').waitFor();
  expect((await t.s.users.findByUuid(user.uuid))!.language).toBe('fr');
  await checkScreen(page, csp, 'devices, one turned off');
}

async function consent(page: Page, csp: Csp): Promise<void> {
  await nav(page, 'Consent');
  await page.getByRole('heading', { name: 'Offers and news by email' }).waitFor();
  await checkScreen(page, csp, 'consent');
  await page.getByRole('button', { name: 'I agree: Offers and news by email' }).click();
  await page.getByText('Your consent is recorded: Offers and news by email.').waitFor();
  await page.getByRole('button', { name: 'Withdraw my consent: Offers and news by email' }).click();
  await page.getByText('Your consent is withdrawn: Offers and news by email.').waitFor();
  const history = page.getByRole('grid', { name: 'Your answers' });
  await history.getByRole('row').filter({ hasText: 'Withdrawn' }).waitFor();
  await checkScreen(page, csp, 'consent, withdrawn');
  const rows = await t.s.db.selectFrom('consent_history').innerJoin('consent_purposes', 'consent_purposes.id', 'consent_history.purpose_id')
    .select(['consent_purposes.key', 'consent_history.given', 'consent_history.version']).where('consent_history.user_id', '=', user.id).orderBy('consent_history.id').execute();
  expect(rows).toEqual([{ key: 'marketing_email', given: true, version: 1 }, { key: 'marketing_email', given: false, version: 1 }]);
}

async function securityQuestions(page: Page, csp: Csp): Promise<void> {
  await nav(page, 'Second factors');
  const form = page.getByRole('form', { name: 'Security questions' });
  for (const n of [1, 2, 3]) {
    await form.getByRole('button', { name: `Question ${n}` }).click();
    await page.getByRole('listbox').getByRole('option').first().click();
    await form.getByLabel(`Answer ${n}`).fill(`answer number ${n}`);
  }
  await form.getByLabel('Current password').fill(STRONG_PASSWORD);
  await checkScreen(page, csp, 'second factors with security questions');
  await form.getByRole('button', { name: 'Set up the questions' }).click();
  await page.getByText('Your 3 security questions are saved.').waitFor();
  const answers = await t.s.db.selectFrom('user_security_answers').select('user_id').where('user_id', '=', user.id).execute();
  expect(answers).toHaveLength(3);
}

/** The "this was not me" link of the first recovery notice mailed to `address`, waiting on the SMTP server. */
async function cancelLinkTo(address: string): Promise<string> {
  const found = () => smtp.to(address).map((m) => new RegExp(`${origin}/recovery/cancel#rcx_[A-Za-z0-9_-]{43}`).exec(m.text)?.[0]).find(Boolean);
  while (!found()) await smtp.next();
  return found()!;
}

/**
 * Someone starts recovering the account's second factors, and a branch starts a device recovery;
 * the person, signed in, sees both, stops the first as not theirs (reported, not locked), cannot
 * stop the branch's, locks recovery with the email's link, and sees the next attempt blocked.
 */
async function recoveries(page: Page, csp: Csp): Promise<void> {
  const stranger = new StrongroomClient({ baseUrl: origin });
  const { reference } = await stranger.request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier: USERNAME, lost: 'mfa' });
  const link = await cancelLinkTo(NEW_EMAIL);
  await seedUser(t.s, 'desk.operator', { roles: ['admin'] }); // an operator at a branch desk, after checking Amani's identity document
  const atBranch = (await t.s.recovery.initiate(USERNAME, 'device', { ip: '127.0.0.1', userAgent: 'test', fingerprint: '', channel: 'web' }, (await t.s.users.findByLogin('desk.operator'))!)).reference!;
  await nav(page, 'Recovery');
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: reference }) });
  await row.getByText('Started, no proof yet').waitFor();
  const branchRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: `${atBranch} (at a branch)` }) });
  await branchRow.waitFor();
  expect(await branchRow.getByRole('button').count()).toBe(0);
  await page.getByText(/^A recovery started at a branch \(an operator checked your identity document\) cannot be stopped here/).waitFor();
  await page.getByText('No request.').waitFor();
  await checkScreen(page, csp, 'recovery');
  await row.getByRole('button', { name: `Stop the recovery ${reference}` }).click();
  const dialog = page.getByRole('dialog', { name: `Stop the recovery ${reference}?` });
  await dialog.getByText(/ends now and can no longer be finished/).waitFor();
  await dialog.getByText('I did not start it: alert the bank').click(); // the label: React Aria hides the input under it
  const notMe = dialog.getByRole('checkbox', { name: 'I did not start it: alert the bank' });
  expect(await notMe.isChecked()).toBe(true);
  expect(await notMe.getAttribute('aria-describedby')).toBe('not-me-help');
  await dialog.getByText(/^The bank is alerted, but new attempts are not blocked from here/).waitFor();
  await checkScreen(page, csp, 'stopping a recovery');
  await dialog.getByRole('button', { name: 'Stop the recovery' }).click();
  await page.getByText(`The recovery ${reference} is stopped and reported to the bank. To block new attempts for a day, use the "this was not me" link in the email we sent you.`).waitFor();
  await row.getByText('Cancelled').waitFor();
  expect(await row.getByRole('button').count()).toBe(0);
  expect(await page.getByText(/^Recovery of your account is blocked until /).count()).toBe(0);
  const wf = await t.s.db.selectFrom('recovery_workflows').select(['state', 'id']).where('reference', '=', reference).executeTakeFirstOrThrow();
  expect(wf.state).toBe('cancelled');
  expect(await t.s.db.selectFrom('recovery_locks').select('locked_until').where('user_id', '=', user.id).execute()).toEqual([]);
  const audited = await t.s.db.selectFrom('audit_log').select('event_type').where('user_id', '=', user.uuid).where('event_type', 'in', ['RECOVERY_CANCELLED', 'RECOVERY_REPORTED_NOT_ME']).execute();
  expect(audited.map((a) => a.event_type).sort()).toEqual(['RECOVERY_CANCELLED', 'RECOVERY_REPORTED_NOT_ME']);
  expect((await t.s.db.selectFrom('recovery_workflows').select('state').where('reference', '=', atBranch).executeTakeFirstOrThrow()).state).toBe('initiated');

  // The email's link, which only the mailbox's holder has, does lock recovery; the next attempt is listed as blocked.
  const mailbox = await page.context().newPage();
  await mailbox.goto(link);
  await mailbox.getByRole('button', { name: 'Stop this recovery' }).click();
  await mailbox.getByText(/^Done: the recovery is stopped and recovery of your account is locked/).waitFor();
  await mailbox.close();
  expect(await t.s.db.selectFrom('recovery_locks').select('locked_until').where('user_id', '=', user.id).execute()).toHaveLength(1);
  const blocked = (await stranger.request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier: USERNAME, lost: 'mfa' })).reference;
  await nav(page, 'Second factors');
  await nav(page, 'Recovery');
  const blockedRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: blocked }) });
  await blockedRow.getByText('Blocked', { exact: true }).waitFor();
  expect(await blockedRow.getByRole('button').count()).toBe(0);
  await page.getByText(/^Blocked: it was started while recovery of your account was locked/).waitFor();
  await page.getByText(/^Recovery of your account is blocked until /).waitFor();
  await checkScreen(page, csp, 'recovery, one blocked');
  expect((await t.s.db.selectFrom('recovery_workflows').select('decoy').where('reference', '=', blocked).executeTakeFirstOrThrow()).decoy).toBe(true);
}

async function yourData(page: Page, csp: Csp): Promise<void> {

  await nav(page, 'Your data');
  await checkScreen(page, csp, 'your data');
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as JSON' }).click()]);
  expect(file.suggestedFilename()).toMatch(/^strongroom-export-\d{4}-\d{2}-\d{2}\.json$/);
  const document = JSON.parse(readFileSync((await file.path())!, 'utf8')) as Record<string, unknown>;
  expect(document.user_id).toBe(user.uuid);
  expect(document.devices).toEqual([expect.objectContaining({ device_name: PHONE_NAME, is_active: false })]);
  await page.getByText(`Your data is downloaded: ${file.suggestedFilename()}.`).waitFor();
  const [zip] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as CSV files (ZIP)' }).click()]);
  expect(readFileSync((await zip.path())!).subarray(0, 2).toString('latin1')).toBe('PK');
  const logged = (await t.s.gdprExport.requests.list({ userUuid: user.uuid, limit: 10 })).requests;
  expect(logged.map((r) => [r.kind, r.format])).toEqual(expect.arrayContaining([['export', 'json'], ['export', 'csv']]));
}

async function deletion(page: Page, csp: Csp): Promise<void> {
  const form = page.getByRole('form', { name: 'Delete your account' });
  await form.getByLabel('Current password').fill(STRONG_PASSWORD);
  await form.getByText('I understand: my account will be deleted').click(); // the label: React Aria hides the input under it
  expect(await page.getByRole('checkbox', { name: 'I understand: my account will be deleted' }).isChecked()).toBe(true);
  await form.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('heading', { name: 'Your account is to be deleted' }).waitFor();
  const pending = (await t.s.erasure.listPending(100)).find((e) => e.user_id === user.uuid);
  expect(pending).toBeDefined();
  expect(await page.getByTestId('erase-after').textContent()).not.toBe('');
  await checkScreen(page, csp, 'deletion pending');

  const cancel = page.getByRole('form', { name: 'Cancel the deletion' });
  await cancel.getByLabel('Username or email').fill(USERNAME);
  await cancel.getByLabel('Password').fill(STRONG_PASSWORD);
  await cancel.getByRole('button', { name: 'Cancel the deletion' }).click();
  await page.getByText('The deletion is cancelled. You can sign in again.').waitFor();
  expect((await t.s.erasure.listPending(100)).find((e) => e.user_id === user.uuid)).toBeUndefined();
  await checkScreen(page, csp, 'deletion cancelled');
  await page.getByRole('button', { name: 'Back to sign-in' }).click();
  await signIn(page, USERNAME, STRONG_PASSWORD);
  await page.getByRole('navigation').waitFor();
}

describe('the account pages: contacts, devices, consent and your data, in Chromium', () => {
  it('a customer changes their email with the mailed code, turns off a device, withdraws a consent, sets up security questions, stops a recovery they did not start (no lock from a session) and locks recovery with the link in the email, downloads their data, and asks for deletion, sees it and cancels it', async () => {
    const page = await (await browser.newContext()).newPage();
    const csp = await watchCsp(page);
    const res = await page.goto(`${origin}/account/profile`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(page, USERNAME, STRONG_PASSWORD);
    await changeEmail(page, csp);
    await devices(page, csp);
    await consent(page, csp);
    await securityQuestions(page, csp);
    await recoveries(page, csp);
    await yourData(page, csp);
    await deletion(page, csp);
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);
  });
});
