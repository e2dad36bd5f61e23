/**
 * The screenshots of users, roles and branches (docs/console.md, "Users, roles and entities"):
 * called by scripts/console-screenshots.ts with the operator's signed-in console page.
 */
import type { Page } from 'playwright-core';
import type { createStrongroom } from '../../src/app.js';

type Registry = ReturnType<typeof createStrongroom>['registry'];

export async function usersScreenshots(page: Page, s: Registry, shot: (page: Page, name: string) => Promise<void>): Promise<void> {
  const who = { actor: { uuid: null, username: 'screenshots' }, context: {} };
  for (const [code, name] of [['NBO-001', 'Nairobi, Kenyatta Avenue'], ['MSA-002', 'Mombasa, Moi Avenue'], ['KSM-003', 'Kisumu, Oginga Odinga Street']] as const) await s.entities.create(s.db, code, name);
  await s.roleAdmin.create({ name: 'teller.supervisor', description: 'Branch teller supervisor: reads users and unlocks accounts', permissions: ['audit.read', 'users.read', 'users.update'] }, who);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('navigation').getByRole('link', { name: 'Roles' }).click();
  await page.getByRole('rowheader', { name: 'teller.supervisor' }).waitFor();
  await shot(page, 'console-roles');
  await page.getByRole('button', { name: 'New role' }).click();
  const form = page.getByRole('form', { name: 'New role' });
  await form.getByRole('textbox', { name: 'Name', exact: true }).fill('branch.helpdesk');
  await form.getByRole('textbox', { name: 'Description', exact: true }).fill('Branch help desk: reads users and the audit trail');
  await form.getByText('users.read', { exact: true }).click();
  await form.getByText('audit.read', { exact: true }).click();
  await page.setViewportSize({ width: 1280, height: 1500 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'console-role-new');
  await form.getByRole('button', { name: 'Cancel' }).click();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('rowheader', { name: 'teller.supervisor' }).click();
  await page.getByText('List and read users').waitFor();
  await shot(page, 'console-role');
  await page.getByRole('navigation').getByRole('link', { name: 'Branches' }).click();
  await page.getByRole('rowheader', { name: 'KSM-003' }).waitFor();
  await shot(page, 'console-entities');
  await page.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
  await page.getByRole('rowheader', { name: 'amina.otieno' }).click();
  await page.getByRole('button', { name: 'Change', exact: true }).click();
  await page.getByRole('form', { name: 'Change the user' }).getByText('NBO-001', { exact: true }).click();
  await page.setViewportSize({ width: 1280, height: 1300 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'console-user-edit');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Reset the password' }).click();
  await page.getByRole('dialog').waitFor();
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, 'console-user-reset-password');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
}
