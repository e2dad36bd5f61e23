/**
 * The account pages' own-data screens for docs/console.md: a new email waiting for its code, the
 * devices with one turned off, the consents, your data, and the page after asking for deletion.
 * Called by scripts/console-screenshots.ts with its running service and browser.
 */
import type { Browser, Page } from 'playwright-core';
import type { createStrongroom } from '../../src/app.js';
import { signIn } from '../../test/harness/console-pages.js';

type Registry = ReturnType<typeof createStrongroom>['registry'];

export async function accountScreenshots(o: { browser: Browser; s: Registry; origin: string; password: string; shot(page: Page, name: string): Promise<void> }): Promise<void> {
  const claire = (await o.s.users.findByLogin('claire.dubois'))!;
  await o.s.deviceTokens.register(claire.id, { pushToken: 'fcm:ClairePixel8Token0123456789', platform: 'mobile', deviceName: 'Pixel 8 de Claire' }, async () => {});
  await o.s.deviceTokens.register(claire.id, { pushToken: 'fcm:ClaireLaptopToken0123456789', platform: 'web', deviceName: 'Firefox, ordinateur portable' }, async () => {});
  const page = await (await o.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${o.origin}/account`);
  await signIn(page, 'claire.dubois', o.password);
  const nav = (name: string) => page.getByRole('navigation').getByRole('link', { name }).click();

  await nav('Email and phone');
  const form = page.getByRole('form', { name: 'Change your email' });
  await form.getByLabel('New email').fill('claire.d@bank.example');
  await form.getByLabel('Current password').fill(o.password);
  await form.getByRole('button', { name: 'Send a code' }).click();
  await page.getByRole('heading', { name: 'Confirm your new email' }).waitFor();
  await o.shot(page, 'account-contacts');

  await nav('Devices');
  await page.getByRole('button', { name: 'Turn off notifications to Firefox, ordinateur portable' }).click();
  await page.getByText('Notifications to Firefox, ordinateur portable are off.').waitFor();
  await o.shot(page, 'account-devices');

  await nav('Consent');
  await page.getByRole('button', { name: 'I agree: Offers and news by email' }).click();
  await page.getByText('Your consent is recorded: Offers and news by email.').waitFor();
  await page.setViewportSize({ width: 1280, height: 1500 });
  await o.shot(page, 'account-consent');

  await nav('Your data');
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.getByRole('heading', { name: 'Delete your account' }).waitFor();
  await o.shot(page, 'account-your-data');
  const deletion = page.getByRole('form', { name: 'Delete your account' });
  await deletion.getByLabel('Current password').fill(o.password);
  await deletion.getByText('I understand: my account will be deleted').click();
  await deletion.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('heading', { name: 'Your account is to be deleted' }).waitFor();
  await o.shot(page, 'account-deletion-requested');
}
