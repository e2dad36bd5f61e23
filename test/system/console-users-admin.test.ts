/**
 * Users, roles and branches in the console, in real Chromium against a service enforcing
 * transport encryption: an operator creates a branch and a role with two permissions, changes a
 * user's email, roles and branch, resets their password (the user then signs in with the
 * temporary one through the SDK and answers the forced change), resets their PIN (typed on the
 * page; the dialog says the customer is told, and the page on which contacts), reads a user's
 * second factors (the authenticator app, backup codes left, security questions, never a secret)
 * with the pointer to the MFA resets queue, and deletes a user after the confirmation; an operator whose role grants neither
 * roles.read nor roles.manage sees no Roles navigation, and the API refuses them anyway (403
 * PERMISSION_DENIED). Each effect is asserted through the service; each screen and dialog gets
 * axe and the CSP checks.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient, StrongroomError } from '../../packages/client/src/index.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen as checkPage } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { Authenticator } from '../harness/authenticator.js';
import { auditTotal, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
let browser: Browser;
let origin: string;
let page: Page;
let csp: Awaited<ReturnType<typeof watchCsp>>;
const CLI = { actor: { uuid: null, username: 'test' }, context: {} };

/** A page of the console signed in as `username`, with its CSP watcher. */
async function consolePage(username: string): Promise<{ page: Page; csp: Awaited<ReturnType<typeof watchCsp>> }> {
  const p = await (await browser.newContext()).newPage();
  const watcher = await watchCsp(p);
  await p.goto(`${origin}/console`);
  await signIn(p, username, STRONG_PASSWORD);
  await p.getByRole('heading', { name: 'Users' }).waitFor();
  return { page: p, csp: watcher };
}

async function refusal(run: Promise<unknown>): Promise<StrongroomError> {
  const err = await run.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(StrongroomError);
  return err as StrongroomError;
}

/** Ticks a choice of a checkbox group by its visible name, as a person clicks it; then it is checked. */
async function tick(scope: Locator, name: string): Promise<void> {
  await scope.getByText(name, { exact: true }).click();
  expect(await scope.getByRole('checkbox', { name: new RegExp(`^${name.replace(/[.]/g, '\\.')}`) }).isChecked(), name).toBe(true);
}

async function openUser(username: string): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
  await page.getByRole('rowheader', { name: username }).click();
  await page.getByRole('heading', { name: username, level: 1 }).waitFor();
}

