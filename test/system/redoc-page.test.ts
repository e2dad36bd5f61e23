/**
 * /api/redoc is ReDoc (npm package `redoc`, served by the service itself) rendering
 * /api/openapi.json under the service's own Content-Security-Policy: in headless Chromium the
 * page shows the operations with their error codes, and the browser reports no CSP violation
 * (no eval, no script or style from elsewhere) but the vendor's logo from its CDN, kept out.
 */
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { CHROMIUM_ARGS, ensureChromium } from '../harness/chromium.js';

let t: TestApp;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the ReDoc page', () => {
  it('redoc under the CSP: /api/redoc renders the operations and their error codes from the served bundle, with no CSP violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript(() => {
      (window as unknown as { violations: string[] }).violations = [];
      document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { violations: string[] }).violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto(`${origin}/api/redoc`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    await page.locator('h2', { hasText: 'Sign in with username or email and password' }).first().waitFor({ timeout: 20_000 });
    expect(await page.content()).toContain('INVALID_CREDENTIALS');
    // The one thing kept out: the vendor's logo from its CDN (the page loads nothing from another origin).
    const violations = await page.evaluate(() => (window as unknown as { violations: string[] }).violations);
    expect(violations.filter((v) => !v.startsWith('img-src https://cdn.redoc.ly/'))).toEqual([]);
    expect(errors).toEqual([]);
    const script = await page.request.get(`${origin}/api/redoc/redoc.standalone.js`);
    expect(script.headers()['content-type']).toMatch(/^application\/javascript/);
    await page.close();
  });
});
