/**
 * The account pages' security screens in real Chromium, against a service enforcing transport
 * encryption: a person changes their password (a weak one refused with the rules it breaks),
 * sets a PIN, enrols an authenticator app (its QR code read off the page), sees it listed with
 * its backup codes, adds a passkey in the browser (a virtual authenticator; the API asks for a
 * step-up first, which the page asks for and then retries), renames and deletes it, and replaces
 * the backup codes. On every screen: no CSP violation and no serious or critical axe finding.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { Authenticator } from '../harness/authenticator.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { OTHER_PASSWORD, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { freePort } from '../harness/postgres.js';

let t: TestApp;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://localhost:${port}`; // a passkey's relying party is a domain name
  t = await createTestApp({
    clock: new ManualClock(Date.now()),
    env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_RP_NAME: 'Strongroom test', WEBAUTHN_ORIGINS: origin },
  });
  await seedUser(t.s, 'wanjiru.security', { email: 'wanjiru.security@bank.example' });
  ({ browser } = await serveToChromium(t.app, { port, localhost: true }));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A page with a virtual platform authenticator that verifies its user (passkeys). */
async function pageWithAuthenticator(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true } });
  return page;
}

/** The next authenticator code: a step the API has not seen yet (a code works once). */
function nextCode(app: Authenticator): string {
  (t.clock as ManualClock).advance(30_000);
  return app.code(t.clock.now());
}

async function changePassword(page: Page, csp: Awaited<ReturnType<typeof watchCsp>>): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: 'Password and PIN' }).click();
  const form = page.getByRole('form', { name: 'Change your password' });
  await form.getByLabel('Current password').fill(STRONG_PASSWORD);
  await form.getByLabel('New password', { exact: true }).fill('password');
  await form.getByLabel('New password again').fill('password');
  await form.getByRole('button', { name: 'Change the password' }).click();
  const refusal = page.getByRole('alert').filter({ hasText: 'The password does not meet the rules:' });
  await refusal.waitFor();
  expect(await refusal.getByRole('listitem').count()).toBeGreaterThan(0);
  await checkScreen(page, csp, 'password refused');
  await form.getByLabel('New password', { exact: true }).fill(OTHER_PASSWORD);
  await form.getByLabel('New password again').fill(OTHER_PASSWORD);
  await form.getByRole('button', { name: 'Change the password' }).click();
  await page.getByText('Your password is changed. Your other sessions have ended.').waitFor();

  const pin = page.getByRole('form', { name: 'Your PIN for USSD' });
  await pin.getByLabel('Current password').fill(OTHER_PASSWORD);
  await pin.getByLabel('New PIN').fill('7391');
  await pin.getByRole('button', { name: 'Set the PIN' }).click();
  await page.getByText('Your PIN is set.').waitFor();
  await checkScreen(page, csp, 'password and PIN');
}

async function enrolAuthenticator(page: Page, csp: Awaited<ReturnType<typeof watchCsp>>): Promise<Authenticator> {
  await page.getByRole('navigation').getByRole('link', { name: 'Second factors' }).click();
  await page.getByText('No second factor is set up yet.', { exact: false }).waitFor();
  await checkScreen(page, csp, 'second factors, none');
  await page.getByRole('form', { name: 'Set up an authenticator app' }).getByLabel('Current password').fill(OTHER_PASSWORD);
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  // Scanned as a phone's camera would: a picture of what the page draws.
  const app = Authenticator.scanPng(await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).screenshot());
  expect(await page.getByTestId('totp-secret').textContent()).toBe(app.totp.secret.base32);
  await checkScreen(page, csp, 'authenticator set-up');
  await page.getByLabel('Code from your authenticator app').fill(app.code(t.clock.now()));
  await page.getByRole('button', { name: 'Confirm the app' }).click();
  await page.getByRole('heading', { name: 'Your backup codes' }).waitFor();
  expect(await page.getByTestId('backup-codes').getByRole('listitem').count()).toBe(10);
  await checkScreen(page, csp, 'backup codes');
  await page.getByRole('button', { name: 'I have kept them' }).click();
  await page.getByRole('list', { name: 'Enrolled' }).getByText('Authenticator app (10 backup codes left)').waitFor();
  return app;
}

describe('the account security screens in Chromium', () => {
  it('a person changes their password and PIN, enrols an authenticator app and sees it listed, adds, renames and deletes a passkey with a step-up, and replaces the backup codes', async () => {
    const page = await pageWithAuthenticator();
    const csp = await watchCsp(page);
    const res = await page.goto(`${origin}/account/security/password`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(page, 'wanjiru.security', STRONG_PASSWORD);
    await changePassword(page, csp);
    const app = await enrolAuthenticator(page, csp);

    // A passkey: the account has a factor now, so the API wants it proved again first.
    await page.getByRole('form', { name: 'Add a passkey' }).getByLabel('Name').fill('Test laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await checkScreen(page, csp, 'step-up');
    await page.getByRole('form', { name: 'Confirm it is you' }).getByLabel('Code from your authenticator app').fill(nextCode(app));
    await page.getByRole('form', { name: 'Confirm it is you' }).getByRole('button', { name: 'Verify' }).click();
    await page.getByText('The passkey Test laptop is added.').waitFor();
    await page.getByRole('rowheader', { name: 'Test laptop' }).waitFor();
    await page.getByRole('list', { name: 'Enrolled' }).getByText('Passkeys').waitFor();
    await checkScreen(page, csp, 'passkeys');

    await page.getByRole('button', { name: 'Rename the passkey Test laptop' }).click();
    await page.getByLabel('New name').fill('Work laptop');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('rowheader', { name: 'Work laptop' }).waitFor();
    await page.getByRole('button', { name: 'Delete the passkey Work laptop' }).click(); // stepped up a moment ago: no question
    await page.getByText('The passkey Work laptop is deleted.').waitFor();
    await page.getByText('No passkey.').waitFor();

    await page.getByRole('form', { name: 'Replace the backup codes' }).getByLabel('Code from your authenticator app').fill(nextCode(app));
    await page.getByRole('button', { name: 'Replace the backup codes' }).click();
    await page.getByRole('heading', { name: 'Your backup codes' }).waitFor();
    expect(await page.getByTestId('backup-codes').getByRole('listitem').count()).toBe(10);
    await checkScreen(page, csp, 'backup codes replaced');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);

    const factors = await t.s.db.selectFrom('mfa_factors').select(['method', 'status']).where('user_id', '=', (await t.s.users.findByLogin('wanjiru.security'))!.id).execute();
    expect(factors.filter((f) => f.status === 'active').map((f) => f.method)).toEqual(['totp']);
  });
});

describe('Trusted Types on the pages', () => {
  it('markup written as a string into the page (an injected script\'s innerHTML) is refused; React Aria emptying its announcer is not', async () => {
    const page = await (await browser.newContext()).newPage();
    try {
      await page.goto(`${origin}/account`);
      await page.getByLabel('Username or email').waitFor();
      const outcome = await page.evaluate(() => {
        const target = document.createElement('div');
        document.body.append(target);
        const attempt = (html: string): string => {
          try {
            target.innerHTML = html;
            return 'written';
          } catch {
            return 'refused';
          }
        };
        return { markup: attempt('<img src=x onerror="alert(1)">'), empty: attempt(''), left: target.childElementCount };
      });
      expect(outcome).toEqual({ markup: 'refused', empty: 'written', left: 0 });
    } finally {
      await page.context().close();
    }
  });
});