beforeAll(async () => {
  t = await createTestApp({ database: await openTestDatabase(), clock: new ManualClock(Date.now()), secrets: testSecrets(), env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
  await seedUser(t.s, 'users.operator', { roles: ['admin'] });
  ({ origin, browser } = await serveToChromium(t.app));
  ({ page, csp } = await consolePage('users.operator'));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const checkScreen = (name: string): Promise<void> => checkPage(page, csp, name);

describe('users, roles and branches in the console', () => {
  it('an operator creates a branch and a role with two permissions, then changes a user\'s email, roles and branch', async () => {
    const amina = await seedUser(t.s, 'amina.teller', { email: 'amina@bank.example' });

    await page.getByRole('navigation').getByRole('link', { name: 'Branches' }).click();
    await page.getByRole('heading', { name: 'Branches', level: 1 }).waitFor();
    await checkScreen('branches');
    await page.getByLabel('Code').fill('MSA-002');
    await page.getByLabel('Name', { exact: true }).fill('Mombasa, Moi Avenue');
    await page.getByRole('button', { name: 'Create the branch' }).click();
    await page.getByText('The branch MSA-002 is created.').waitFor();
    await page.getByRole('rowheader', { name: 'MSA-002' }).waitFor();
    expect((await t.s.entities.byCode('MSA-002'))?.name).toBe('Mombasa, Moi Avenue');

    await page.getByRole('navigation').getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
    await page.getByRole('rowheader', { name: 'admin' }).waitFor();
    await checkScreen('roles');
    await page.getByRole('button', { name: 'New role' }).click();
    const form = page.getByRole('form', { name: 'New role' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('branch.helpdesk');
    await form.getByRole('textbox', { name: 'Description', exact: true }).fill('Branch help desk: reads users and the audit trail');
    await tick(form, 'users.read');
    await tick(form, 'audit.read');
    await checkScreen('a new role');
    await form.getByRole('button', { name: 'Create the role' }).click();
    await page.getByRole('heading', { name: 'Role branch.helpdesk' }).waitFor();
    await page.getByText('List and read users').waitFor();
    await checkScreen('a role');
    expect((await t.s.roleAdmin.get('branch.helpdesk')).permissions).toEqual(['audit.read', 'users.read']);

    await openUser('amina.teller');
    await checkScreen('a user');
    await page.getByRole('button', { name: 'Change', exact: true }).click();
    const edit = page.getByRole('form', { name: 'Change the user' });
    await edit.getByRole('textbox', { name: 'Email', exact: true }).fill('amina.teller@bank.example');
    await tick(edit, 'branch.helpdesk');
    await tick(edit, 'MSA-002');
    await checkScreen('changing a user');
    await edit.getByRole('button', { name: 'Save the changes' }).click();
    await page.getByText('The changes are saved. Sessions ended: 0.').waitFor();
    await page.getByText('amina.teller@bank.example').waitFor();
    const after = await t.s.userLifecycle.get(amina.uuid);
    expect(after.email).toBe('amina.teller@bank.example');
    expect([...after.roles].sort()).toEqual(['branch.helpdesk', 'customer']);
    expect(after.entities).toEqual(['MSA-002']);
  });

  it('an operator resets a user\'s password: the user signs in with the temporary one and answers the forced change; then their PIN, typed on the page', async () => {
    const row = (await t.s.users.findByLogin('amina.teller'))!;
    await openUser('amina.teller');
    await page.getByRole('button', { name: 'Reset the password' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the password of amina.teller?' });
    await dialog.getByText(/must choose their own at their next sign-in/).waitFor();
    await checkScreen('reset a password');
    await dialog.getByRole('button', { name: 'Reset the password' }).click();
    const temporary = (await page.getByTestId('temporary-password').textContent()) ?? '';
    expect(temporary.length).toBeGreaterThan(11);
    await checkScreen('a temporary password');

    const amina = new StrongroomClient({ baseUrl: origin });
    const forced = await refusal(amina.login({ username: 'amina.teller', password: temporary }));
    expect([forced.status, forced.errorCode]).toEqual([403, 'PASSWORD_CHANGE_REQUIRED']);
    const chosen = 'Pz4!kWq8#mRt2&';
    await amina.resetPassword({ resetToken: String(forced.details.reset_token), newPassword: chosen });
    const signedIn = await amina.login({ username: 'amina.teller', password: chosen });
    // The role given on the page reaches the token: branch.helpdesk's users.read and audit.read.
    expect(signedIn.permissions).toEqual(expect.arrayContaining(['users.read', 'audit.read']));
    expect((await t.s.userLifecycle.get(row.uuid)).must_change_password).toBe(false);

    await page.getByRole('button', { name: 'Reset the PIN' }).click();
    const pinDialog = page.getByRole('dialog', { name: 'Reset the PIN of amina.teller?' });
    await pinDialog.getByText(/The customer is told at once, by email and text message when the account has them, that the bank reset their PIN/).waitFor();
    await checkScreen('reset a PIN');
    await pinDialog.getByRole('button', { name: 'Reset the PIN' }).click();
    const pinForm = page.getByRole('form', { name: 'New PIN for amina.teller' });
    // No mail server or SMS gateway in this suite: the page says to tell the customer in person, as the audit trail records.
    await page.getByText('amina.teller has no email or phone the service can reach: tell them of the reset in person.').waitFor();
    const resetAudit = await t.s.database.db.selectFrom('audit_log').select('details').where('user_id', '=', row.uuid).where('event_type', '=', 'PIN_RESET_BY_ADMIN').executeTakeFirstOrThrow();
    expect(resetAudit.details).toMatchObject({ customer_notified: [] });
    await pinForm.getByLabel('New PIN', { exact: true }).fill('1234');
    await pinForm.getByLabel('New PIN again').fill('1234');
    await pinForm.getByRole('button', { name: 'Set the PIN' }).click();
    await page.getByRole('alert').getByText('Do not use digits in a row, up or down (such as 1234 or 9876).').waitFor();
    await checkScreen('a PIN refused');
    await pinForm.getByLabel('New PIN', { exact: true }).fill('2580');
    await pinForm.getByLabel('New PIN again').fill('2580');
    await pinForm.getByRole('button', { name: 'Set the PIN' }).click();
    await page.getByText('The new PIN of amina.teller is set.').waitFor();
    expect(await t.s.pins.verify(row, '2580', 'test')).toBe(true);
    expect(await auditTotal(t.s, row.uuid, 'PIN_RESET_BY_ADMIN')).toBe(1);
  });

  it('an operator reads a user\'s second factors before an MFA reset: what is enrolled and the codes left, never a secret, and where resets are decided', async () => {
    const holder = await seedUser(t.s, 'factor.customer');
    const sdk = new StrongroomClient({ baseUrl: origin });
    await sdk.login({ username: 'factor.customer', password: STRONG_PASSWORD });
    const setup = await sdk.request<{ secret: string; qr_code: string }>('POST', '/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD });
    const app = Authenticator.scan(setup.qr_code);
    const { backup_codes: backupCodes } = await sdk.request<{ backup_codes: string[] }>('POST', '/api/v1/2fa/totp/verify', { code: app.code(t.clock.now()) });
    const pool = (await sdk.request<{ questions: Array<{ id: string; text: string }> }>('POST', '/api/v1/auth/security-questions/predefined', {})).questions;
    const answers = ['Mama Njeri', 'Nakuru', 'Blue'];
    await sdk.request('POST', '/api/v1/auth/security-questions/setup', { current_password: STRONG_PASSWORD, answers: answers.map((answer, i) => ({ question_id: pool[i]!.id, answer })) });
    expect(await t.s.factors.active(holder.id)).toEqual(['totp']);

    await openUser('factor.customer');
    const factors = page.getByRole('grid', { name: 'Second factors of factor.customer' });
    await factors.getByRole('rowheader', { name: 'Authenticator app' }).waitFor();
    await factors.getByRole('row').filter({ hasText: 'Backup codes' }).getByRole('gridcell', { name: '10 of 10 left' }).waitFor();
    await factors.getByRole('row').filter({ hasText: 'Security questions' }).getByText(/^3 questions/).waitFor();
    const questions = page.getByRole('list', { name: 'Security questions of factor.customer' });
    for (const q of pool.slice(0, 3)) await questions.getByText(q.text, { exact: true }).waitFor();
    await page.getByText(/This screen removes no factor/).waitFor();
    await page.getByRole('link', { name: 'Open the MFA resets queue' }).waitFor();
    await checkScreen('a user\'s second factors');
    const text = await page.content();
    for (const secret of [setup.secret, ...backupCodes, ...answers]) expect(text, secret).not.toContain(secret);

    await page.getByRole('link', { name: 'Open the MFA resets queue' }).click();
    await page.getByRole('heading', { name: 'MFA resets', level: 1 }).waitFor();
  });

  it('an operator deletes a user after the confirmation says what happens', async () => {
    const leaving = await seedUser(t.s, 'leaving.customer');
    await openUser('leaving.customer');
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByText('No passkey.').waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete leaving.customer?' });
    await dialog.getByText(/can no longer sign in, for good/).waitFor();
    await checkScreen('delete a user');
    await dialog.getByRole('button', { name: 'Delete the user' }).click();
    await page.getByText('leaving.customer is deleted. Sessions ended: 0.').waitFor();
    expect((await t.s.userLifecycle.get(leaving.uuid)).status).toBe('deleted');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|^pageerror/i.test(e))).toEqual([]);
  });

  it('an operator whose role grants neither roles.read nor roles.manage sees no Roles or Branches, and the API refuses them (403 PERMISSION_DENIED)', async () => {
    await t.s.roleAdmin.create({ name: 'desk.clerk', description: 'Reads and unlocks users', permissions: ['users.read', 'users.update'] }, CLI);
    await seedUser(t.s, 'desk.clerk1', { roles: ['desk.clerk'] });
    const clerk = await consolePage('desk.clerk1');
    const nav = clerk.page.getByRole('navigation');
    await nav.getByRole('link', { name: 'Users' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Roles' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Branches' }).count()).toBe(0);
    await checkPage(clerk.page, clerk.csp, 'the console without roles');

    const api = new StrongroomClient({ baseUrl: origin });
    await api.login({ username: 'desk.clerk1', password: STRONG_PASSWORD });
    for (const [method, path, body] of [['GET', '/api/v1/admin/roles'], ['POST', '/api/v1/admin/roles', { name: 'self.made', description: 'Everything', permissions: ['users.read'] }], ['POST', '/api/v1/admin/entities', { code: 'X-1', name: 'Nowhere' }]] as const) {
      const err = await refusal(api.request(method, path, body));
      expect([err.status, err.errorCode], `${method} ${path}`).toEqual([403, 'PERMISSION_DENIED']);
    }
    await expect(t.s.roleAdmin.get('self.made')).rejects.toMatchObject({ code: 'ROLE_NOT_FOUND' });
    await clerk.page.context().close();
  });
});
