/**
 * The console's MFA-reset and erasure queues in real Chromium, against a service enforcing
 * transport encryption. A customer who still has an authenticator app asks for a reset of their
 * second factors (the security questions' proof, through the SDK); an operator who asked a reset
 * of their own account is refused it (403, four eyes) in Portuguese, the language of their
 * browser; a second operator approves the customer's (their factors and backup codes are gone, and
 * they sign in with the password alone) and rejects the first operator's. A customer asks to be
 * erased; the operator places a legal hold with a reason and releases it. Recoveries waiting for a
 * branch (more than a page of them) are listed on arrival, oldest first; the operator pages through
 * them, narrows the screen to one reference and approves one from the queue. Each screen and
 * dialog: axe (no serious or critical finding) and no CSP violation.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient } from '../../packages/client/src/index.js';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { MFA_RESET_PROOF_PURPOSE } from '../../src/mfa/challenge.js';
import type { UserRow } from '../../src/users/store.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'staff' } });
  await seedUser(t.s, 'queues.desk', { roles: ['admin'] });
  await seedUser(t.s, 'queues.approver', { roles: ['admin'] });
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** An authenticator app and two backup codes, written as an enrolment leaves them. */
async function giveAuthenticator(user: UserRow): Promise<void> {
  const now = new Date(t.clock.now());
  await t.s.db.insertInto('mfa_factors').values({ user_id: user.id, method: 'totp', status: 'active', secret_enc: null, algorithm: null, last_used_step: null, created_at: now, confirmed_at: now }).execute();
  await t.s.db.insertInto('mfa_backup_codes').values([1, 2].map((i) => ({ user_id: user.id, code_hash: `hash-${user.id}-${i}`, created_at: now, used_at: null }))).execute();
}

/** The person asks for a reset from their app, with the proof the security questions hand out after the password. */
async function askReset(user: UserRow, reason: string): Promise<string> {
  const proof = (await t.s.tokens.issue('reset', { user_id: user.uuid, purpose: MFA_RESET_PROOF_PURPOSE })).token;
  const app = new StrongroomClient({ baseUrl: origin });
  return (await app.request<{ request_id: string }>('POST', '/api/v1/auth/reset/mfa', { reason, proof_token: proof })).request_id;
}

async function consoleFor(username: string, locale: string): Promise<{ page: Page; check(name: string): Promise<void> }> {
  const page = await (await browser.newContext({ locale })).newPage();
  const csp = await watchCsp(page);
  const res = await page.goto(`${origin}/console`);
  expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
  if (locale === 'pt-PT') {
    await page.getByLabel('Nome de utilizador ou email').fill(username);
    await page.getByLabel('Palavra-passe', { exact: true }).fill(STRONG_PASSWORD);
    await page.getByRole('button', { name: 'Entrar' }).click();
  } else {
    await signIn(page, username, STRONG_PASSWORD);
  }
  return { page, check: (name) => checkScreen(page, csp, name) };
}

const statusOf = async (requestId: string, status: 'pending' | 'approved' | 'rejected'): Promise<boolean> =>
  (await t.s.mfaReset.list({ status, limit: 100, offset: 0 })).requests.some((r) => r.request_id === requestId);

