/**
 * The console's approvals and a user's sessions in real Chromium, against a service enforcing
 * transport encryption: an operator approves a device waiting in the device-binding queue, ends
 * a user's session from the user's page, and on the recoveries screen is refused (403, four
 * eyes) a recovery they started at the desk, then approves one the person started from their
 * app. Each screen and dialog: axe (no serious or critical finding) and no CSP violation.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient, StrongroomError } from '../../packages/client/src/index.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen as checkPage } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
let browser: Browser;
let origin: string;
let page: Page;
let csp: Awaited<ReturnType<typeof watchCsp>>;

/** The SDK, as a bank's app or another operator's console: encrypted, signed in as `username`. */
async function clientOf(username: string): Promise<StrongroomClient> {
  const client = new StrongroomClient({ baseUrl: origin });
  await client.login({ username, password: STRONG_PASSWORD });
  return client;
}

beforeAll(async () => {
  t = await createTestApp({ database: await openTestDatabase(), clock: new ManualClock(Date.now()), secrets: testSecrets(), env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'staff' } });
  await seedUser(t.s, 'approvals.operator', { roles: ['admin'] });
  ({ origin, browser } = await serveToChromium(t.app));
  page = await (await browser.newContext()).newPage();
  csp = await watchCsp(page);
  await page.goto(`${origin}/console`);
  await signIn(page, 'approvals.operator', STRONG_PASSWORD);
  await page.getByRole('heading', { name: 'Users' }).waitFor();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const checkScreen = (name: string): Promise<void> => checkPage(page, csp, name);

describe('approvals and sessions in the console', () => {
  it('an operator approves a device waiting for its binding, then ends a user\'s session from their page', async () => {
    const agent = await seedUser(t.s, 'agent.wanjiru', { roles: ['customer'] });
    await t.s.deviceBindings.request(agent, 'agent-phone-fingerprint-0001', 'agent', 'StrongroomAgent/3.2 (Android 14; SM-A145F)', {});
    await seedUser(t.s, 'session.holder', { roles: ['customer'] });
    const holder = await clientOf('session.holder');

    await page.getByRole('navigation').getByRole('link', { name: 'Device bindings' }).click();
    await page.getByRole('heading', { name: 'Device bindings' }).waitFor();
    await page.getByRole('rowheader', { name: 'StrongroomAgent/3.2 (Android 14; SM-A145F)' }).waitFor();
    await checkScreen('device bindings');
    await page.getByRole('button', { name: 'Approve StrongroomAgent/3.2 (Android 14; SM-A145F) for agent.wanjiru on agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve this device?' });
    await dialog.getByText(/sign in as agent\.wanjiru on the agent channel/).waitFor();
    await checkScreen('approve a device');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('The device is approved.').waitFor();
    await page.getByText('No device waits for approval.').waitFor();
    const { bindings } = await t.s.deviceBindings.list({ userUuid: agent.uuid, limit: 10, offset: 0 });
    expect(bindings.map((b) => b.status)).toEqual(['approved']);

    await page.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
    await page.getByRole('rowheader', { name: 'session.holder' }).click();
    await page.getByRole('heading', { name: 'session.holder' }).waitFor();
    const sessions = page.getByRole('grid', { name: 'Sessions of session.holder' });
    await sessions.getByRole('button', { name: /^End the session started/ }).click();
    const end = page.getByRole('dialog', { name: 'End this session?' });
    await end.getByText(/session\.holder is signed out of/).waitFor();
    await checkScreen('end a session');
    await end.getByRole('button', { name: 'End', exact: true }).click();
    await page.getByText('Sessions ended: 1.').waitFor();
    await sessions.getByText('No active session.').waitFor();
    await checkScreen('a user with sessions and devices');
    const refused = await holder.request('GET', '/api/v1/auth/sessions').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StrongroomError);
    expect((refused as StrongroomError).status).toBe(401);
  });

  it('recoveries: one the operator started at the desk is refused them (403, four eyes); one the person started is approved after the document', async () => {
    const desk = await seedUser(t.s, 'desk.customer', { email: 'desk.customer@bank.example', phone: '+254700000101' });
    const own = await seedUser(t.s, 'app.customer', { email: 'app.customer@bank.example', phone: '+254700000102' });
    const operator = await clientOf('approvals.operator');
    const started = await operator.request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier: desk.username, lost: 'mfa' });
    const person = new StrongroomClient({ baseUrl: origin });
    const asked = await person.request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier: own.username, lost: 'mfa' });

    await page.getByRole('navigation').getByRole('link', { name: 'Recoveries' }).click();
    await page.getByRole('heading', { name: 'Recoveries' }).waitFor();
    await checkScreen('recoveries');
    await page.getByLabel('Reference').fill(started.reference.toLowerCase());
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Recovery ${started.reference}` }).waitFor();
    await page.getByText('d***@bank.example').waitFor();
    await checkScreen('a recovery found');
    await page.getByRole('button', { name: 'Approve' }).click();
    const refusedDialog = page.getByRole('dialog', { name: `Approve the recovery ${started.reference}?` });
    await refusedDialog.getByText(/toward recovering the second factors: to finish, they still give the password/).waitFor();
    await refusedDialog.getByLabel('Last four characters of its number').fill('4821');
    await refusedDialog.getByRole('button', { name: 'Approve' }).click();
    await refusedDialog.getByText('Another operator must decide this recovery.').waitFor();
    await refusedDialog.getByText(/Four eyes: this decision is another operator's/).waitFor();
    await checkScreen('a four-eyes refusal');
    await refusedDialog.getByRole('button', { name: 'Cancel' }).click();

    await page.getByLabel('Reference').fill(asked.reference);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Recovery ${asked.reference}` }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    const dialog = page.getByRole('dialog', { name: `Approve the recovery ${asked.reference}?` });
    await dialog.getByLabel('Last four characters of its number').fill('7730');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: app.customer finishes the recovery from their app.').waitFor();
    await page.getByText('No recovery waits for an approval under this reference.').waitFor();
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|^pageerror/i.test(e))).toEqual([]);
  });
});
