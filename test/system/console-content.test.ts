/**
 * The console's content screens in real Chromium, against a service enforcing transport
 * encryption: an operator rewords the Portuguese push template of an event, the live preview
 * shows the draft with its variables filled in (and a variable the event does not send next to
 * the field), saves it, and a notification then sent to a Portuguese-speaking customer carries it
 * (the development push outbox); a template of the bank's own gets a Portuguese version, deleted
 * again after a confirmation. Then an FAQ article is created, moved up within its category,
 * found in the search preview, deleted and restored; the FAQ is exported to JSON and imported
 * from CSV (a bad file refused whole), each effect read back through the service.
 * Each screen and dialog: axe (no serious or critical finding) and no CSP violation.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient } from '../../packages/client/src/index.js';
import { DevPushOutbox } from '../../src/notifications/dev-outbox.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen as checkPage } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
let browser: Browser;
let origin: string;
let page: Page;
let csp: Awaited<ReturnType<typeof watchCsp>>;
let operator: StrongroomClient;

async function clientOf(username: string): Promise<StrongroomClient> {
  const client = new StrongroomClient({ baseUrl: origin });
  await client.login({ username, password: STRONG_PASSWORD });
  return client;
}

beforeAll(async () => {
  t = await createTestApp({ database: await openTestDatabase(), clock: new ManualClock(Date.now()), secrets: testSecrets(), env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', PUSH_DEV_OUTBOX: '1' } });
  await seedUser(t.s, 'content.operator', { roles: ['admin'] });
  ({ origin, browser } = await serveToChromium(t.app));
  operator = await clientOf('content.operator');
  page = await (await browser.newContext()).newPage();
  csp = await watchCsp(page);
  await page.goto(`${origin}/console`);
  await signIn(page, 'content.operator', STRONG_PASSWORD);
  await page.getByRole('heading', { name: 'Users' }).waitFor();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const checkScreen = (name: string): Promise<void> => checkPage(page, csp, name);
const PT_DEPOSIT = 'Recebeu {amount} {currency} na conta {account}. Ref. {transaction_reference_id}.';

describe('templates and FAQ in the console', () => {
  it('the pt template of an event, reworded with a live preview, is what a Portuguese-speaking customer\'s next notification says', async () => {
    const { uuid } = await seedUser(t.s, 'content.customer', { roles: ['customer'] });
    const customer = await clientOf('content.customer');
    await customer.request('POST', '/api/v1/notifications/devices/register', { push_token: `content1:APA91bH2x7k3Lq9Zr0Xc3A_${'c'.repeat(90)}`, platform: 'mobile' });
    await customer.request('PUT', '/api/v1/notifications/preferences', { language: 'pt' });

    await page.getByRole('navigation').getByRole('link', { name: 'Notification templates' }).click();
    await page.getByRole('heading', { name: 'Notification templates' }).waitFor();
    await page.getByRole('rowheader', { name: 'DEPOSIT', exact: true }).waitFor();
    await checkScreen('templates');
    await page.getByRole('link', { name: 'DEPOSIT', exact: true }).click();
    await page.getByRole('heading', { name: 'DEPOSIT', exact: true }).waitFor();
    await page.getByRole('tab', { name: 'Portuguese' }).click();
    const form = page.getByRole('form', { name: 'DEPOSIT in Portuguese' });
    await expect.poll(() => form.getByLabel('Title').inputValue()).toBe('Depósito recebido');
    const preview = page.getByRole('tabpanel', { name: 'Portuguese' }).getByRole('region', { name: 'Preview' });

    await form.getByLabel('Body').fill('Recebeu {amount} de {sender}.');
    await form.getByText(/uses \{sender\}, which the callers of DEPOSIT do not send/).waitFor();
    await form.getByLabel('Body').fill(PT_DEPOSIT);
    await preview.getByText('Recebeu 1,500.00 KES na conta ****4471. Ref. TRX-20261126-0042.').waitFor();
    await page.getByLabel('Sample of {amount}').fill('250.00');
    await preview.getByText('Recebeu 250.00 KES na conta ****4471. Ref. TRX-20261126-0042.').waitFor();
    await checkScreen('a template with its live preview');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved: the next notification in Portuguese uses it.').waitFor();
    expect((await t.s.templates.store.list({ name: 'DEPOSIT', language: 'pt' }))[0]).toMatchObject({ subject: 'Depósito recebido', message: PT_DEPOSIT });

    await operator.request('POST', '/api/v1/notifications/send', { user_id: uuid, template: 'DEPOSIT', values: { amount: '75.00', currency: 'MZN', account: '****0042', transaction_reference_id: 'TRX-CONTENT-1' } });
    await t.scheduler.runNow('push delivery');
    const outbox = t.s.push as DevPushOutbox;
    expect(outbox).toBeInstanceOf(DevPushOutbox);
    expect(outbox.messages.at(-1)).toMatchObject({ title: 'Depósito recebido', body: 'Recebeu 75.00 MZN na conta ****0042. Ref. TRX-CONTENT-1.' });
  });

  it('a template of the bank\'s own: added in English, given a Portuguese version, which is deleted after a confirmation', async () => {
    await page.getByRole('link', { name: 'All templates' }).click();
    const add = page.getByRole('form', { name: 'New template' });
    await add.getByLabel('Template').fill('LOAN_DUE');
    await add.getByLabel('Title').fill('Loan payment due');
    await add.getByLabel('Body').fill('{amount} {currency} is due on {due_date}.');
    await add.getByRole('button', { name: 'Add the template' }).click();
    await page.getByRole('heading', { name: 'LOAN_DUE' }).waitFor();
    await page.getByRole('tab', { name: 'Portuguese (missing)' }).click();
    const create = page.getByRole('form', { name: 'Create the Portuguese version' });
    await create.getByText(/This template has no Portuguese version/).waitFor();
    await checkScreen('a missing language');
    await create.getByLabel('Title').fill('Prestação a pagar');
    await create.getByLabel('Body').fill('{amount} {currency} a pagar até {due_date}.');
    await create.getByRole('button', { name: 'Create the Portuguese version' }).click();
    const form = page.getByRole('form', { name: 'LOAN_DUE in Portuguese' });
    await page.getByRole('tabpanel', { name: 'Portuguese' }).getByRole('region', { name: 'Preview' }).getByText('1,500.00 KES a pagar até due_date.').waitFor();
    expect((await t.s.templates.store.list({ name: 'LOAN_DUE' })).map((r) => r.language)).toEqual(['en', 'pt']);

    await form.getByRole('button', { name: 'Delete the Portuguese version' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete LOAN_DUE in Portuguese?' });
    await dialog.getByText(/get the English version of this template instead/).waitFor();
    await checkScreen('delete a template language');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('tab', { name: 'Portuguese (missing)' }).waitFor();
    expect((await t.s.templates.store.list({ name: 'LOAN_DUE' })).map((r) => r.language)).toEqual(['en']);
  });

  it('an FAQ article: created, moved up in its category, found by the search preview, deleted and restored', async () => {
    const question = 'How do I dispute a card payment made abroad?';
    const first = await operator.request<{ id: string }>('POST', '/api/v1/admin/faqs', { question: 'Who decides a dispute, and how long does it take?', answer: 'The bank decides within ten working days.', category: 'disputes' });
    const search = async () => (await operator.request<{ results: { id: string; question: string }[] }>('GET', `/api/v1/faq/search?${new URLSearchParams({ q: 'chargeback abroad' })}`)).results.map((r) => r.question);

    await page.getByRole('navigation').getByRole('link', { name: 'FAQ' }).click();
    await page.getByRole('heading', { name: 'FAQ', exact: true }).waitFor();
    await checkScreen('FAQ');
    await page.getByRole('link', { name: 'New article' }).click();
    const form = page.getByRole('form', { name: 'New article' });
    await form.getByLabel('Question').fill(question);
    await form.getByLabel('Answer').fill('Open the payment in the app and choose Dispute. A chargeback abroad takes up to 45 days.');
    await form.getByLabel('Category').click();
    await page.getByRole('option', { name: 'Disputes' }).click();
    await form.getByLabel('Search keywords').fill('chargeback, foreign payment');
    await checkScreen('a new FAQ article');
    await form.getByRole('button', { name: 'Create the article' }).click();

    await page.getByRole('heading', { name: 'FAQ', exact: true }).waitFor();
    await page.getByRole('search', { name: 'Articles shown' }).getByLabel('Category').click();
    await page.getByRole('option', { name: 'Disputes' }).click();
    const articles = page.getByRole('grid', { name: 'Articles of Disputes, in display order' });
    await articles.getByRole('rowheader', { name: question }).waitFor();
    const created = (await operator.request<{ faqs: { id: string; question: string }[] }>('GET', '/api/v1/admin/faqs?category=disputes')).faqs;
    expect(created.map((f) => f.question)).toEqual(['Who decides a dispute, and how long does it take?', question]);
    await page.getByRole('button', { name: `Move up: ${question}` }).click();
    await page.getByText(`Moved: ${question}`).waitFor();
    expect((await operator.request<{ faqs: { id: string; question: string }[] }>('GET', '/api/v1/admin/faqs?category=disputes')).faqs.map((f) => f.id)).toEqual([created[1]!.id, first.id]);

    const preview = page.getByRole('search', { name: 'Search preview' });
    await preview.getByLabel('Customer\'s query').fill('chargeback abroad');
    await preview.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('list', { name: 'Search results, best first' });
    await results.getByText(question).waitFor();
    await results.locator('mark', { hasText: 'chargeback' }).first().waitFor();
    await checkScreen('the search preview');
    expect(await search()).toContain(question);

    await page.getByRole('button', { name: `Delete: ${question}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this article?' });
    await checkScreen('delete an FAQ article');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText(`Deleted: ${question}`).waitFor();
    await page.getByRole('button', { name: `Restore: ${question}` }).waitFor();
    expect(await search()).not.toContain(question);
    await page.getByRole('button', { name: `Restore: ${question}` }).click();
    await page.getByText(`Restored: ${question}`).waitFor();
    await page.getByRole('button', { name: `Delete: ${question}` }).waitFor();
    expect(await search()).toContain(question);
    const audit = await t.s.db.selectFrom('audit_log').select('event_type').where('event_type', 'in', ['FAQ_CREATED', 'FAQ_REORDERED', 'FAQ_DELETED', 'FAQ_RESTORED']).where('username', '=', 'content.operator').execute();
    expect(audit.map((a) => a.event_type).sort()).toEqual(['FAQ_CREATED', 'FAQ_CREATED', 'FAQ_DELETED', 'FAQ_REORDERED', 'FAQ_RESTORED']);
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|^pageerror/i.test(e))).toEqual([]);
  });

  it('the FAQ exported to a JSON file and imported from a CSV; a file with a bad row is refused whole, its rows and fields listed', async () => {
    const files = page.getByRole('region', { name: 'Import and export' });
    const downloaded = page.waitForEvent('download');
    await files.getByRole('button', { name: 'Export (JSON)' }).click();
    const file = await downloaded;
    expect(file.suggestedFilename()).toBe('faqs.json');
    const exported = JSON.parse(await readFile((await file.path())!, 'utf8')) as { faqs: { question: string }[] };
    expect(exported.faqs.map((f) => f.question)).toContain('How do I dispute a card payment made abroad?');
    await files.getByText(`${exported.faqs.length} articles exported.`).waitFor();

    const picking = async (name: string, csv: string) => {
      const chooser = page.waitForEvent('filechooser');
      await files.getByRole('button', { name: 'Import a file…' }).click();
      await (await chooser).setFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(csv) });
      return page.getByRole('dialog', { name: `Import ${name}?` });
    };
    // Picking a file sends nothing: a dialog names it, counts its articles and says what the import does.
    const importing = async (name: string, csv: string, articles: number) => {
      const confirm = await picking(name, csv);
      await confirm.getByText(`Articles in the file: ${articles}.`).waitFor();
      await confirm.getByText(/creates an article for each row without an id, and overwrites the article of each id given/).waitFor();
      await confirm.getByRole('button', { name: 'Import' }).click();
    };
    const cancelled = await picking('cancelled.csv', 'question,answer,category\r\nIs this imported?,"No, it is cancelled.",general\r\n');
    await cancelled.getByText('Articles in the file: 1.').waitFor();
    await checkScreen('an import to confirm');
    await cancelled.getByRole('button', { name: 'Cancel' }).click();
    await cancelled.waitFor({ state: 'detached' });
    expect((await operator.request<{ faqs: { question: string }[] }>('GET', '/api/v1/admin/faqs?category=general')).faqs.map((f) => f.question)).not.toContain('Is this imported?');
    await importing('bad.csv', 'question,answer,category\r\nWhat are the branch opening hours?,"Weekdays, 8:30 to 16:00.",general\r\nToo short?,Yes.,nowhere\r\n', 2);
    await files.getByRole('list', { name: 'What the import refused' }).getByText(/^Row 2, category:/).waitFor();
    await checkScreen('an import refused');
    const general = async () => (await operator.request<{ faqs: { question: string }[] }>('GET', '/api/v1/admin/faqs?category=general')).faqs.map((f) => f.question);
    expect(await general()).not.toContain('What are the branch opening hours?');
    await importing('faqs.csv', 'question,answer,category,keywords\r\nWhat are the branch opening hours?,"Weekdays, 8:30 to 16:00.",general,"hours, opening"\r\n', 1);
    await files.getByText('Imported: 1 created, 0 updated.').waitFor();
    await page.getByRole('search', { name: 'Articles shown' }).getByLabel('Category').click();
    await page.getByRole('option', { name: 'General' }).click();
    await page.getByRole('grid', { name: 'Articles of General, in display order' }).getByRole('rowheader', { name: 'What are the branch opening hours?' }).waitFor();
    expect(await general()).toContain('What are the branch opening hours?');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|^pageerror/i.test(e))).toEqual([]);
  });
});
