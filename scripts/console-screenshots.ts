/**
 * `npm run docs:screenshots`: pictures of the console's and the account pages' main screens for
 * docs/console.md (docs/console/*.png), taken in Debian's Chromium (playwright-core) from a
 * Strongroom started here on an in-memory database with a few made-up users. Not part of the
 * test suite: run it after changing a screen, and commit the pictures.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as OTPAuth from 'otpauth';
import pino from 'pino';
import { chromium, type Page } from 'playwright-core';
import { StrongroomClient } from '../packages/client/src/index.js';
import { createStrongroom } from '../src/app.js';
import { ManualClock } from '../src/platform/clock.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/db/database.js';
import { CHROMIUM_ARGS, ensureChromium } from '../test/harness/chromium.js';
import { chooseFirstPassword, createUser, signIn } from '../test/harness/console-pages.js';
import { queueScreenshots } from './screenshots/queues.js';
import { policyScreenshots } from './screenshots/policies.js';
import { usersScreenshots } from './screenshots/users.js';
import { contentScreenshots } from './screenshots/content.js';
import { accountScreenshots } from './screenshots/account.js';
import { configScreenshots } from './screenshots/config.js';
import { alertsScreenshots } from './screenshots/alerts.js';
import { recoveriesScreenshots } from './screenshots/recoveries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'docs', 'console');
const PASSWORD = 'Vt7#qLm2!xRp9$';
const NEW_PASSWORD = 'Hq9#zLt4!mWe7&';

type Registry = ReturnType<typeof createStrongroom>['registry'];
type Shot = (page: Page, name: string) => Promise<void>;

/** A Strongroom on an in-memory database with made-up users and a day of audit entries, listening on loopback. */
async function startService() {
  const log = pino({ level: 'silent' });
  const database = await openDatabase({ kind: 'pglite-memory' }, log);
  await database.migrate();
  const clock = new ManualClock(Date.now());
  const transportPrivateKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const strongroom = createStrongroom({
    config: loadConfig({ NODE_ENV: 'test', BCRYPT_COST: '4', ENFORCE_TRANSPORT_ENCRYPTION: '1', PUSH_DEV_OUTBOX: '0', MFA_REQUIRED_ROLES: 'staff' }),
    secrets: { fieldKey: randomBytes(32), ipHashKey: randomBytes(32), transportPrivateKeyPem, generated: [], fromDataDir: [] },
    database, clock, log,
  });
  await strongroom.init();
  const app = await strongroom.buildApp();
  const s = strongroom.registry;
  const who = { uuid: null, username: 'screenshots' };
  await s.consoleAdmin.createUser({ username: 'operator.njeri', email: 'njeri@bank.example', phone: null, roles: ['admin'], password: PASSWORD, fullName: 'Njeri Kamau' }, who);
  for (const [username, fullName, roles] of [['amina.otieno', 'Amina Otieno', ['staff']], ['joao.silva', 'João Silva', ['customer']], ['claire.dubois', 'Claire Dubois', ['customer']], ['branch.kiosk', null, ['operator']]] as const) {
    await s.consoleAdmin.createUser({ username, email: `${username}@bank.example`, phone: null, roles: [...roles], password: PASSWORD, fullName }, who);
  }
  await seedAuditTrail(s, clock);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const close = async () => {
    await app.close();
    await strongroom.close();
    await database.close();
  };
  return { s, clock, origin, close };
}

