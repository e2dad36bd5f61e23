/**
 * The client SDK in a real browser: packages/client bundled for the browser with esbuild, served
 * with a small page by a same-origin reverse proxy in front of a real Strongroom (transport
 * encryption enforced), and driven in Debian's headless Chromium with playwright-core. The page
 * signs in encrypted, calls authenticated routes, refreshes and logs out; the test reads what
 * the page saw and what went over the wire.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { CHROMIUM_ARGS, browserSdkBundle, ensureChromium } from '../harness/chromium.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

const FINGERPRINT = 'browser-device-41c2';

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Strongroom SDK in the browser</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem}pre{background:#f4f4f4;padding:1rem}</style></head>
<body>
<h1>Strongroom SDK</h1>
<p id="status">loading</p>
<pre id="log"></pre>
<script type="module">
import { StrongroomClient, StrongroomError } from '/sdk.js';

const log = (line) => { document.getElementById('log').textContent += line + '\\n'; };
const outcome = (p) => p.then(() => 'accepted', (e) => (e instanceof StrongroomError ? e.status + ' ' + e.errorCode : 'other: ' + e));
const options = { baseUrl: location.origin, deviceFingerprint: '${FINGERPRINT}' };

window.runScenario = async ({ username, password }) => {
  const out = { secureContext: window.isSecureContext };
  const client = new StrongroomClient(options);

  const key = await client.publicKey();
  out.publicKey = { algorithm: key.algorithm, keyId: key.key_id };
  log('public key ' + key.key_id);

  const signIn = await client.login({ username, password });
  out.login = { tokenType: signIn.token_type, username: signIn.user_profile.username, sessionId: signIn.session_id };
  const first = client.getSession();
  log('signed in as ' + signIn.user_profile.username + ', session ' + signIn.session_id);

  out.validate = await client.validate();
  const users = await client.request('GET', '/api/v1/admin/users?search=browser');
  out.adminUsers = users.users.map((u) => u.username);
  log('validate: ' + out.validate.valid + '; admin users: ' + out.adminUsers.join(', '));

  const refreshed = await client.refresh();
  const second = client.getSession();
  out.refresh = {
    sameSession: refreshed.session_id === signIn.session_id,
    newAccessToken: second.accessToken !== first.accessToken,
    newSessionKey: second.sessionKey !== first.sessionKey,
  };
  out.sessionKeys = [first.sessionKey, second.sessionKey];
  out.validateAfterRefresh = (await client.validate()).valid;
  out.adminTotalAfterRefresh = (await client.request('GET', '/api/v1/admin/users?search=browser')).users.length;
  log('refreshed: new session key ' + out.refresh.newSessionKey);

  const stale = new StrongroomClient({ ...options, session: { ...second, sessionKey: first.sessionKey } });
  out.oldSessionKey = await outcome(stale.logout());
  out.wrongPassword = await outcome(new StrongroomClient(options).login({ username, password: password + 'x' }));

  out.logout = await client.logout();
  out.signedInAfterLogout = client.signedIn;
  out.afterLogout = await outcome(new StrongroomClient({ ...options, session: second }).validate());
  log('logged out: ' + JSON.stringify(out.logout) + '; token afterwards: ' + out.afterLogout);

  document.getElementById('status').textContent = 'done';
  return out;
};
window.sdkReady = true;
document.getElementById('status').textContent = 'ready';
</script>
</body>
</html>`;

interface ScenarioResult {
  secureContext: boolean;
  publicKey: { algorithm: string; keyId: string };
  login: { tokenType: string; username: string; sessionId: string };
  validate: { valid: boolean; session_id: string; roles: string[] };
  adminUsers: string[];
  refresh: { sameSession: boolean; newAccessToken: boolean; newSessionKey: boolean };
  sessionKeys: [string, string];
  validateAfterRefresh: boolean;
  adminTotalAfterRefresh: number;
  oldSessionKey: string;
  wrongPassword: string;
  logout: { status: string; sessions_ended: number };
  signedInAfterLogout: boolean;
  afterLogout: string;
}

interface Seen {
  method: string;
  path: string;
  requestHeaders: Record<string, string>;
  postData: string | null;
  status?: number;
  responseHeaders?: Record<string, string>;
}

let t: TestApp;
let proxy: http.Server;
let browser: Browser;
let page: Page;
let bundle: string;
const seen: Seen[] = [];
const pageErrors: string[] = [];

/** Serves the page and the bundle, and forwards /api/* to Strongroom: one origin, no CORS. */
function startProxy(apiPort: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (req.method === 'GET' && url === '/sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    } else if (url.startsWith('/api/')) {
      const upstream = http.request({ host: '127.0.0.1', port: apiPort, method: req.method, path: url, headers: { ...req.headers, host: `127.0.0.1:${apiPort}` } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  bundle = await browserSdkBundle();

  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
  await seedUser(t.s, 'browser.admin', { roles: ['admin'] });
  await seedUser(t.s, 'browser.customer');
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  proxy = await startProxy((t.app.server.address() as AddressInfo).port);

  browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  const byRequest = new Map<Request, Seen>();
  page.on('request', (req) => {
    const u = new URL(req.url());
    if (!u.pathname.startsWith('/api/')) return;
    const entry: Seen = { method: req.method(), path: u.pathname, requestHeaders: req.headers(), postData: req.postData() };
    seen.push(entry);
    byRequest.set(req, entry);
  });
  page.on('response', (res) => {
    const entry = byRequest.get(res.request());
    if (entry) {
      entry.status = res.status();
      entry.responseHeaders = res.headers();
    }
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  if (proxy) {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  }
  await t?.close();
});

describe('the SDK in headless Chromium', () => {
  it('bundles for the browser with no Node built-in', () => {
    expect(bundle).toContain('StrongroomClient');
    expect(bundle).not.toMatch(/from\s*["']node:|require\(["']node:/);
  });

  it('signs in encrypted, calls authenticated routes, refreshes and logs out', async () => {
    const origin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { sdkReady?: boolean }).sdkReady === true);
    const r = await page.evaluate(
      (creds) => (window as unknown as { runScenario: (c: { username: string; password: string }) => Promise<unknown> }).runScenario(creds),
      { username: 'browser.admin', password: STRONG_PASSWORD },
    ) as ScenarioResult;
    await page.screenshot({ path: '/tmp/strongroom-browser-sdk.png', fullPage: true });

    expect(pageErrors).toEqual([]);
    expect(r.secureContext).toBe(true);
    expect(r.publicKey).toEqual({ algorithm: 'RSA-2048', keyId: t.s.transportKeys.current().keyId });
    expect(r.login).toMatchObject({ tokenType: 'bearer', username: 'browser.admin' });
    expect(r.validate).toMatchObject({ valid: true, session_id: r.login.sessionId, roles: ['admin'] });
    expect(r.adminUsers.sort()).toEqual(['browser.admin', 'browser.customer']);
    expect(r.refresh).toEqual({ sameSession: true, newAccessToken: true, newSessionKey: true });
    expect(r.validateAfterRefresh).toBe(true);
    expect(r.adminTotalAfterRefresh).toBe(2);
    expect(r.oldSessionKey).toBe('400 DECRYPTION_FAILED');
    expect(r.wrongPassword).toBe('401 INVALID_CREDENTIALS');
    expect(r.logout).toEqual({ status: 'success', sessions_ended: 1 });
    expect(r.signedInAfterLogout).toBe(false);
    expect(r.afterLogout.startsWith('401 ')).toBe(true);

    // The server holds the session key the browser ended with, and the session is over.
    const session = await t.s.sessions.get(r.login.sessionId);
    expect(session?.aesKey?.toString('base64')).toBe(r.sessionKeys[1]);
    expect(session?.isActive).toBe(false);

    // On the wire: every write encrypted, no password or token in clear, sealed answers.
    const writes = seen.filter((s) => s.method === 'POST');
    expect(writes.map((s) => s.path)).toEqual(expect.arrayContaining(['/api/v1/auth/login', '/api/v1/auth/validate', '/api/v1/auth/refresh', '/api/v1/auth/logout']));
    for (const s of writes) {
      expect(s.requestHeaders['x-encrypted']).toBe('true');
      expect(s.requestHeaders['x-device-fingerprint']).toBe(FINGERPRINT);
      expect(s.postData).not.toContain(STRONG_PASSWORD);
      expect(s.postData).not.toContain('browser.admin');
      expect(Object.keys((JSON.parse(s.postData!) as { data: object }).data)).toContain('ciphertext');
    }
    const sealed = (p: string, method: string) => seen.filter((s) => s.path === p && s.method === method && s.status === 200);
    for (const [p, method] of [['/api/v1/auth/login', 'POST'], ['/api/v1/auth/refresh', 'POST'], ['/api/v1/admin/users', 'GET'], ['/api/v1/auth/logout', 'POST']] as const) {
      expect(sealed(p, method).length, `${method} ${p}`).toBeGreaterThan(0);
      for (const s of sealed(p, method)) expect(s.responseHeaders?.['x-encrypted'], `${method} ${p}`).toBe('true');
    }
  }, 120_000);
});
