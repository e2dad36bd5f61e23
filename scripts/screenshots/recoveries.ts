/**
 * The recoveries queue and the account's own recoveries for docs/console.md: recoveries waiting for
 * a branch (the operator's queue on arrival), then joao.silva's Recovery page with one someone
 * started, and the dialog that stops it. Called by scripts/console-screenshots.ts with the
 * operator's page signed in and its running service and browser.
 */
import type { Browser, Page } from 'playwright-core';
import { StrongroomClient } from '../../packages/client/src/index.js';
import type { createStrongroom } from '../../src/app.js';
import { signIn } from '../../test/harness/console-pages.js';

export async function recoveriesScreenshots(o: { page: Page; browser: Browser; s: ReturnType<typeof createStrongroom>['registry']; origin: string; password: string; shot(page: Page, name: string): Promise<void> }): Promise<void> {
  const app = new StrongroomClient({ baseUrl: o.origin });
  const started = [['amina.otieno', 'mfa'], ['joao.silva', 'device'], ['wanjiru.mwangi', 'mfa']] as const;
  const references: string[] = [];
  for (const [identifier, lost] of started) references.push((await app.request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier, lost })).reference);

  await o.page.setViewportSize({ width: 1280, height: 1500 });
  await o.page.getByRole('navigation').getByRole('link', { name: 'Recoveries' }).click();
  await o.page.getByRole('heading', { name: `Recovery ${references[1]}` }).waitFor();
  await o.shot(o.page, 'console-recoveries-queue');

  const person = await (await o.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await person.goto(`${o.origin}/account`);
  await signIn(person, 'joao.silva', o.password);
  await person.getByRole('navigation').getByRole('link', { name: 'Recovery' }).click();
  await person.getByRole('rowheader', { name: references[1] }).waitFor();
  await o.shot(person, 'account-recoveries');
  await person.getByRole('button', { name: `Stop the recovery ${references[1]}` }).click();
  const dialog = person.getByRole('dialog');
  await dialog.getByText(/^I did not start it/).click();
  await o.shot(person, 'account-recovery-stop');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
}
