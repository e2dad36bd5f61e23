/**
 * The console's acceptance scenario in one journey, in real Chromium against a service enforcing
 * transport encryption (admins must have a second factor): an operator signs in with an
 * authenticator code and creates a user (the temporary password shown once); the user signs in on
 * /account with it, chooses their own password and enrols an authenticator app on the Second
 * factors screen (its QR code read off the page); the user is locked by failed sign-ins through
 * the SDK, the operator finds and unlocks them, and they sign in again; the user asks for a reset
 * of their second factors, which a second operator approves on the MFA resets screen (the factors
 * are gone); the operator writes an access policy for the web channel and edits it so that the
 * user's sign-in is refused (403 POLICY_RESTRICTED), then finds that refusal on the audit screen.
 * Each effect is asserted through the service or the SDK; each new screen gets axe and the CSP checks.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient, StrongroomError } from '../../packages/client/src/index.js';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { MFA_RESET_PROOF_PURPOSE } from '../../src/mfa/challenge.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { Authenticator, enrolTotp } from '../harness/authenticator.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { chooseFirstPassword, createUser, signIn, watchCsp } from '../harness/console-pages.js';
import { OTHER_PASSWORD, seedUser, signIn as apiSignIn, STRONG_PASSWORD, withoutRiskResponses, WRONG_PASSWORD } from '../harness/fixtures.js';

const USER = 'amara.scenario';
const POLICY = 'Customers on the web';

let t: TestApp;
let clock: ManualClock;
let browser: Browser;
let origin: string;
const operators = {} as Record<'desk' | 'approver', Authenticator>;

beforeAll(async () => {
  // The operators' authenticators are enrolled in plaintext on a first app, which enforcement would
  // refuse; the pages are then served by an app on the same database that enforces transport encryption.
  const database = await openTestDatabase();
  clock = new ManualClock(Date.now());
  const secrets = testSecrets();
  const setup = await createTestApp({ database, clock, secrets });
  await withoutRiskResponses(setup.s); // the lockout is the subject, not what the risk engine does on failures
  for (const [key, username] of [['desk', 'scenario.desk'], ['approver', 'scenario.approver']] as const) {
    await seedUser(setup.s, username, { roles: ['admin'] });
    operators[key] = (await enrolTotp(setup.app, clock, (await apiSignIn(setup.app, username)).access_token)).authenticator;
  }
  await setup.closeApp();
  t = await createTestApp({ database, clock, secrets, env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'admin,staff' } });
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

interface Screen {
  page: Page;
  check(name: string): Promise<void>;
  cspErrors(): string[];
}

/** A new browser context at `path`, with its CSP watcher; the page's header is the console's CSP. */
async function open(path: string): Promise<Screen> {
  const page = await (await browser.newContext()).newPage();
  const csp = await watchCsp(page);
  const res = await page.goto(`${origin}${path}`);
  expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
  return { page, check: (name) => checkScreen(page, csp, name), cspErrors: () => csp.consoleErrors.filter((e) => /Content.Security.Policy|^pageerror/i.test(e)) };
}

/** The next authenticator step: a code the API has not seen yet (a code works once). */
function nextCode(app: Authenticator): string {
  clock.advance(30_000);
  return app.code(clock.now());
}

async function refusal(run: Promise<unknown>): Promise<StrongroomError> {
  const err = await run.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(StrongroomError);
  return err as StrongroomError;
}

