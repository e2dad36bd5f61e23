/**
 * The console's security alerts and the charts of the audit screen in real Chromium, against a
 * service enforcing transport encryption: with audit entries seeded over three hours and an alert
 * raised through the service, the operator reads the exact counts of sign-ins, failures, account
 * locks and alerts in the charts' tables (as the server's summary counts them), finds the alert in
 * the list, acknowledges it with a note and resolves it, and the service holds it resolved by them.
 * Each screen and dialog: no CSP violation, no serious or critical axe-core finding.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartData, unitFor, type AuditSummary } from '../../packages/console/src/console/audit/chart-data.js';
import type { AuditEvent } from '../../src/audit/service.js';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let t: TestApp;
let browser: Browser;
let origin: string;
let customer: { uuid: string };
let alertId: string;
/** A whole hour the day before: the seeded range is [base, base + 3 h). */
let base: number;

/** Writes an entry for the customer at `at` as the service does. */
async function seed(at: number, eventType: AuditEvent, channel: string): Promise<void> {
  const now = t.clock.now();
  t.clock.set(at);
  const row = t.s.audit.row({ eventType, status: eventType === 'USER_LOGIN' ? 'SUCCESS' : 'FAILURE', userId: customer.uuid, username: 'alerts.customer', channel });
  t.clock.set(now);
  await t.s.db.insertInto('audit_log').values(row).execute();
}

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'staff' } });
  await seedUser(t.s, 'alerts.operator', { roles: ['admin'] });
  customer = await seedUser(t.s, 'alerts.customer');
  base = Math.floor(t.clock.now() / HOUR) * HOUR - 24 * HOUR;
  await seed(base + 10 * MINUTE, 'USER_LOGIN', 'web');
  await seed(base + 20 * MINUTE, 'USER_LOGIN', 'mobile');
  await seed(base + 30 * MINUTE, 'FAILED_LOGIN_ATTEMPT', 'web');
  await seed(base + 65 * MINUTE, 'FAILED_LOGIN_ATTEMPT', 'web');
  await seed(base + 66 * MINUTE, 'ACCOUNT_LOCKED', 'web');
  const now = t.clock.now();
  t.clock.set(base + 2 * HOUR + 5 * MINUTE);
  alertId = (await t.s.alerts.raise(t.s.db, {
    rule: 'impossible_travel', severity: 'high', userId: customer.uuid, auditId: null, channel: 'web', ipHash: 'c2b7e1f0', location: { country: 'PT', city: 'Lisbon' }, score: 85,
    indicators: [{ signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', km: 6470, minutes: 20 } }], dedupeKey: 'console-alerts:1',
  }))!;
  t.clock.set(now);
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A chart's table, opened: each row's counts (the time left out). */
async function chartRows(page: Page, summary: string, caption: string): Promise<{ head: string[]; rows: string[][] }> {
  await page.getByText(summary).click();
  const table = page.getByRole('table', { name: caption });
  const head = await table.getByRole('columnheader').allTextContents();
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  return { head, rows };
}

const local = (ms: number) => new Date(ms).toISOString().slice(0, 16); // the context's time zone is UTC

describe('the console\'s security alerts and charts in Chromium', () => {
  it('charts the exact counts of a range, then acknowledges and resolves an alert', async () => {
    const page = await (await browser.newContext({ timezoneId: 'UTC', locale: 'en-US' })).newPage();
    const csp = await watchCsp(page);
    const res = await page.goto(`${origin}/console/audit`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(page, 'alerts.operator', STRONG_PASSWORD);
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();

    await page.getByLabel('User', { exact: true }).fill('alerts.customer');
    await page.getByLabel('From', { exact: true }).fill(local(base));
    await page.getByLabel('Until', { exact: true }).fill(local(base + 3 * HOUR));
    await page.getByRole('button', { name: 'Apply' }).click();
    const signIns = page.getByRole('img', { name: 'Sign-ins and failures over time, by channel' });
    await expect.poll(() => signIns.locator('desc').textContent()).toMatch(/^2 sign-ins and 2 failed sign-ins from .* web: 1 sign-ins, 2 failures; mobile: 1 sign-ins, 0 failures\.$/);
    const locks = page.getByRole('img', { name: 'Account locks and security alerts over time, by channel' });
    expect(await locks.locator('desc').textContent()).toMatch(/^1 account locks and 1 security alerts raised from .* web: 1 locks, 1 alerts\.$/);
    expect(await locks.locator('g[data-series]').evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-series')} ${g.querySelectorAll('rect').length}`))).toEqual(['locks:web 1', 'alerts:web 1']);

    const s = await chartRows(page, 'The sign-ins and failures as a table', 'Sign-ins and failures over time, by channel');
    expect(s.head).toEqual(['Time', 'Sign-ins (web)', 'Sign-ins (mobile)', 'Failures (web)', 'Failures (mobile)']);
    expect(s.rows).toEqual([['1', '1', '1', '0'], ['0', '0', '1', '0']]); // base, base + 1 h; nothing at base + 2 h
    const l = await chartRows(page, 'The locks and alerts as a table', 'Account locks and security alerts over time, by channel');
    expect(l.head).toEqual(['Time', 'Locks (web)', 'Alerts (web)']);
    expect(l.rows).toEqual([['1', '0'], ['0', '1']]); // base + 1 h, base + 2 h
    // The server's count, as the page read it.
    const summary = await t.s.auditSummary.summarise({ from: new Date(base).toISOString(), to: new Date(base + 3 * HOUR).toISOString(), bucket: 'hour', userId: customer.uuid });
    expect(summary.totals).toEqual({ sign_ins: 2, failed_sign_ins: 2, account_locks: 1, alerts_raised: 1 });
    await checkScreen(page, csp, 'audit log with both charts as tables');

    // The alert, from the list.
    await page.getByRole('navigation').getByRole('link', { name: 'Security alerts' }).click();
    await page.getByRole('heading', { name: 'Security alerts', level: 1 }).waitFor();
    const row = page.getByRole('grid', { name: 'Alerts' }).getByRole('row').filter({ hasText: 'impossible_travel' });
    expect(await row.textContent()).toMatch(/impossible_travel.*High.*alerts\.customer.*Open/);
    await checkScreen(page, csp, 'security alerts');
    await row.getByRole('link', { name: /^Open the alert impossible_travel/ }).click();
    await page.getByRole('heading', { name: 'Alert: impossible_travel', level: 1 }).waitFor();
    await page.getByRole('table', { name: 'The account\'s audit trail around the alert' }).getByText('SECURITY_ALERT_RAISED').waitFor();
    await checkScreen(page, csp, 'one alert');

    await page.getByRole('button', { name: 'Acknowledge' }).click();
    const ack = page.getByRole('dialog', { name: 'Acknowledge this alert?' });
    await ack.getByLabel('Note (optional)').fill('Calling the customer.');
    await checkScreen(page, csp, 'acknowledge dialog');
    await ack.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByText('The alert is acknowledged.').waitFor();
    await page.getByText(/by alerts\.operator, .* — Calling the customer\./).waitFor();
    expect((await t.s.alerts.view(alertId)).state).toBe('acknowledged');

    await page.getByRole('button', { name: 'Resolve' }).click();
    const resolve = page.getByRole('dialog', { name: 'Resolve this alert?' });
    await resolve.getByLabel('What was found and what was done').fill('Customer confirmed the trip; no action.');
    await checkScreen(page, csp, 'resolve dialog');
    await resolve.getByRole('button', { name: 'Resolve' }).click();
    await page.getByText('The alert is resolved.').waitFor();
    expect(await page.getByRole('button', { name: 'Resolve' }).count()).toBe(0);
    const done = await t.s.alerts.view(alertId);
    expect(done.state).toBe('resolved');
    expect(done.acknowledged).toMatchObject({ by_username: 'alerts.operator', note: 'Calling the customer.' });
    expect(done.resolved).toMatchObject({ by_username: 'alerts.operator', note: 'Customer confirmed the trip; no action.' });

    // Back to the list: no longer open.
    await page.getByRole('link', { name: 'All security alerts' }).click();
    await page.getByRole('button', { name: /Any state/ }).click();
    await page.getByRole('option', { name: 'Open', exact: true }).click();
    await page.getByText('No alert matches.').waitFor();
    await checkScreen(page, csp, 'security alerts, open ones');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);
  });

  it('the chart sums the server\'s hours into bars of 6 hours and its days into weeks starting on Monday', () => {
    const row = (start: string, channel: string | null, sign_ins: number) => ({ start, channel, sign_ins, failed_sign_ins: 0, account_locks: 0, alerts_raised: 1 });
    const hours: AuditSummary = { from: '2026-03-02T05:30:00.000Z', to: '2026-03-05T05:30:00.000Z', bucket: 'hour', totals: { sign_ins: 6, failed_sign_ins: 0, account_locks: 0, alerts_raised: 3 }, rows: [row('2026-03-02T05:00:00.000Z', 'web', 1), row('2026-03-02T06:00:00.000Z', 'web', 2), row('2026-03-02T11:00:00.000Z', null, 3)] };
    expect(unitFor(Date.parse(hours.from), Date.parse(hours.to))).toEqual({ unit: 6 * HOUR, bucket: 'hour' });
    const h = chartData(hours);
    expect(h.buckets[0]!.start).toBe(Date.parse('2026-03-02T00:00:00.000Z'));
    expect(h.buckets.slice(0, 2).map((b) => b.counts.sign_ins)).toEqual([{ web: 1 }, { web: 2, none: 3 }]);
    expect(h.channels).toEqual(['web', 'none']);
    const days: AuditSummary = { from: '2026-01-01T00:00:00.000Z', to: '2026-06-01T00:00:00.000Z', bucket: 'day', totals: { sign_ins: 3, failed_sign_ins: 0, account_locks: 0, alerts_raised: 2 }, rows: [row('2026-03-01T00:00:00.000Z', 'web', 1), row('2026-03-02T00:00:00.000Z', 'web', 2)] };
    const d = chartData(days);
    expect(d.unit).toBe(7 * 24 * HOUR);
    const byStart = new Map(d.buckets.map((b) => [new Date(b.start).toISOString(), b.counts.sign_ins]));
    expect(byStart.get('2026-02-23T00:00:00.000Z')).toEqual({ web: 1 }); // Sunday 1 March is in the week of Monday 23 February
    expect(byStart.get('2026-03-02T00:00:00.000Z')).toEqual({ web: 2 });
  });
});
