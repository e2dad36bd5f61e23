/**
 * The console's access policies in real Chromium: an operator writes a policy for the agent
 * channel (an address list where a bad entry is refused as it is typed, hours in a time zone
 * chosen from the list, a circle set from the keyboard and a polygon drawn by clicks on the
 * coordinate canvas), sees the API's field error for geofences on a channel without locations,
 * saves, edits; the tester says a sign-in from outside the list is refused; a real sign-in from
 * there is refused with the policy's error code and is then a failure on the audit screen. The
 * stored policy is read from the database. Each screen: the CSP header, no violation reported,
 * no serious or critical axe-core finding.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { expectError, seedUser, STRONG_PASSWORD, withoutRiskResponses } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const OUTSIDE = '192.0.2.44';
const NAME = 'Agents: branch network and area';
const BRANCH = { lat: -1.2864, lon: 36.8172 };

let t: TestApp;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  t = await createTestApp({ env: { MFA_REQUIRED_ROLES: 'staff' } });
  await withoutRiskResponses(t.s); // the policy's refusal is the subject, not what the risk engine does next
  await seedUser(t.s, 'policy.operator', { roles: ['admin'] });
  await seedUser(t.s, 'field.agent', { roles: ['agent'] });
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

interface Stored {
  name: string;
  channel: string;
  role: string | null;
  rules: { ip?: { allow?: string[]; deny?: string[] }; schedule?: unknown[]; geofences?: Array<{ type: string; lat?: number; lon?: number; radius_m?: number; points?: Array<[number, number]> }> };
}

async function stored(): Promise<Stored | undefined> {
  const row = await t.s.database.db.selectFrom('access_policies').select(['name', 'channel', 'role', 'rules']).where('name', '=', NAME).executeTakeFirst();
  if (!row) return undefined;
  return { ...row, rules: (typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules) as Stored['rules'] };
}

async function choose(page: Page, label: RegExp, option: string): Promise<void> {
  await page.getByRole('button', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/** Clicks the canvas at fractions of its width and height. */
async function clickCanvas(page: Page, fx: number, fy: number): Promise<void> {
  const canvas = page.getByRole('img', { name: 'Areas on a longitude and latitude grid' });
  const box = (await canvas.boundingBox())!;
  await canvas.click({ position: { x: box.width * fx, y: box.height * fy } });
}