async function choose(page: Page, label: RegExp, option: string): Promise<void> {
  await page.getByRole('button', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe('the console\'s acceptance scenario, one operator journey in Chromium', () => {
  it('create a user; they choose a password and enrol TOTP; locked and unlocked; MFA reset approved by a second operator; a policy edited refuses their sign-in, seen in the audit log', async () => {
    // 1. The operator signs in with an authenticator code and creates the user.
    const desk = await open('/console');
    await desk.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await desk.check('console sign-in');
    await signIn(desk.page, 'scenario.desk', STRONG_PASSWORD, () => nextCode(operators.desk));
    await desk.page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await desk.check('users');
    const temporary = await createUser(desk.page, { username: USER, fullName: 'Amara Scenario', email: 'amara.scenario@bank.example' });
    expect(temporary.length).toBeGreaterThanOrEqual(12);
    await desk.check('user created');
    const created = (await t.s.users.findByLogin(USER))!;
    expect(created).toBeDefined();
    expect((await t.s.userLifecycle.get(created.uuid)).must_change_password).toBe(true);

    // 2. The user signs in on /account with the temporary password, chooses their own, enrols an authenticator app.
    const person = await open('/account');
    await person.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await person.check('account sign-in');
    await signIn(person.page, USER, temporary);
    await chooseFirstPassword(person.page, OTHER_PASSWORD);
    await person.page.getByRole('heading', { name: 'Profile' }).waitFor();
    await person.check('account profile');
    expect((await t.s.userLifecycle.get(created.uuid)).must_change_password).toBe(false);

    await person.page.getByRole('navigation').getByRole('link', { name: 'Second factors' }).click();
    await person.page.getByText('No second factor is set up yet.', { exact: false }).waitFor();
    await person.check('second factors, none');
    await person.page.getByRole('form', { name: 'Set up an authenticator app' }).getByLabel('Current password').fill(OTHER_PASSWORD);
    await person.page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    // Scanned as a phone's camera would: a picture of what the page draws.
    const phone = Authenticator.scanPng(await person.page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).screenshot());
    expect(await person.page.getByTestId('totp-secret').textContent()).toBe(phone.totp.secret.base32);
    await person.check('authenticator set-up');
    await person.page.getByLabel('Code from your authenticator app').fill(phone.code(clock.now()));
    await person.page.getByRole('button', { name: 'Confirm the app' }).click();
    await person.page.getByRole('heading', { name: 'Your backup codes' }).waitFor();
    expect(await person.page.getByTestId('backup-codes').getByRole('listitem').count()).toBe(10);
    await person.check('backup codes');
    await person.page.getByRole('button', { name: 'I have kept them' }).click();
    await person.page.getByRole('list', { name: 'Enrolled' }).getByText('Authenticator app (10 backup codes left)').waitFor();
    await person.check('second factors, an authenticator app');
    expect(await t.s.factors.active(created.id)).toEqual(['totp']);

    // 3. Failed sign-ins through the SDK until the account locks; the operator finds and unlocks it.
    const app = new StrongroomClient({ baseUrl: origin });
    // MAX_LOGIN_ATTEMPTS (5 by default, src/policy/lockout.ts): the failure that reaches it locks, and says so.
    const max = t.s.config.signin.maxLoginAttempts;
    expect(max).toBe(5);
    for (let i = 1; i <= max; i++) {
      const wrong = await refusal(app.login({ username: USER, password: WRONG_PASSWORD }));
      expect([wrong.status, wrong.errorCode], `failed attempt ${i}`).toEqual(i < max ? [401, 'INVALID_CREDENTIALS'] : [429, 'ACCOUNT_LOCKED']);
    }
    const locked = await refusal(app.login({ username: USER, password: OTHER_PASSWORD }));
    expect([locked.status, locked.errorCode]).toEqual([429, 'ACCOUNT_LOCKED']); // the right password too, while locked
    expect((await t.s.userLifecycle.get(created.uuid)).status).toBe('locked');

    await desk.page.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
    await desk.page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await desk.page.getByLabel('Search', { exact: true }).fill('amara');
    await choose(desk.page, /Status/, 'Locked');
    await desk.page.getByRole('button', { name: 'Find', exact: true }).click();
    const found = desk.page.getByRole('grid', { name: 'Users' }).getByRole('row').filter({ has: desk.page.getByRole('rowheader', { name: USER }) });
    await found.getByText('Locked', { exact: true }).waitFor();
    await desk.check('users, the locked user found');
    await desk.page.getByRole('rowheader', { name: USER }).click();
    await desk.page.getByRole('heading', { name: USER, level: 1 }).waitFor();
    await desk.check('a locked user');
    await desk.page.getByRole('button', { name: 'Unlock', exact: true }).click();
    await desk.page.getByText('The account is unlocked.').waitFor();
    await desk.page.getByRole('button', { name: 'Unlock', exact: true }).waitFor({ state: 'detached' });
    await desk.check('an unlocked user');
    expect((await t.s.userLifecycle.get(created.uuid)).status).toBe('active');
    // Signs in again: the password, then the authenticator app.
    const second = await refusal(app.login({ username: USER, password: OTHER_PASSWORD }));
    expect([second.status, second.errorCode]).toEqual([401, '2FA_REQUIRED']);
    const again = await app.verifyTotp({ twoFactorToken: String(second.details.two_factor_token), code: nextCode(phone) });
    expect(again.access_token).toEqual(expect.any(String));

    // 4. The user asks for a reset of their second factors (the proof the security questions hand
    //    out after the password); a second operator approves it on the MFA resets screen.
    const proof = (await t.s.tokens.issue('reset', { user_id: created.uuid, purpose: MFA_RESET_PROOF_PURPOSE })).token;
    const { request_id: requestId } = await new StrongroomClient({ baseUrl: origin }).request<{ request_id: string }>('POST', '/api/v1/auth/reset/mfa', { reason: 'I lost the phone with the authenticator app.', proof_token: proof });
    expect((await t.s.mfaReset.list({ status: 'pending', limit: 100, offset: 0 })).requests.map((r) => r.request_id)).toContain(requestId);

    const approver = await open('/console');
    await signIn(approver.page, 'scenario.approver', STRONG_PASSWORD, () => nextCode(operators.approver));
    await approver.page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await approver.page.getByRole('navigation').getByRole('link', { name: 'MFA resets' }).click();
    const card = approver.page.getByRole('region', { name: `Second-factor reset for ${USER}` });
    await card.getByText('I lost the phone with the authenticator app.').waitFor();
    await card.getByText('Their password and their security questions').waitFor();
    await approver.check('the MFA reset queue');
    await card.getByRole('button', { name: `Approve the reset for ${USER}` }).click();
    const approve = approver.page.getByRole('dialog', { name: `Approve the second-factor reset for ${USER}?` });
    await approve.getByText(/passkeys and backup codes\. All their sessions end/).waitFor();
    await approve.getByLabel('Note (optional): kept in the audit trail, and the person can read it on their Recovery page and in their data export').fill('Identity confirmed at the branch.');
    await approver.check('approving an MFA reset');
    await approve.getByRole('button', { name: 'Approve' }).click();
    await approver.page.getByText(`Approved: the second factors of ${USER} are removed and their sessions ended; they enrol again.`).waitFor();
    await approver.check('an MFA reset approved');
    expect((await t.s.mfaReset.list({ status: 'approved', limit: 100, offset: 0 })).requests.map((r) => r.request_id)).toContain(requestId);
    expect(await t.s.factors.active(created.id)).toEqual([]);
    expect(await t.s.db.selectFrom('mfa_backup_codes').select('id').where('user_id', '=', created.id).execute()).toEqual([]);
    await person.page.getByText('Your session has ended. Sign in again.').waitFor(); // their /account page, told by the real-time channel
    const passwordAlone = await new StrongroomClient({ baseUrl: origin }).login({ username: USER, password: OTHER_PASSWORD });
    expect(passwordAlone.access_token).toEqual(expect.any(String)); // no second factor is asked any more

    // 5. The operator writes a policy for the web channel's customers, then edits it so that this sign-in is refused.
    const stored = async () => {
      const row = await t.s.database.db.selectFrom('access_policies').select(['channel', 'role', 'rules']).where('name', '=', POLICY).executeTakeFirst();
      return row && { ...row, rules: (typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules) as { ip?: { allow?: string[]; deny?: string[] } } };
    };
    await desk.page.getByRole('navigation').getByRole('link', { name: 'Access policies' }).click();
    await desk.page.getByRole('heading', { name: 'Access policies', level: 1 }).waitFor();
    await desk.check('access policies');
    await desk.page.getByRole('link', { name: 'New policy' }).click();
    await desk.page.getByRole('heading', { name: 'New policy', level: 1 }).waitFor();
    await desk.check('new policy');
    await desk.page.getByLabel('Name').fill(POLICY);
    await desk.page.getByLabel('Role', { exact: true }).fill('customer');
    await desk.page.getByLabel('Allowed addresses').fill('127.0.0.0/8\n10.20.0.0/16');
    await desk.page.getByRole('button', { name: 'Save the policy' }).click();
    await desk.page.getByRole('heading', { name: POLICY, level: 1 }).waitFor();
    await desk.check('a policy');
    expect(await stored()).toMatchObject({ channel: 'web', role: 'customer', rules: { ip: { allow: ['127.0.0.0/8', '10.20.0.0/16'] } } });
    const allowed = await new StrongroomClient({ baseUrl: origin }).login({ username: USER, password: OTHER_PASSWORD });
    expect(allowed.access_token).toEqual(expect.any(String)); // inside the allowed list

    await desk.page.getByLabel('Refused addresses').fill('127.0.0.1');
    await desk.page.getByRole('button', { name: 'Save the policy' }).click();
    await desk.page.getByText(`Policy ${POLICY} saved.`).waitFor();
    await desk.check('a policy edited');
    expect((await stored())!.rules.ip).toEqual({ allow: ['127.0.0.0/8', '10.20.0.0/16'], deny: ['127.0.0.1'] });
    const refused = await refusal(new StrongroomClient({ baseUrl: origin }).login({ username: USER, password: OTHER_PASSWORD }));
    expect([refused.status, refused.errorCode, refused.details.rule]).toEqual([403, 'POLICY_RESTRICTED', 'ip']);

    // The refused sign-in, on the audit screen narrowed to the user and failures.
    await desk.page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await desk.page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    await desk.page.getByLabel('User', { exact: true }).fill(USER);
    await choose(desk.page, /Status/, 'Failure');
    await desk.page.getByRole('button', { name: 'Apply' }).click();
    const row = desk.page.getByRole('grid', { name: 'Entries' }).getByRole('row').filter({ hasText: 'POLICY_VIOLATION' }).filter({ hasText: USER });
    // The grid is drawn again when the filtered answer arrives: count once it has settled on one row.
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    expect(await row.first().textContent()).toMatch(/Failure.*web.*127\.0\.0\.1/);
    await desk.check('audit log, the refused sign-in');
    expect((await t.s.audit.query({ userId: created.uuid, eventType: 'POLICY_VIOLATION', limit: 10, offset: 0 })).total).toBe(1);

    for (const screen of [desk, person, approver]) expect(screen.cspErrors()).toEqual([]);
  });
});