describe('the MFA-reset and erasure queues in the console', () => {
  it('MFA resets: an operator\'s own request is refused them (403, four eyes, in Portuguese); another approves a customer\'s and their factors are gone', async () => {
    const customer = await seedUser(t.s, 'mfa.customer', { email: 'mfa.customer@bank.example' });
    await giveAuthenticator(customer);
    const asked = await askReset(customer, 'My phone was stolen with the authenticator app on it.');
    const desk = (await t.s.users.findByLogin('queues.desk'))!;
    const own = await askReset(desk, 'I reset my work phone.');

    const a = await consoleFor('queues.desk', 'pt-PT');
    await a.page.getByRole('navigation').getByRole('link', { name: 'Reposições de 2.º fator' }).click();
    await a.page.getByRole('heading', { name: 'Reposição do segundo fator de queues.desk' }).waitFor();
    await a.page.getByText('Este pedido é seu: é outro operador que o decide.').waitFor();
    await a.check('the MFA reset queue, in Portuguese');
    await a.page.getByRole('button', { name: 'Aprovar a reposição de queues.desk' }).click();
    const refused = a.page.getByRole('dialog', { name: 'Aprovar a reposição do segundo fator de queues.desk?' });
    await refused.getByText(/Todos os segundos fatores de queues\.desk são removidos já/).waitFor();
    await a.check('approving an MFA reset, in Portuguese');
    await refused.getByRole('button', { name: 'Aprovar' }).click();
    await refused.getByText('Quatro olhos', { exact: false }).waitFor();
    await a.check('the four-eyes refusal, in Portuguese');
    expect(await statusOf(own, 'pending')).toBe(true);

    const b = await consoleFor('queues.approver', 'en-GB');
    await b.page.getByRole('navigation').getByRole('link', { name: 'MFA resets' }).click();
    const card = b.page.getByRole('region', { name: 'Second-factor reset for mfa.customer' });
    await card.getByText('Their password and their security questions').waitFor();
    await card.getByText('My phone was stolen with the authenticator app on it.').waitFor();
    await card.getByText('The person, from their app or the web (self-service)').waitFor();
    await b.check('the MFA reset queue');
    await card.getByRole('button', { name: 'Approve the reset for mfa.customer' }).click();
    const approve = b.page.getByRole('dialog', { name: 'Approve the second-factor reset for mfa.customer?' });
    await approve.getByText(/passkeys and backup codes\. All their sessions end/).waitFor();
    await approve.getByLabel('Note (optional): kept in the audit trail, and the person can read it on their Recovery page and in their data export').fill('Identity confirmed by video call.');
    await b.check('approving an MFA reset');
    await approve.getByRole('button', { name: 'Approve' }).click();
    await b.page.getByText('Approved: the second factors of mfa.customer are removed and their sessions ended; they enrol again.').waitFor();

    expect(await statusOf(asked, 'approved')).toBe(true);
    expect(await t.s.factors.active(customer.id)).toEqual([]);
    expect(await t.s.db.selectFrom('mfa_backup_codes').select('id').where('user_id', '=', customer.id).execute()).toEqual([]);
    const person = new StrongroomClient({ baseUrl: origin });
    const signedIn = await person.login({ username: 'mfa.customer', password: STRONG_PASSWORD });
    expect(signedIn.access_token).toEqual(expect.any(String)); // the password alone: no second factor is asked any more

    await b.page.getByRole('button', { name: 'Reject the reset for queues.desk' }).click();
    const reject = b.page.getByRole('dialog', { name: 'Reject the second-factor reset for queues.desk?' });
    await reject.getByLabel('Reason: kept in the audit trail, and the person can read it on their Recovery page and in their data export').fill('Not confirmed with the operator\'s manager.');
    await b.check('rejecting an MFA reset');
    await reject.getByRole('button', { name: 'Reject' }).click();
    await b.page.getByText('The reset for queues.desk is rejected.').waitFor();
    await b.page.getByText('No second-factor reset waits for a decision.').waitFor();
    expect(await statusOf(own, 'rejected')).toBe(true);
  });

  it('erasure requests: a pending erasure is held with a reason, then released', async () => {
    const customer = await seedUser(t.s, 'erasure.customer');
    const app = new StrongroomClient({ baseUrl: origin });
    await app.login({ username: 'erasure.customer', password: STRONG_PASSWORD });
    const { erasure_id: id } = await app.request<{ erasure_id: string }>('POST', '/api/v1/auth/gdpr/delete', { current_password: STRONG_PASSWORD });
    const pending = async () => (await t.s.erasure.listPending(100)).find((e) => e.id === id);

    const { page, check } = await consoleFor('queues.approver', 'en-GB');
    await page.getByRole('navigation').getByRole('link', { name: 'Erasure requests' }).click();
    await page.getByRole('heading', { name: 'Erasure requests' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'erasure.customer' }) });
    await row.getByText('Pending').waitFor();
    // A list shorter than a page says nothing of more.
    expect(await page.getByRole('button', { name: 'Show more' }).count()).toBe(0);
    await check('the erasure queue');
    await row.getByRole('button', { name: /^Place a legal hold on the erasure asked on/ }).click();
    const hold = page.getByRole('dialog', { name: 'Place a legal hold on this erasure?' });
    await hold.getByText(/The erasure job leaves this account alone until the hold is released/).waitFor();
    await hold.getByRole('link', { name: 'erasure.customer' }).waitFor();
    await hold.getByLabel('Reason for the hold').fill('Fraud investigation FR-2026-118.');
    await check('placing a legal hold');
    await hold.getByRole('button', { name: 'Hold' }).click();
    await page.getByText('The erasure is held.').waitFor();
    await row.getByText('Fraud investigation FR-2026-118.').waitFor();
    await row.getByRole('link', { name: 'queues.approver' }).waitFor();
    await check('a held erasure');
    const approver = (await t.s.users.findByLogin('queues.approver'))!;
    expect((await pending())?.hold).toMatchObject({ reason: 'Fraud investigation FR-2026-118.', by: approver.uuid });
    expect((await pending())?.user_id).toBe(customer.uuid);

    await row.getByRole('button', { name: /^Release the legal hold on the erasure asked on/ }).click();
    const release = page.getByRole('dialog', { name: 'Release the legal hold?' });
    await release.getByText(/The erasure goes ahead: the account is erased on/).waitFor();
    // The dialog names what the irreversible erasure is about: the account, the hold's reason, who placed it.
    await release.getByRole('link', { name: 'erasure.customer' }).waitFor();
    await release.getByText('Fraud investigation FR-2026-118.').waitFor();
    await release.getByText('Hold placed by').waitFor();
    await release.getByRole('link', { name: 'queues.approver' }).waitFor();
    await check('releasing a legal hold');
    await release.getByRole('button', { name: 'Release' }).click();
    await page.getByText('The hold is released: the erasure goes ahead.').waitFor();
    await row.getByText('Pending').waitFor();
    expect((await pending())?.hold).toBeNull();
  });

  it('recoveries: the queue of every recovery waiting for a branch on arrival, paged; a reference narrows it; one approved from the queue leaves it', async () => {
    // 22 waiting (a lost phone and a lost device for 11 customers), started a second apart; and a decoy, never listed.
    const references: string[] = [];
    const app = new StrongroomClient({ baseUrl: origin });
    const initiate = (identifier: string, lost: string) => app.request<{ reference: string }>('POST', '/api/v1/auth/reset/initiate', { identifier, lost });
    for (let i = 0; i < 11; i++) {
      const customer = await seedUser(t.s, `queue.recovery.${i}`, { email: `queue.recovery.${i}@bank.example` });
      for (const lost of ['mfa', 'device']) {
        references.push((await initiate(customer.username, lost)).reference);
        t.clock.advance(1000);
      }
    }
    await initiate('nobody.at.this.bank', 'mfa');
    const queued = (await t.s.recovery.approvals.queue({ limit: 100 })).recoveries.map((r) => r.reference);
    expect(queued.filter((r) => references.includes(r))).toEqual(references);

    const { page, check } = await consoleFor('queues.approver', 'en-GB');
    await page.getByRole('navigation').getByRole('link', { name: 'Recoveries' }).click();
    const first = queued[0]!;
    await page.getByRole('heading', { name: `Recovery ${first}` }).waitFor();
    expect(await page.getByRole('heading', { name: /^Recovery / }).count()).toBe(20);
    await page.getByText('Page 1').waitFor();
    await check('the recoveries queue');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2').waitFor();
    await page.getByRole('heading', { name: `Recovery ${queued[20]}` }).waitFor();
    expect(await page.getByRole('heading', { name: `Recovery ${first}` }).count()).toBe(0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByRole('heading', { name: `Recovery ${first}` }).waitFor();

    // The reference search narrows the screen to one, then back to the queue.
    await page.getByLabel('Reference').fill(queued[5]!.toLowerCase());
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Recovery ${queued[5]}` }).waitFor();
    expect(await page.getByRole('heading', { name: /^Recovery / }).count()).toBe(1);
    await check('the recoveries queue narrowed to a reference');
    await page.getByRole('button', { name: 'Show every waiting recovery' }).click();
    await page.getByRole('heading', { name: `Recovery ${first}` }).waitFor();

    // Approved from the queue: one proof recorded, and it leaves the queue.
    await page.getByRole('button', { name: `Approve the recovery ${first}` }).click();
    const dialog = page.getByRole('dialog', { name: `Approve the recovery ${first}?` });
    await dialog.getByLabel('Last four characters of its number').fill('5512');
    await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByText(/^Approved: queue\.recovery\.0 finishes the recovery from their app\.$/).waitFor();
    await page.getByRole('heading', { name: `Recovery ${first}` }).waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: `Recovery ${queued[1]}` }).waitFor();
    const wf = await t.s.db.selectFrom('recovery_workflows').select('id').where('reference', '=', first).executeTakeFirstOrThrow();
    const proof = await t.s.db.selectFrom('recovery_proofs').select('passed_at').where('workflow_id', '=', wf.id).where('proof', '=', 'branch_approval').executeTakeFirstOrThrow();
    expect(proof.passed_at).not.toBeNull();
    expect((await t.s.recovery.approvals.queue({ limit: 100 })).recoveries.map((r) => r.reference)).not.toContain(first);
  });
});
