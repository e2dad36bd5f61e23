/**
 * The templates and FAQ screens for docs/console.md, called by scripts/console-screenshots.ts with
 * its signed-in operator's page: the templates, the Portuguese version of one being reworded with
 * its live preview, and the FAQ's security articles (the starter set) with a search preview.
 */
import type { Page } from 'playwright-core';
import type { createStrongroom } from '../../src/app.js';
import { starterArticles } from '../../src/faq/starter.js';

type Registry = ReturnType<typeof createStrongroom>['registry'];

export async function contentScreenshots(page: Page, s: Registry, shot: (page: Page, name: string) => Promise<void>): Promise<void> {
  await s.faqAdmin.seed({ actor: { uuid: null, username: 'screenshots' }, context: {} }, starterArticles());
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('navigation').getByRole('link', { name: 'Notification templates' }).click();
  await page.getByRole('rowheader', { name: 'INTERNAL_TRANSFER' }).waitFor();
  await shot(page, 'console-templates');
  await page.getByRole('link', { name: 'DEPOSIT', exact: true }).click();
  await page.getByRole('tab', { name: 'Portuguese' }).click();
  const form = page.getByRole('form', { name: 'DEPOSIT in Portuguese' });
  await form.getByLabel('Body').fill('Recebeu {amount} {currency} na conta {account}. Referência {transaction_reference_id}.');
  const preview = page.getByRole('tabpanel', { name: 'Portuguese' }).getByRole('region', { name: 'Preview' });
  await preview.getByText('Recebeu 1,500.00 KES na conta ****4471. Referência TRX-20261126-0042.').waitFor();
  await page.setViewportSize({ width: 1280, height: 1000 });
  await shot(page, 'console-template-preview');
  await form.getByLabel('Body').fill('Recebeu {amount} {currency} de {sender}.');
  await form.getByText(/uses \{sender\}/).waitFor();
  await shot(page, 'console-template-unknown-variable');

  await page.getByRole('navigation').getByRole('link', { name: 'FAQ' }).click();
  await page.getByRole('search', { name: 'Articles shown' }).getByLabel('Category').click();
  await page.getByRole('option', { name: 'Security' }).click();
  await page.getByRole('grid', { name: 'Articles of Security, in display order' }).getByRole('rowheader').first().waitFor();
  const search = page.getByRole('search', { name: 'Search preview' });
  await search.getByLabel('Customer\'s query').fill('lost my card');
  await search.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('list', { name: 'Search results, best first' }).getByRole('listitem').first().waitFor();
  await page.setViewportSize({ width: 1280, height: 1960 });
  await page.getByRole('heading', { name: 'FAQ', exact: true }).scrollIntoViewIfNeeded();
  await shot(page, 'console-faq');
}
