/**
 * The access policies' pictures for docs/console.md: the list by channel and role, the editor
 * (address lists with a bad entry, hours in Nairobi, a circle and a polygon on the canvas) and
 * the tester refusing a sign-in from outside the branch network. Called by
 * scripts/console-screenshots.ts with the signed-in operator's page.
 */
import type { Page } from 'playwright-core';
import type { createStrongroom } from '../../src/app.js';

type Registry = ReturnType<typeof createStrongroom>['registry'];

export async function policyScreenshots(page: Page, s: Registry, shot: (page: Page, name: string) => Promise<void>): Promise<void> {
  const who = { uuid: null, username: 'screenshots' };
  await s.accessAdmin.create({
    name: 'Agents: branch network, hours, area', channel: 'agent', role: 'agent', enabled: true,
    rules: {
      ip: { allow: ['10.20.0.0/16', '2001:db8:40::/48'], deny: ['10.20.99.0/24'] },
      schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '20:00' }],
      geofences: [
        { type: 'circle', lat: -1.2864, lon: 36.8172, radius_m: 400 },
        { type: 'polygon', points: [[-1.2790, 36.8100], [-1.2795, 36.8230], [-1.2850, 36.8260], [-1.2830, 36.8120]] },
      ],
    },
  }, who, {});
  await s.accessAdmin.create({ name: 'Web: not from the guest network', channel: 'web', role: null, enabled: true, rules: { ip: { deny: ['198.51.100.0/24'] } } }, who, {});
  await page.getByRole('navigation').getByRole('link', { name: 'Access policies' }).click();
  await page.getByRole('link', { name: 'Agents: branch network, hours, area' }).waitFor();
  await shot(page, 'console-policies');

  await page.getByRole('link', { name: 'Agents: branch network, hours, area' }).click();
  await page.getByLabel('Allowed addresses').fill('10.20.0.0/16\n2001:db8:40::/48\n10.20.0.0/33');
  await page.getByText('10.20.0.0/33: the prefix length').waitFor();
  await page.setViewportSize({ width: 1280, height: 2300 });
  await shot(page, 'console-policy-editor');

  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.getByRole('navigation').getByRole('link', { name: 'Sign-in tester' }).click();
  await page.getByRole('button', { name: /Channel/ }).click();
  await page.getByRole('option', { name: 'agent', exact: true }).click();
  await page.getByLabel('Or roles').fill('agent');
  await page.getByLabel('IP address').fill('192.0.2.44');
  await page.getByLabel('Latitude').fill('-1.2864');
  await page.getByLabel('Longitude').fill('36.8172');
  await page.getByRole('button', { name: 'Would it be allowed?' }).click();
  await page.getByText('Refused by the address lists.').waitFor();
  await shot(page, 'console-policy-tester');
}
