/**
 * The one-click pages of notices ("this was not me" of account recovery and of sign-in notices,
 * "keep my account" of erasure) are one component (src/platform/http/one-click-page.ts): in
 * headless Chromium, under its own Content-Security-Policy, the page reads the token from the
 * fragment, removes it from the address bar, POSTs it in the named field to its own path on a
 * click, and says what the answer means; a link without a well-formed token shows no button. The
 * service's own pages are checked in the browser too.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneClickPage, sendOneClickPage } from '../../src/platform/http/one-click-page.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { CHROMIUM_ARGS, ensureChromium } from '../harness/chromium.js';

const TOKEN = `tst_${'A'.repeat(43)}`;
const PAGE = oneClickPage({
  title: 'Test page', heading: 'Test <heading>', lead: 'Lead & text.', button: 'Do it',
  tokenPattern: '^tst_[A-Za-z0-9_-]{43}$', field: 'the_token',
  incomplete: 'INCOMPLETE', done: 'DONE', refused: 'REFUSED', byCode: { USED_ALREADY: 'USED' },
});

let bare: FastifyInstance;
let bareOrigin: string;
let answer: { status: number; body: Record<string, unknown> } = { status: 200, body: {} };
const posted: unknown[] = [];
let t: TestApp;
let appOrigin: string;
let browser: Browser;

beforeAll(async () => {
  bare = Fastify();
  bare.get('/one-click', async (_request, reply) => sendOneClickPage(reply, PAGE));
  bare.post('/one-click', async (request, reply) => {
    posted.push(request.body);
    return reply.code(answer.status).send(answer.body);
  });
  await bare.listen({ host: '127.0.0.1', port: 0 });
  bareOrigin = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}`;
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  appOrigin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await bare?.close();
  await t?.close();
});

/** A page that records CSP violations and script errors. */
async function open(url: string): Promise<{ page: Page; problems: () => Promise<string[]> }> {
  const page = await browser.newPage();
  await page.addInitScript(() => {
    (window as unknown as { violations: string[] }).violations = [];
    document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { violations: string[] }).violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const res = await page.goto(url);
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-security-policy']).toMatch(/^default-src 'none'; script-src 'sha256-/);
  return { page, problems: async () => [...errors, ...(await page.evaluate(() => (window as unknown as { violations: string[] }).violations))] };
}

describe('a one-click page in Chromium', () => {
  it('posts the fragment\'s token in the named field on a click, clears it from the address bar, and says it was done, with no CSP violation', async () => {
    answer = { status: 200, body: { cancelled: true } };
    posted.length = 0;
    const { page, problems } = await open(`${bareOrigin}/one-click#${TOKEN}`);
    expect(page.url()).toBe(`${bareOrigin}/one-click`); // the token left the address bar before anything else
    expect(await page.locator('h1').textContent()).toBe('Test <heading>'); // text, escaped, not markup
    await page.locator('#go').click();
    await page.locator('#out', { hasText: 'DONE' }).waitFor();
    expect(posted).toEqual([{ the_token: TOKEN }]);
    expect(await page.locator('#go').isHidden()).toBe(true);
    expect(await problems()).toEqual([]);
    await page.close();
  });

  it('says what a refusal means: its own words for a known error_code, the general ones otherwise', async () => {
    for (const [body, said] of [[{ error_code: 'USED_ALREADY' }, 'USED'], [{ error_code: 'SOMETHING_ELSE' }, 'REFUSED']] as const) {
      answer = { status: 409, body };
      const { page, problems } = await open(`${bareOrigin}/one-click#${TOKEN}`);
      await page.locator('#go').click();
      await page.locator('#out', { hasText: said }).waitFor();
      expect(await problems()).toEqual([]);
      await page.close();
    }
  });

  it('a link without a well-formed token shows no button and posts nothing', async () => {
    posted.length = 0;
    const { page, problems } = await open(`${bareOrigin}/one-click#tst_short`);
    expect(await page.locator('#out').textContent()).toBe('INCOMPLETE');
    expect(await page.locator('#go').isHidden()).toBe(true);
    expect(posted).toEqual([]);
    expect(await problems()).toEqual([]);
    await page.close();
  });

  it('the service\'s own pages (/recovery/cancel, /gdpr/erasure/cancel, /security/not-me) run under their CSP and post a well-formed token to their own path', async () => {
    for (const [path, token] of [['/recovery/cancel', `rcx_${'B'.repeat(43)}`], ['/gdpr/erasure/cancel', `erx_${'C'.repeat(43)}`], ['/security/not-me', `rnm_${'D'.repeat(43)}`]] as const) {
      const { page, problems } = await open(`${appOrigin}${path}#${token}`);
      const request = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === path);
      await page.locator('#go').click();
      expect(JSON.stringify((await request).postDataJSON())).toContain(token);
      await page.locator('#out').filter({ hasText: /no longer valid/ }).waitFor(); // an unknown token: refused, said plainly
      expect(await problems()).toEqual([]);
      await page.close();
    }
  });
});
