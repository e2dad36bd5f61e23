/**
 * The security alerts' screens and the chart of account locks and alerts, for docs/console.md
 * ("Alerts and charts"): a few made-up alerts raised through the service (one acknowledged), and
 * account locks over the last day. Called by scripts/console-screenshots.ts with a page signed in
 * as an administrator.
 */
import type { Page } from 'playwright-core';
import type { createStrongroom } from '../../src/app.js';
import type { ManualClock } from '../../src/platform/clock.js';
import type { AlertInput } from '../../src/risk/types.js';

type Registry = ReturnType<typeof createStrongroom>['registry'];
const HOUR = 3_600_000;

async function seedAlerts(s: Registry, clock: ManualClock): Promise<string> {
  const uuid = async (username: string) => (await s.users.findByLogin(username))!.uuid;
  const now = clock.now();
  const raise = async (hoursAgo: number, input: Omit<AlertInput, 'auditId' | 'ipHash' | 'dedupeKey'>) => {
    clock.set(now - hoursAgo * HOUR);
    const id = await s.alerts.raise(s.db, { ...input, auditId: null, ipHash: null, dedupeKey: `screenshots:${hoursAgo}` });
    clock.set(now);
    return id!;
  };
  const travel = await raise(1, {
    rule: 'impossible_travel', severity: 'high', userId: await uuid('joao.silva'), channel: 'web', location: { country: 'PT', city: 'Lisbon' }, score: 85,
    indicators: [{ signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', km: 6470, minutes: 20 } }, { signal: 'new_device', weight: 25, details: {} }],
  });
  await raise(5, { rule: 'failed_passwords', severity: 'medium', userId: await uuid('claire.dubois'), channel: 'mobile', location: { country: 'FR' }, score: 55, indicators: [{ signal: 'failed_passwords', weight: 30, details: { count: 6 } }] });
  const stuffing = await raise(9, { rule: 'credential_stuffing', severity: 'critical', userId: null, channel: 'web', location: { country: 'NL' }, score: null, indicators: [{ signal: 'address_failing_many_accounts', weight: 50, details: { accounts: 42 } }] });
  await s.alerts.acknowledge(stuffing, 'Address blocked at the edge; watching for more.', { uuid: await uuid('operator.njeri'), username: 'operator.njeri' }, {});
  for (const [hoursAgo, username, channel] of [[5, 'claire.dubois', 'mobile'], [9, 'amina.otieno', 'web'], [9, 'joao.silva', 'web']] as const) {
    clock.set(now - hoursAgo * HOUR + 60_000);
    await s.audit.record({ eventType: 'ACCOUNT_LOCKED', status: 'SUCCESS', userId: await uuid(username), username, channel });
    clock.set(now);
  }
  return travel;
}

/** `shot(page, name)` writes docs/console/<name>.png. */
export async function alertsScreenshots({ page, s, clock, shot }: { page: Page; s: Registry; clock: ManualClock; shot(page: Page, name: string): Promise<void> }): Promise<void> {
  await seedAlerts(s, clock);
  await page.setViewportSize({ width: 1280, height: 1100 });
  await page.getByRole('navigation').getByRole('link', { name: 'Security alerts' }).click();
  await page.getByRole('img', { name: 'Account locks and security alerts over time, by channel' }).waitFor();
  await shot(page, 'console-alerts');
  await page.getByRole('link', { name: /^Open the alert impossible_travel/ }).click();
  await page.getByRole('heading', { name: 'Alert: impossible_travel' }).waitFor();
  await shot(page, 'console-alert');
  await page.getByRole('button', { name: 'Resolve' }).click();
  await page.getByRole('dialog').getByLabel('What was found and what was done').fill('The customer confirmed the trip by phone; no action.');
  await shot(page, 'console-alert-resolve');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
  const locks = page.getByRole('img', { name: 'Account locks and security alerts over time, by channel' });
  await locks.waitFor();
  await page.getByText('The locks and alerts as a table').click();
  await locks.scrollIntoViewIfNeeded();
  await shot(page, 'console-audit-locks');
}
