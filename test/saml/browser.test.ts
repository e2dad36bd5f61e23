/**
 * Issue 12's "done when", in a real browser: Debian's headless Chromium (playwright-core) opens
 * the bank's app, which is served with the service behind one origin by a small reverse proxy
 * (as a bank deploys it); the staff member clicks sign-in, types their password at the real IdP
 * (SimpleSAMLphp), and lands back on the app signed in, with roles from their groups and their
 * branch linked; signing out at the IdP then ends the session here. The sign-in is bound to the
 * browser by the `strongroom_saml` cookie (http: SameSite=Lax; the IdP on 127.0.0.1 is same-site),
 * deleted once the ACS answered; an IdP-initiated sign-in bounces back through the IdP to become one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { CHROMIUM_ARGS, ensureChromium } from '../harness/chromium.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { type IdpUser, type RunningIdp, startIdp } from '../harness/idp.js';

const FINGERPRINT = 'chromium-teller-desk-7';
const staff: IdpUser = { username: 'achieng', password: 'Idp#Browser-Passw0rd', email: 'achieng@bank.test', displayName: 'Achieng Otieno', groups: ['Tellers'], branch: 'KSM-002' };

/** The bank's app: a sign-in button, and a landing page that exchanges the code from the fragment. */
const APP = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bank app</title></head>
<body>
<button id="signin">Sign in with the bank's identity provider</button>
<p id="status">signed out</p>
<script>
document.getElementById('signin').onclick = async () => {
  const res = await fetch('/api/v1/auth/saml/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ relay_state: location.origin + '/app/landing' }) });
  location.href = (await res.json()).redirect_url;
};
const fragment = new URLSearchParams(location.hash.slice(1));
if (fragment.has('saml_code')) {
  history.replaceState(null, '', location.pathname); // the code leaves the address bar at once
  fetch('/api/v1/auth/saml/exchange', { headers: { 'X-SAML-Code': fragment.get('saml_code'), 'X-Device-Fingerprint': '${FINGERPRINT}' } })
    .then(async (r) => { window.signedIn = { status: r.status, body: await r.json() }; document.getElementById('status').textContent = 'signed in'; });
} else if (fragment.has('saml_error')) {
  window.signedIn = { status: 0, body: { error_code: fragment.get('saml_error') } };
  document.getElementById('status').textContent = 'refused';
}
</script>
</body></html>`;

let t: TestApp;
let idp: RunningIdp;
let proxy: http.Server;
let origin: string;
let browser: Browser;
let adminToken: string;

function startProxy(apiPort: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url.startsWith('/app')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(APP);
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
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  proxy = await startProxy((t.app.server.address() as AddressInfo).port);
  origin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  idp = await startIdp({ users: [staff], spMetadataXml: `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${origin}/saml"/>` });
  await seedUser(t.s, 'saml.browser.admin', { roles: ['admin'] });
  adminToken = (await signIn(t.app, 'saml.browser.admin')).access_token;
  await configure();
  await t.s.entities.create(t.s.database.db, 'KSM-002', 'Kisumu Oginga Odinga Street');
  // The operator loads our metadata into the IdP.
  idp.setSpMetadata((await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' })).body);
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 180_000);

// The IdP signs with the real time: the service's clock follows it, however slow the run.
beforeEach(() => t.clock.set(Date.now()));

async function configure(extra: Record<string, unknown> = {}): Promise<void> {
  const configured = await t.app.inject({
    method: 'POST', url: '/api/v1/auth/saml/config', headers: bearer(adminToken),
    payload: {
      sp_entity_id: `${origin}/saml`, acs_url: `${origin}/api/v1/auth/saml/acs`, slo_url: `${origin}/api/v1/auth/saml/sls`,
      idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_slo_url: idp.sloUrl, idp_x509cert: idp.certPem,
      allowed_relay_origins: [origin], attribute_map: { name: ['displayName'] }, group_roles: { staff: ['Tellers'] }, ...extra,
    },
  });
  expect(configured.statusCode, configured.body).toBe(200);
}

afterAll(async () => {
  await browser?.close();
  if (proxy) {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  }
  await idp?.stop();
  await t?.close();
});

describe('SAML sign-in in Chromium', () => {
  it('a staff member clicks sign-in, signs in at the IdP, lands back signed in with roles from their groups and their branch; signing out at the IdP ends the session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/app`);
    await page.click('#signin');
    // The IdP's login form.
    await page.waitForURL((url) => url.origin === new URL(idp.baseUrl).origin);
    await page.fill('input[name=username]', staff.username);
    await page.fill('input[name=password]', staff.password);
    await page.click('#submit_button');
    // The IdP posts to our ACS, which sends the browser back to the app with a code it exchanges.
    await page.waitForFunction(() => (window as unknown as { signedIn?: unknown }).signedIn !== undefined, undefined, { timeout: 20_000 });
    const signedIn = await page.evaluate(() => (window as unknown as { signedIn: { status: number; body: { access_token: string; user_profile: Record<string, unknown> } } }).signedIn);
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body.user_profile).toMatchObject({ username: staff.email, full_name: staff.displayName, roles: ['staff'], channel: 'web' });
    expect(page.url()).toBe(`${origin}/app/landing`); // the code is gone from the address bar
    // The browser-binding cookie did its work and is gone.
    expect((await context.cookies()).filter((c) => c.name === 'strongroom_saml')).toEqual([]);
    const user = (await t.s.users.findByLogin(staff.email!))!;
    expect(await t.s.entities.codesOf(user.id)).toEqual(['KSM-002']);
    const token = signedIn.body.access_token;
    const headers = bearer(token, { 'x-device-fingerprint': FINGERPRINT });
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers })).statusCode).toBe(200);

    // Signing out at the IdP: it sends the browser to our SLS, which ends the session and answers it.
    await page.goto(`${idp.baseUrl}saml2/idp/SingleLogoutService.php?ReturnTo=${encodeURIComponent(`${idp.baseUrl}logout.php`)}`);
    await page.waitForURL((url) => url.pathname.endsWith('/logout.php'), { timeout: 20_000 });
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers }), 401, 'SESSION_INVALID');
    await context.close();
  });

  it('an IdP-initiated sign-in to the app goes back through the IdP once (now bound to this browser) and lands signed in', async () => {
    await configure({ allow_idp_initiated: true });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const posts: Array<Promise<Record<string, string>>> = [];
      page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/api/v1/auth/saml/acs')) posts.push(r.allHeaders()); });
      await page.goto(`${idp.ssoUrl}?${new URLSearchParams({ spentityid: `${origin}/saml`, RelayState: `${origin}/app/landing` })}`);
      await page.fill('input[name=username]', staff.username);
      await page.fill('input[name=password]', staff.password);
      await page.click('#submit_button');
      await page.waitForFunction(() => (window as unknown as { signedIn?: unknown }).signedIn !== undefined, undefined, { timeout: 20_000 });
      const signedIn = await page.evaluate(() => (window as unknown as { signedIn: { status: number; body: { user_profile: Record<string, unknown> } } }).signedIn);
      expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
      expect(signedIn.body.user_profile).toMatchObject({ username: staff.email });
      // Two posts to the ACS: the IdP-initiated one (no cookie: bounced), then the answer to our request (with it).
      const acsPosts = (await Promise.all(posts)).map((h) => h.cookie ?? '');
      expect(acsPosts).toHaveLength(2);
      expect(acsPosts[0]).not.toContain('strongroom_saml=');
      expect(acsPosts[1]).toMatch(/strongroom_saml=[A-Za-z0-9_-]{43}/);
      expect((await context.cookies()).filter((c) => c.name === 'strongroom_saml')).toEqual([]);
      await context.close();
    } finally {
      await configure();
    }
  });
});
