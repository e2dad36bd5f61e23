/**
 * The MFA-reset and erasure queues for docs/console.md: a customer's reset waiting (and the
 * approval's dialog), a pending erasure (and the legal hold's dialog, then the hold placed).
 * Called by scripts/console-screenshots.ts with the operator's page already signed in.
 */
import type { Page } from 'playwright-core';
import { StrongroomClient } from '../../packages/client/src/index.js';
import type { createStrongroom } from '../../src/app.js';
import { MFA_RESET_PROOF_PURPOSE } from '../../src/mfa/challenge.js';

export interface QueueShots {
  page: Page;
  s: ReturnType<typeof createStrongroom>['registry'];
  origin: string;
  password: string;
  shot(page: Page, name: string): Promise<void>;
}

export async function queueScreenshots({ page, s, origin, password, shot }: QueueShots): Promise<void> {
  const joao = (await s.users.findByLogin('joao.silva'))!;
  const proof = (await s.tokens.issue('reset', { user_id: joao.uuid, purpose: MFA_RESET_PROOF_PURPOSE })).token;
  await new StrongroomClient({ baseUrl: origin }).request('POST', '/api/v1/auth/reset/mfa', { reason: 'I changed phones and the authenticator app did not come with me.', proof_token: proof });
  // Someone of their own asks for erasure (claire.dubois stays signed-in-able for the account pages' pictures).
  await s.consoleAdmin.createUser({ username: 'rui.costa', email: 'rui.costa@bank.example', phone: null, roles: ['customer'], password, fullName: 'Rui Costa' }, { uuid: null, username: 'screenshots' });
  const rui = new StrongroomClient({ baseUrl: origin });
  await rui.login({ username: 'rui.costa', password });
  await rui.request('POST', '/api/v1/auth/gdpr/delete', { current_password: password });

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('navigation').getByRole('link', { name: 'MFA resets' }).click();
  await page.getByRole('heading', { name: 'Second-factor reset for joao.silva' }).waitFor();
  await shot(page, 'console-mfa-resets');
  await page.getByRole('button', { name: 'Approve the reset for joao.silva' }).click();
  await page.getByRole('dialog').waitFor();
  await shot(page, 'console-mfa-reset-approve');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('navigation').getByRole('link', { name: 'Erasure requests' }).click();
  await page.getByRole('link', { name: 'rui.costa' }).waitFor();
  await shot(page, 'console-erasures');
  await page.getByRole('button', { name: /^Place a legal hold/ }).click();
  const hold = page.getByRole('dialog');
  await hold.getByLabel('Reason for the hold').fill('Chargeback claim CB-2026-0412: records kept until it is settled.');
  await shot(page, 'console-erasure-hold');
  await hold.getByRole('button', { name: 'Hold' }).click();
  await page.getByText('The erasure is held.').waitFor();
  await shot(page, 'console-erasure-held');
}