async function main(): Promise<void> {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-changed.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the build failed');
  mkdirSync(OUT, { recursive: true });
  const { s, clock, origin, close } = await startService();
  const totp = await enrolAuthenticator(origin, clock);
  const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
  const shot: Shot = async (page, name) => {
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: path.join(OUT, `${name}.png`) });
    console.log(`docs/console/${name}.png`);
  };
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 760 } })).newPage();
    const temporary = await operatorSignsIn(page, origin, () => {
      clock.advance(30_000);
      return totp.generate({ timestamp: clock.now() });
    }, shot);
    const person = await (await browser.newContext({ viewport: { width: 1280, height: 760 }, locale: 'pt-PT' })).newPage();
    await personSignsIn(person, origin, temporary, shot);
    const staff = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await staff.goto(`${origin}/account`);
    await signIn(staff, 'amina.otieno', PASSWORD);
    await staff.getByRole('heading', { name: 'Set up your authenticator app' }).waitFor();
    await shot(staff, 'account-set-up-authenticator');
    await approvals(page, s, origin, shot);
    await accountSecurity(person, shot);
    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('img', { name: 'Sign-ins and failures over time, by channel' }).waitFor();
    await page.getByRole('rowheader').first().waitFor();
    await page.setViewportSize({ width: 1280, height: 1400 }); // the filters, the chart and the first entries
    await shot(page, 'console-audit');
    await queueScreenshots({ page, s, origin, password: PASSWORD, shot });
    await policyScreenshots(page, s, shot);
    await usersScreenshots(page, s, shot);
    await contentScreenshots(page, s, shot);
    await accountScreenshots({ browser, s, origin, password: PASSWORD, shot });
    await configScreenshots(page, s, shot);
    await alertsScreenshots({ page, s, clock, shot });
    await recoveriesScreenshots({ page, browser, s, origin, password: PASSWORD, shot });
  } finally {
    await browser.close();
    await close();
  }
}

/** `/`, the console's sign-in with its second factor, the users, a new user; returns the new user's temporary password. */
async function operatorSignsIn(page: Page, origin: string, code: () => string, shot: Shot): Promise<string> {
  await page.goto(`${origin}/`);
  await shot(page, 'home');
  await page.goto(`${origin}/console`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await shot(page, 'console-sign-in');
  await signIn(page, 'operator.njeri', PASSWORD);
  await page.getByLabel('Code from your authenticator app').waitFor();
  await shot(page, 'console-second-factor');
  await page.getByLabel('Code from your authenticator app').fill(code());
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('rowheader', { name: 'amina.otieno' }).waitFor();
  await shot(page, 'console-users');
  const temporary = await createUser(page, { username: 'wanjiru.mwangi', fullName: 'Wanjiru Mwangi', email: 'wanjiru@bank.example' });
  await shot(page, 'console-user-created');
  await page.getByRole('link', { name: 'Open the user' }).click();
  await page.getByRole('heading', { name: 'wanjiru.mwangi' }).waitFor();
  await shot(page, 'console-user');
  return temporary;
}

/** The new user on /account in Portuguese (the browser's language), then English: first password, profile, sessions. */
async function personSignsIn(person: Page, origin: string, temporary: string, shot: Shot): Promise<void> {
  await person.goto(`${origin}/account`);
  await person.getByRole('heading', { name: 'Iniciar sessão' }).waitFor(); // the browser's language
  await shot(person, 'account-sign-in-pt');
  await person.getByLabel('Idioma').click();
  await person.getByRole('option', { name: 'English' }).click();
  await signIn(person, 'wanjiru.mwangi', temporary);
  await person.getByRole('heading', { name: 'Choose your password' }).waitFor();
  await shot(person, 'account-choose-password');
  await chooseFirstPassword(person, NEW_PASSWORD);
  await person.getByText('wanjiru@bank.example').waitFor();
  await shot(person, 'account-profile');
  await person.getByRole('navigation').getByRole('link', { name: 'Sessions' }).click();
  await person.getByText('This session').waitFor();
  await shot(person, 'account-sessions');
  await person.getByLabel('Language').click();
  await person.getByRole('option', { name: 'Português' }).click();
  await person.getByRole('heading', { name: 'Sessões' }).waitFor();
  await shot(person, 'account-sessions-pt');
}

/** Approvals and a user's sessions: a device waiting for its binding, a recovery read at the desk. */
async function approvals(page: Page, s: Registry, origin: string, shot: Shot): Promise<void> {
  const agent = await s.users.findByLogin('branch.kiosk');
  await s.deviceBindings.request(agent!, 'kiosk-tablet-fingerprint-0001', 'agent', 'StrongroomAgent/3.2 (Android 14; SM-T220)', {});
  const desk = await new StrongroomClient({ baseUrl: origin }).request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier: 'joao.silva', lost: 'mfa' });
  await page.getByRole('navigation').getByRole('link', { name: 'Device bindings' }).click();
  await page.getByRole('rowheader', { name: 'StrongroomAgent/3.2 (Android 14; SM-T220)' }).waitFor();
  await shot(page, 'console-device-bindings');
  await page.getByRole('button', { name: /^Approve StrongroomAgent/ }).click();
  await page.getByRole('dialog').waitFor();
  await shot(page, 'console-device-binding-approve');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Recoveries' }).click();
  await page.getByLabel('Reference').fill(desk.reference);
  await page.getByRole('button', { name: 'Find' }).click();
  await page.getByRole('heading', { name: `Recovery ${desk.reference}` }).waitFor();
  await shot(page, 'console-recovery');
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('dialog').waitFor();
  await shot(page, 'console-recovery-approve');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
  await page.getByRole('rowheader', { name: 'wanjiru.mwangi' }).click();
  await page.getByRole('button', { name: /^End the session started/ }).waitFor();
  await page.setViewportSize({ width: 1280, height: 1100 });
  await shot(page, 'console-user-sessions');
}

