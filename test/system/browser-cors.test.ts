/**
 * CORS in a real browser: a page served from one origin calls a Strongroom on another (another
 * port of 127.0.0.1) in Debian's headless Chromium, with the client SDK bundled for the browser
 * and transport encryption enforced. The page on the allowed origin (CORS_ORIGINS) reads the
 * public key, signs in encrypted (its preflight allows the encryption and fingerprint headers,
 * and the answer's `X-Encrypted` and `X-Request-ID` are readable), and its repeated preflight is
 * served from the browser's cache. The same page on an origin not in the list is blocked by the
 * browser before it can read anything.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { CHROMIUM_ARGS, browserSdkBundle, ensureChromium } from '../harness/chromium.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';


const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A bank's web app on another origin</title></head>
<body><p id="status">loading</p>
<script type="module">
import { StrongroomClient, StrongroomError } from '/sdk.js';
const outcome = (p) => p.then((v) => ({ ok: true, value: v }), (e) => ({ ok: false, error: e instanceof StrongroomError ? e.errorCode : String(e) }));

window.runScenario = async ({ api, username, password }) => {
  const out = {};
  const plain = await outcome(fetch(api + '/api/v1/auth/public_key').then(async (r) => ({ status: r.status, requestId: r.headers.get('x-request-id'), body: await r.json() })));
  out.publicKey = plain.ok ? { status: plain.value.status, hasRequestId: !!plain.value.requestId, algorithm: plain.value.body.algorithm } : { error: plain.error };
  const client = new StrongroomClient({ baseUrl: api, deviceFingerprint: 'web-app-browser-1' });
  const signIn = await outcome(client.login({ username, password }));
  out.signIn = signIn.ok ? { username: signIn.value.user_profile.username } : { error: signIn.error };
  if (signIn.ok) {
    // Two identical cross-origin calls with custom headers: the second preflight comes from the cache.
    out.validate1 = await outcome(client.validate()).then((r) => (r.ok ? r.value.valid : r.error));
    out.validate2 = await outcome(client.validate()).then((r) => (r.ok ? r.value.valid : r.error));
    const refused = await fetch(api + '/api/v1/auth/validate', { method: 'POST', headers: { 'content-type': 'application/json', 'x-device-fingerprint': 'web-app-browser-1' }, body: '{}' });
    out.errorReadable = { status: refused.status, body: await refused.json() };
  }
  document.getElementById('status').textContent = 'done';
  return out;
};
window.ready = true;
document.getElementById('status').textContent = 'ready';
</script></body></html>`;

interface Result {
  publicKey: { status?: number; hasRequestId?: boolean; algorithm?: string; error?: string };
  signIn: { username?: string; error?: string };
  validate1?: unknown;
  validate2?: unknown;
  errorReadable?: { status: number; body: { error_code: string } };
}

let t: TestApp;
let allowedSite: http.Server;
let otherSite: http.Server;
let browser: Browser;
let bundle: string;
let api: string;
const preflights: string[] = [];

function site(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else if (req.url === '/sdk.js') res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const originOf = (s: http.Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

async function run(from: http.Server): Promise<Result> {
  const page = await browser.newPage();
  try {
    await page.goto(`${originOf(from)}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    return await page.evaluate((args) => (window as unknown as { runScenario: (a: unknown) => Promise<Result> }).runScenario(args), { api, username: 'cors.customer', password: STRONG_PASSWORD });
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  bundle = await browserSdkBundle();
  allowedSite = await site();
  otherSite = await site();
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', CORS_ORIGINS: originOf(allowedSite), CORS_MAX_AGE_SECONDS: '600' } });
  await seedUser(t.s, 'cors.customer');
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  api = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  t.app.server.on('request', (req: http.IncomingMessage) => {
    if (req.method === 'OPTIONS') preflights.push(`${req.headers.origin} ${req.url}`);
  });
  browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  for (const s of [allowedSite, otherSite]) {
    if (!s) continue;
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  await t?.close();
});

describe('CORS from a page on another origin, in headless Chromium', () => {
  it('the allowed origin reads the public key, signs in encrypted, reads the headers it needs; its preflight is cached', async () => {
    preflights.length = 0;
    const r = await run(allowedSite);
    expect(r.publicKey).toEqual({ status: 200, hasRequestId: true, algorithm: 'RSA-2048' });
    expect(r.signIn).toEqual({ username: 'cors.customer' });
    expect(r.validate1).toBe(true);
    expect(r.validate2).toBe(true);
    // An error's body is readable across origins (the page can show what to change): here a plaintext write refused.
    expect(r.errorReadable).toMatchObject({ status: 422, body: { error_code: 'ENCRYPTION_REQUIRED' } });
    const validatePreflights = preflights.filter((p) => p.endsWith('/api/v1/auth/validate'));
    // One preflight per path: the second validate and the plain fetch are served from the preflight cache.
    expect(preflights.every((p) => p.startsWith(originOf(allowedSite)))).toBe(true);
    expect(validatePreflights).toHaveLength(1);
    expect(preflights.filter((p) => p.endsWith('/api/v1/auth/login'))).toHaveLength(1);
  }, 120_000);

  it('another origin is blocked by the browser: nothing readable, no sign-in', async () => {
    const r = await run(otherSite);
    expect(r.publicKey.error).toMatch(/TypeError: Failed to fetch/);
    expect(r.signIn.error).toBe('NETWORK_ERROR');
    const sessions = await t.s.database.db.selectFrom('sessions').select('session_id').execute();
    expect(sessions).toHaveLength(1); // the allowed origin's only
  }, 120_000);
});
