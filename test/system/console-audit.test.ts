/**
 * The console's audit log in real Chromium, against a service enforcing transport encryption: a
 * person fails a sign-in on /account and then signs in; the operator finds both on the audit
 * screen, narrows the list by event, exports the user's entries to CSV (a Blob download under
 * the console's CSP) and sees them in the chart of sign-ins and failures by channel. Each screen:
 * the CSP header, no violation reported, no serious or critical axe-core finding.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCsv } from '../../packages/console/src/console/audit/csv.js';
import type { AuditEntry } from '../../packages/console/src/console/audit/types.js';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD, withoutRiskResponses, WRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'staff' } });
  await withoutRiskResponses(t.s); // a failed sign-in is the subject here, not what the risk engine does next
  await seedUser(t.s, 'audit.operator', { roles: ['admin'] });
  await seedUser(t.s, 'audit.customer');
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The entries table's rows holding every one of `texts` (React Aria's table is a grid). */
const rows = (page: Page, ...texts: string[]) => texts.reduce((l, text) => l.filter({ hasText: text }), page.getByRole('grid', { name: 'Entries' }).getByRole('row'));

describe('the console\'s audit log in Chromium', () => {
  it('shows a failed and a successful sign-in, narrows by event, exports the rows to CSV and charts them by channel', async () => {
    const person = await (await browser.newContext()).newPage();
    await person.goto(`${origin}/account`);
    await signIn(person, 'audit.customer', WRONG_PASSWORD);
    await person.getByText('The username or the password is wrong.').waitFor();
    await person.getByLabel('Password', { exact: true }).fill(STRONG_PASSWORD);
    await person.getByRole('button', { name: 'Sign in' }).click();
    await person.getByRole('heading', { name: 'Profile' }).waitFor();

    const page = await (await browser.newContext({ acceptDownloads: true })).newPage();
    const csp = await watchCsp(page);
    const res = await page.goto(`${origin}/console/audit`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(page, 'audit.operator', STRONG_PASSWORD);
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    await rows(page, 'FAILED_LOGIN_ATTEMPT', 'audit.customer').first().waitFor();
    await rows(page, 'USER_LOGIN', 'audit.customer').first().waitFor();
    expect(await rows(page, 'FAILED_LOGIN_ATTEMPT', 'audit.customer').first().textContent()).toMatch(/Failure.*web.*127\.0\.0\.1/);
    await checkScreen(page, csp, 'audit log');

    // Narrowed by event: the failure stays, the sign-ins go.
    await page.getByLabel('Event').fill('failed_login_attempt');
    await page.getByRole('button', { name: 'Apply' }).click();
    await rows(page, 'USER_LOGIN').first().waitFor({ state: 'detached' });
    await rows(page, 'FAILED_LOGIN_ATTEMPT', 'audit.customer').first().waitFor();
    const events = (await rows(page).allTextContents()).slice(1);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((r) => r.includes('FAILED_LOGIN_ATTEMPT'))).toBe(true);

    // The person's entries, by username: exported to CSV, and in the chart.
    await page.getByLabel('Event').fill('');
    await page.getByLabel('User', { exact: true }).fill('audit.customer');
    await page.getByRole('button', { name: 'Apply' }).click();
    await rows(page, 'USER_LOGIN', 'audit.customer').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export to CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^audit-.*\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    expect(csv[0]).toBe('timestamp,event_type,status,username,user_id,channel,country,ip_address');
    const lines = csv.slice(1).map((l) => l.split(','));
    expect(lines.every((l) => l[3] === 'audit.customer')).toBe(true);
    expect(lines.filter((l) => l[1] === 'FAILED_LOGIN_ATTEMPT' && l[2] === 'FAILURE' && l[5] === 'web' && l[7] === '127.0.0.1')).toHaveLength(1);
    expect(lines.filter((l) => l[1] === 'USER_LOGIN' && l[2] === 'SUCCESS' && l[5] === 'web')).toHaveLength(1);
    await page.getByText(`${lines.length} entries exported.`).waitFor();

    const chart = page.getByRole('img', { name: 'Sign-ins and failures over time, by channel' });
    await chart.waitFor();
    expect(await chart.locator('desc').textContent()).toMatch(/^1 sign-ins and 1 failed sign-ins from .* web: 1 sign-ins, 1 failures\.$/);
    expect(await chart.locator('[data-series="sign-ins:web"] rect').count()).toBe(1);
    expect(await chart.locator('[data-series="failures:web"] rect').count()).toBe(1);
    expect(await chart.locator('g[data-series]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-series')))).toEqual(['sign-ins:web', 'failures:web']);
    await page.getByText('The sign-ins and failures as a table').click();
    const table = page.getByRole('table', { name: 'Sign-ins and failures over time, by channel' });
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(['Time', 'Sign-ins (web)', 'Failures (web)']);
    await checkScreen(page, csp, 'audit log, one user, chart as a table');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);
  });

  it('threat: CSV formula injection: a field a spreadsheet would run (=, +, -, @, tab, CR, or a formula after the ";" Excel splits cells on in Portuguese and French) is exported as text, quotes and line breaks are quoted', () => {
    const entry = (username: string): AuditEntry => ({ audit_id: 'a', timestamp: '2026-12-06T10:00:00.000Z', event_type: 'FAILED_LOGIN_ATTEMPT', user_id: null, username, status: 'FAILURE', ip_address: '41.90.64.10', channel: 'web', location: { country: 'KE' } });
    const lines = auditCsv(['=HYPERLINK("http://evil.example")', '+1', '-2', '@SUM(A1)', '\tx', 'a,b', 'say "hi"\nbye', 'x;=1+1;', 'a|@b'].map(entry)).split('\r\n');
    expect(lines.slice(1, 10).map((l) => l.split(',FAILURE,')[1]!.split(',,web')[0])).toEqual([
      `"'=HYPERLINK(""http://evil.example"")"`, "'+1", "'-2", "'@SUM(A1)", `"'\tx"`, '"a,b"', '"say ""hi""\nbye"', `"x;'=1+1;"`, `"a|'@b"`,
    ]);
    expect(lines[1]).toBe(`2026-12-06T10:00:00.000Z,FAILED_LOGIN_ATTEMPT,FAILURE,"'=HYPERLINK(""http://evil.example"")",,web,KE,41.90.64.10`);
  });
});