/** Account security: the password's rules refusing a weak one, the second factors, an authenticator's set-up. */
async function accountSecurity(person: Page, shot: Shot): Promise<void> {
  await person.getByLabel('Idioma').click();
  await person.getByRole('option', { name: 'English' }).click();
  await person.getByRole('navigation').getByRole('link', { name: 'Password and PIN' }).click();
  const change = person.getByRole('form', { name: 'Change your password' });
  await change.getByLabel('Current password').fill(NEW_PASSWORD);
  await change.getByLabel('New password', { exact: true }).fill('wanjiru2024');
  await change.getByLabel('New password again').fill('wanjiru2024');
  await change.getByRole('button', { name: 'Change the password' }).click();
  await person.getByText('The password does not meet the rules:').waitFor();
  await shot(person, 'account-password-refused');
  await person.getByRole('navigation').getByRole('link', { name: 'Second factors' }).click();
  await person.getByText('No second factor is set up yet.', { exact: false }).waitFor();
  await shot(person, 'account-factors');
  await person.getByRole('form', { name: 'Set up an authenticator app' }).getByLabel('Current password').fill(NEW_PASSWORD);
  await person.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await person.getByRole('img', { name: 'QR code to scan with your authenticator app' }).waitFor();
  await shot(person, 'account-factors-authenticator');
}

/** The operator enrols an authenticator app through the SDK (encrypted, as the service enforces); returns the app. */
async function enrolAuthenticator(origin: string, clock: ManualClock): Promise<OTPAuth.TOTP> {
  const client = new StrongroomClient({ baseUrl: origin });
  await client.login({ username: 'operator.njeri', password: PASSWORD });
  const setup = await client.request<{ secret: string }>('POST', '/api/v1/2fa/totp/setup', { current_password: PASSWORD });
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.secret), algorithm: 'SHA1', digits: 6, period: 30 });
  await client.request('POST', '/api/v1/2fa/totp/verify', { code: totp.generate({ timestamp: clock.now() }) });
  await client.logout();
  return totp;
}

/** A day of made-up sign-ins and failures on each channel, for the audit log's chart. */
async function seedAuditTrail(s: Registry, clock: ManualClock): Promise<void> {
  const HOUR = 3_600_000;
  const rows = [];
  const addresses: Record<string, string> = { web: '41.90.64.10', mobile: '41.90.12.7', ussd: '10.20.0.5', agent: '85.138.7.20' };
  for (let h = 23; h >= 0; h--) {
    const hourInNairobi = (new Date(clock.now() - h * HOUR).getUTCHours() + 3) % 24;
    const daytime = Math.max(0.5, 6 - Math.abs(13 - hourInNairobi) / 1.5); // busier around midday
    for (const [channel, weight] of [['web', 1], ['mobile', 2], ['ussd', 0.6], ['agent', 0.4]] as const) {
      const signIns = Math.round(daytime * weight);
      const failures = Math.round((signIns * ((h * 7) % 5)) / 12);
      for (let i = 0; i < signIns + failures; i++) {
        const failed = i >= signIns;
        rows.push({
          ...s.audit.row({ eventType: failed ? 'FAILED_LOGIN_ATTEMPT' : 'USER_LOGIN', status: failed ? 'FAILURE' : 'SUCCESS', username: ['joao.silva', 'claire.dubois', 'amina.otieno'][i % 3], channel, ip: addresses[channel] }),
          timestamp: new Date(clock.now() - h * HOUR - (i * 97_000) % HOUR),
        });
      }
    }
  }
  await s.db.insertInto('audit_log').values(rows).execute();
}

await main();
