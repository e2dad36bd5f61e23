/**
 * The operator console and the account pages in real Chromium, against a service enforcing
 * transport encryption: an operator signs in with a TOTP code and creates a user, who signs in
 * on /account with the temporary password, is made to choose their own, sees their profile and
 * sessions, and is signed out the moment an administrator ends that session (the real-time
 * channel). On every page: the strict Content-Security-Policy in the header, no violation of it
 * reported, and no serious or critical axe-core finding. `/` leads a browser to both.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { Authenticator, enrolTotp } from '../harness/authenticator.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { chooseFirstPassword, createUser, signIn, watchCsp } from '../harness/console-pages.js';
import { OTHER_PASSWORD, seedUser, signIn as apiSignIn, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
let browser: Browser;
let origin: string;
let authenticator: Authenticator;

beforeAll(async () => {
  // The operator and their authenticator are set up in plaintext on a first app, which enforcement would refuse;
  // the pages are then served by an app on the same database that enforces transport encryption.
  const database = await openTestDatabase();
  const clock = new ManualClock(Date.now());
  const secrets = testSecrets();
  const setup = await createTestApp({ database, clock, secrets });
  await seedUser(setup.s, 'console.operator', { roles: ['admin'] });
  authenticator = (await enrolTotp(setup.app, clock, (await apiSignIn(setup.app, 'console.operator')).access_token)).authenticator;
  await setup.closeApp();
  t = await createTestApp({ database, clock, secrets, env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'staff' } });
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the console and the account pages in Chromium', () => {
  it('an operator signs in with TOTP and creates a user; the user signs in on /account, chooses a password, sees their sessions, and is signed out when the session is ended', async () => {
    const operator = await (await browser.newContext()).newPage();
    const csp = await watchCsp(operator);
    const res = await operator.goto(`${origin}/console`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res?.headers()['cache-control']).toBe('no-store');
    await operator.getByRole('heading', { name: 'Sign in' }).waitFor();
    await checkScreen(operator, csp, 'console sign-in');

    await signIn(operator, 'console.operator', STRONG_PASSWORD, () => authenticator.code(t.clock.now()));
    await operator.getByRole('heading', { name: 'Users' }).waitFor();
    await operator.getByRole('rowheader', { name: 'console.operator' }).waitFor();
    await checkScreen(operator, csp, 'users');

    const temporary = await createUser(operator, { username: 'amina.browser', fullName: 'Amina Browser', email: 'amina.browser@bank.example' });
    expect(temporary.length).toBeGreaterThanOrEqual(12);
    await checkScreen(operator, csp, 'user created');
    await operator.getByRole('link', { name: 'Open the user' }).click();
    await operator.getByRole('heading', { name: 'amina.browser' }).waitFor();
    await checkScreen(operator, csp, 'a user');

    const person = await (await browser.newContext()).newPage();
    const personCsp = await watchCsp(person);
    const account = await person.goto(`${origin}/account/sessions`);
    expect(account?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(person, 'amina.browser', temporary);
    await chooseFirstPassword(person, OTHER_PASSWORD);
    await person.getByRole('heading', { name: 'Sessions' }).waitFor();
    await person.getByText('This session').waitFor();
    await checkScreen(person, personCsp, 'account sessions');
    await person.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
    await person.getByText('amina.browser@bank.example').waitFor();
    await checkScreen(person, personCsp, 'account profile');

    // An administrator ends every session of the user: the page is told by the real-time channel.
    const user = await t.s.users.findByLogin('amina.browser');
    await t.s.userLifecycle.endSessions(user!.uuid, undefined, { actor: { uuid: null, username: 'test' }, context: { ip: '127.0.0.1', deviceFingerprint: null, userAgent: 'test', channel: null } });
    await person.getByText('Your session has ended. Sign in again.').waitFor();
    expect(await personCsp.violations()).toEqual([]);
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy/i.test(e))).toEqual([]);
    expect(personCsp.consoleErrors.filter((e) => /Content.Security.Policy/i.test(e))).toEqual([]);
    expect(personCsp.consoleErrors.filter((e) => e.startsWith('pageerror'))).toEqual([]);
  });

  it('a role that requires a second factor: the person enrols an authenticator app at sign-in (its QR code read from the page), keeps the backup codes and is signed in', async () => {
    await seedUser(t.s, 'staff.browser', { roles: ['staff'] });
    const page = await (await browser.newContext()).newPage();
    const csp = await watchCsp(page);
    const setups = { login: 0, setup: 0 };
    page.on('request', (r) => {
      if (r.url().endsWith('/api/v1/auth/login')) setups.login += 1;
      if (r.url().endsWith('/api/v1/2fa/totp/setup')) setups.setup += 1;
    });
    await page.goto(`${origin}/account`);
    await signIn(page, 'staff.browser', STRONG_PASSWORD);
    await page.getByRole('heading', { name: 'Set up your authenticator app' }).waitFor();
    // Scanned as a phone's camera would: a picture of what the page draws.
    const app = Authenticator.scanPng(await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).screenshot());
    expect(await page.getByTestId('totp-secret').textContent()).toBe(app.totp.secret.base32);
    expect(setups).toEqual({ login: 1, setup: 1 });
    await checkScreen(page, csp, 'authenticator set-up');
    await page.getByLabel('Code from your authenticator app').fill(app.code(t.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Your backup codes' }).waitFor();
    expect(await page.getByTestId('backup-codes').getByRole('listitem').count()).toBe(10);
    await page.getByRole('button', { name: 'I have kept them: continue' }).click();
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    expect(await csp.violations()).toEqual([]);
  });

  it('/ leads a browser to the console, the account pages and the API reference; a JSON client still gets 404', async () => {
    const page = await (await browser.newContext()).newPage();
    const res = await page.goto(`${origin}/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await page.getByRole('link', { name: 'Operator console' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console');
    const json = await page.request.get(`${origin}/`, { headers: { accept: 'application/json' } });
    expect(json.status()).toBe(404);
    expect((await json.json()).error_code).toBe('NOT_FOUND');
  });

  it('the build has nothing inline, and its hashed assets are cached for a year without the API\'s no-cache headers', async () => {
    for (const page of ['index.html', 'account.html']) {
      const html = readFileSync(path.join(inject('builtDist'), 'console', page), 'utf8');
      expect(html, page).not.toMatch(/<style|\sstyle=|<script(?![^>]*\ssrc=)[^>]*>/);
      expect(html, page).toMatch(/<script type="module" crossorigin src="\/console\/assets\/[\w-]+\.js"><\/script>/);
    }
    const page = await fetch(`${origin}/console`);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())![1]!;
    const asset = await fetch(`${origin}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('pragma')).toBeNull();
    expect(asset.headers.get('expires')).toBeNull();
    const unknown = await fetch(`${origin}/console/assets/nothing-here.js`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json() as { error_code: string }).error_code).toBe('NOT_FOUND');
  });
});