describe('the console\'s access policies in Chromium', () => {
  it('writes a policy (lists, hours, circle and polygon), tests a sign-in, and finds the real refusal in the audit log', async () => {
    const page = await (await browser.newContext()).newPage();
    const csp = await watchCsp(page);
    const res = await page.goto(`${origin}/console/policies`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(page, 'policy.operator', STRONG_PASSWORD);
    await page.getByRole('heading', { name: 'Access policies', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Channel agent' }).waitFor();
    await checkScreen(page, csp, 'access policies');

    await page.getByRole('link', { name: 'New policy' }).click();
    await page.getByRole('heading', { name: 'New policy', level: 1 }).waitFor();
    await checkScreen(page, csp, 'new policy');
    await page.getByLabel('Name').fill(NAME);
    await page.getByLabel('Role', { exact: true }).fill('agent');

    // The address list: a bad prefix is refused as it is typed, and the message goes when it is corrected.
    const allow = page.getByLabel('Allowed addresses');
    await allow.fill('10.20.0.0/16\n10.20.0.0/33');
    await page.getByText('10.20.0.0/33: the prefix length is 0 to 32 for IPv4, 0 to 128 for IPv6.').waitFor();
    expect(await allow.getAttribute('aria-invalid')).toBe('true');
    await checkScreen(page, csp, 'new policy, a bad address block');
    await allow.fill('10.20.0.0/16\n2001:db8:40::/48');
    await page.getByText('10.20.0.0/33: the prefix length').waitFor({ state: 'detached' });

    // Hours in Nairobi: Monday 08:00-10:00 and Tuesday 08:00-09:00, with the time it is there now.
    // A zone's whole name typed selects it (a click on the option would scroll the page, which closes React Aria's popover).
    const zone = page.getByRole('combobox', { name: 'Time zone' });
    await zone.fill('Africa/Nairobi');
    await page.getByText(/^It is now .* in Africa\/Nairobi\.$/).waitFor();
    await zone.press('Escape');
    await page.getByRole('option').first().waitFor({ state: 'detached' });
    expect(await zone.inputValue()).toBe('Africa/Nairobi');
    for (const cell of ['Monday 08:00 to 09:00', 'Monday 09:00 to 10:00', 'Tuesday 08:00 to 09:00']) await page.getByLabel(cell).check();

    // A circle from the keyboard, then a polygon by three clicks on the canvas.
    await page.getByRole('button', { name: 'Add a circle' }).click();
    await page.getByLabel('Circle 1: latitude').fill(String(BRANCH.lat));
    await page.getByLabel('Circle 1: longitude').fill(String(BRANCH.lon));
    await page.getByLabel('Circle 1: radius (metres)').fill('500');
    await page.getByLabel('Circle 1: radius (metres)').press('Tab');
    await page.getByRole('button', { name: 'Fit to the areas' }).click();
    await page.getByText('Adds a polygon point').click();
    await clickCanvas(page, 0.4, 0.3);
    await clickCanvas(page, 0.6, 0.3);
    await clickCanvas(page, 0.5, 0.7);
    await page.getByRole('button', { name: 'Finish the polygon (3 points)' }).click();
    await page.getByLabel('Polygon 2, point 3: latitude').waitFor();
    expect(await page.locator('[data-shape]').evaluateAll((s) => s.map((e) => e.getAttribute('data-shape')))).toEqual(['circle', 'polygon']);

    // On the web channel the API refuses geofences: its message shows by the areas.
    await page.getByRole('button', { name: 'Save the policy' }).click();
    await page.getByText('The policy was not saved: see the messages by the fields.').waitFor();
    await page.getByText(/^rules\.geofences: the web channel reports no location/).waitFor();
    expect(await stored()).toBeUndefined();
    await checkScreen(page, csp, 'new policy, refused by the API');

    await choose(page, /Channel/, 'agent');
    await page.getByRole('button', { name: 'Save the policy' }).click();
    await page.getByRole('heading', { name: NAME, level: 1 }).waitFor();
    const saved = (await stored())!;
    expect(saved).toMatchObject({ channel: 'agent', role: 'agent', rules: { ip: { allow: ['10.20.0.0/16', '2001:db8:40::/48'] } } });
    expect(saved.rules.schedule).toEqual([
      { time_zone: 'Africa/Nairobi', days: ['mon'], from: '08:00', to: '10:00' },
      { time_zone: 'Africa/Nairobi', days: ['tue'], from: '08:00', to: '09:00' },
    ]);
    expect(saved.rules.geofences![0]).toEqual({ type: 'circle', lat: BRANCH.lat, lon: BRANCH.lon, radius_m: 500 });
    const polygon = saved.rules.geofences![1]!;
    expect(polygon.type).toBe('polygon');
    expect(polygon.points).toHaveLength(3);
    for (const [lat, lon] of polygon.points!) {
      expect(Math.abs(lat - BRANCH.lat)).toBeLessThan(0.01);
      expect(Math.abs(lon - BRANCH.lon)).toBeLessThan(0.02);
    }
    await checkScreen(page, csp, 'a policy');

    // Edited: a refused block added.
    await page.getByLabel('Refused addresses').fill('10.20.99.0/24');
    await page.getByRole('button', { name: 'Save the policy' }).click();
    await page.getByText(`Policy ${NAME} saved.`).waitFor();
    expect((await stored())!.rules.ip).toEqual({ allow: ['10.20.0.0/16', '2001:db8:40::/48'], deny: ['10.20.99.0/24'] });

    // Listed under its channel and role.
    await page.getByRole('navigation').getByRole('link', { name: 'Access policies' }).click();
    const agentChannel = page.getByRole('region', { name: 'Channel agent' });
    await agentChannel.getByRole('link', { name: NAME }).waitFor();
    await agentChannel.getByRole('heading', { name: 'Role agent' }).waitFor();

    // The tester: a sign-in from outside the list is refused, by the address lists of this policy.
    await page.getByRole('navigation').getByRole('link', { name: 'Sign-in tester' }).click();
    await page.getByRole('heading', { name: 'Sign-in tester', level: 1 }).waitFor();
    await checkScreen(page, csp, 'sign-in tester');
    await choose(page, /Channel/, 'agent');
    await page.getByLabel('Username').fill('field.agent');
    await page.getByLabel('IP address').fill(OUTSIDE);
    await page.getByLabel('Latitude').fill(String(BRANCH.lat));
    // A latitude without a longitude is refused in the page, by the empty field, and nothing is asked.
    await page.getByRole('button', { name: 'Would it be allowed?' }).click();
    await page.getByText('Give the longitude too: a latitude alone is not a place. Or leave both empty.').waitFor();
    expect(await page.locator('.verdict').count()).toBe(0);
    await page.getByLabel('Longitude').fill(String(BRANCH.lon));
    expect(await page.getByText('Give the longitude too: a latitude alone is not a place. Or leave both empty.').count()).toBe(0);
    await page.getByRole('button', { name: 'Would it be allowed?' }).click();
    await page.getByText('Refused by the address lists.').waitFor();
    await page.getByText('The sign-in would be answered 403 POLICY_RESTRICTED.').waitFor();
    await page.getByText(`Policy: ${NAME}.`).waitFor();
    await checkScreen(page, csp, 'sign-in tester, refused');

    // A real sign-in from there: refused with the policy's error code, audited as a failure.
    const real = await t.app.inject({
      method: 'POST', url: '/api/v1/auth/login/mobile', remoteAddress: OUTSIDE,
      payload: { username: 'field.agent', password: STRONG_PASSWORD, channel: 'agent', device_fingerprint: 'fp-field-agent', latitude: BRANCH.lat, longitude: BRANCH.lon, accuracy_m: 10 },
    });
    expect(withoutRequestId(expectError(real, 403, 'POLICY_RESTRICTED').details)).toEqual({ rule: 'ip' });

    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    await page.getByLabel('User', { exact: true }).fill('field.agent');
    await choose(page, /Status/, 'Failure');
    await page.getByRole('button', { name: 'Apply' }).click();
    const row = page.getByRole('grid', { name: 'Entries' }).getByRole('row').filter({ hasText: 'POLICY_VIOLATION' }).filter({ hasText: 'field.agent' });
    await row.first().waitFor();
    expect(await row.first().textContent()).toMatch(/Failure.*agent.*192\.0\.2\.44/);
    await checkScreen(page, csp, 'audit log, the refused sign-in');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);
  });
});
