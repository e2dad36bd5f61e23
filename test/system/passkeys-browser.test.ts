/**
 * Passkeys in real Chromium: a CDP virtual authenticator (internal transport, resident keys,
 * user verification: a phone's or laptop's platform authenticator with its fingerprint check)
 * registers a passkey on a page of the service's own origin (http://localhost:PORT, a secure
 * context) and signs in with it and no password, through the browser's own WebAuthn; the same
 * browser on a service whose WEBAUTHN_ORIGINS does not name the page's origin is refused. And the
 * client SDK, bundled for the browser, sets a passkey up as the first factor of a user who must
 * have one (403 MFA_SETUP_INCOMPLETE) through the browser's WebAuthn, then signs in with it alone.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import type { StrongroomClient, StrongroomError } from '../../packages/client/src/index.js';
import { browserSdkBundle, CHROMIUM_ARGS, ensureChromium } from '../harness/chromium.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';

/** A free TCP port, so the service can be told its own origin before it listens. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs in the page: sign in with the password, register a passkey, then sign in with it alone. */
async function scenario({ username, password, passwordless }: { username: string; password: string; passwordless: boolean }): Promise<Record<string, unknown>> {
  const call = async (path: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  };
  const out: Record<string, unknown> = { secureContext: window.isSecureContext };
  const signedIn = await call('/api/v1/auth/login', { username, password });
  const token = signedIn.body.access_token as string;
  const creation = await call('/api/v1/passkeys/registration/options', { current_password: password }, token);
  const created = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(creation.body.options as PublicKeyCredentialCreationOptionsJSON) }) as PublicKeyCredential;
  const registered = await call('/api/v1/passkeys/registration/verify', { challenge_id: creation.body.challenge_id, name: 'Chromium', response: created.toJSON() }, token);
  out.registration = { status: registered.status, code: registered.body.error_code ?? null, reason: (registered.body.details as { reason?: string } | undefined)?.reason ?? null, name: registered.body.name ?? null };
  if (!passwordless) return out;
  const request = await call('/api/v1/auth/passkey/options', {});
  const got = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(request.body.options as PublicKeyCredentialRequestOptionsJSON) }) as PublicKeyCredential;
  const login = await call('/api/v1/auth/passkey/login', { challenge_id: request.body.challenge_id, response: got.toJSON() });
  const profile = login.body.user_profile as { username: string; mfa_completed: boolean } | undefined;
  out.login = { status: login.status, username: profile?.username ?? null, mfaCompleted: profile?.mfa_completed ?? null };
  return out;
}

/** Runs in the page: the SDK (loaded as `window.Strongroom`) sets a passkey up with the set-up token of MFA_SETUP_INCOMPLETE, then signs in with it alone. */
async function sdkSetUpScenario({ username, password }: { username: string; password: string }): Promise<Record<string, unknown>> {
  const Client = (window as unknown as { Strongroom: { StrongroomClient: typeof StrongroomClient } }).Strongroom.StrongroomClient;
  const client = new Client({ baseUrl: location.origin });
  const out: Record<string, unknown> = {};
  const stopped = await client.login({ username, password }).then(() => null, (e: unknown) => e as StrongroomError);
  out.setup = { code: stopped?.errorCode ?? null, passkeyOffered: (stopped?.details.setup_methods as string[] | undefined)?.includes('passkey') ?? false };
  const added = await client.passkeys.add({ name: 'Chromium', twoFactorToken: String(stopped?.details.two_factor_token) });
  out.added = { name: added.name, mfaCompleted: added.sign_in?.user_profile.mfa_completed ?? null, signedIn: client.signedIn, valid: (await client.validate()).valid };
  const fresh = new Client({ baseUrl: location.origin });
  const session = await fresh.signInWithPasskey();
  out.passwordless = { username: session.user_profile.username, mfaCompleted: session.user_profile.mfa_completed };
  return out;
}

interface Served { t: TestApp; origin: string }

async function serve(pageOrigins: (port: number) => string): Promise<Served> {
  const port = await freePort();
  const t = await createTestApp({ env: { WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_RP_NAME: 'Strongroom test', WEBAUTHN_ORIGINS: pageOrigins(port), MFA_REQUIRED_ROLES: 'staff' } });
  await seedUser(t.s, 'chromium.customer');
  await seedUser(t.s, 'chromium.staff', { roles: ['staff'] });
  await t.app.listen({ host: '127.0.0.1', port });
  return { t, origin: `http://localhost:${port}` };
}

let browser: Browser;
let bundle: string;
let right: Served;
let wrong: Served;
const pageErrors: string[] = [];

/** A page on `origin` with a virtual platform authenticator that verifies its user. */
async function pageWithAuthenticator(origin: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true } });
  await page.goto(`${origin}/api/health`);
  return page;
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  bundle = await browserSdkBundle();
  right = await serve((port) => `http://localhost:${port}`);
  wrong = await serve((port) => `http://localhost:${port + 1}`); // not the page's origin
  browser = await chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP localhost 127.0.0.1'] });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await right?.t.close();
  await wrong?.t.close();
});

describe('passkeys in headless Chromium with a virtual authenticator', () => {
  it('registers a passkey and signs in with it and no password', async () => {
    const page = await pageWithAuthenticator(right.origin);
    const r = await page.evaluate(scenario, { username: 'chromium.customer', password: STRONG_PASSWORD, passwordless: true });
    expect(pageErrors).toEqual([]);
    expect(r).toEqual({
      secureContext: true,
      registration: { status: 200, code: null, reason: null, name: 'Chromium' },
      login: { status: 200, username: 'chromium.customer', mfaCompleted: true },
    });
    const user = await right.t.s.users.findByLogin('chromium.customer');
    const rows = await right.t.s.database.db.selectFrom('passkeys').select(['sign_count', 'last_used_at', 'device_type']).where('user_id', '=', user!.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.last_used_at).not.toBeNull();
  });

  it('the client SDK sets a passkey up as the first factor with the token of 403 MFA_SETUP_INCOMPLETE (signed in at once), then signs in with it alone', async () => {
    const page = await pageWithAuthenticator(right.origin);
    await page.route('**/sdk.js', (route) => route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body: bundle }));
    await page.addScriptTag({ type: 'module', content: 'import * as sdk from \'/sdk.js\'; window.Strongroom = sdk;' });
    await page.waitForFunction(() => (window as unknown as { Strongroom?: unknown }).Strongroom !== undefined);
    const r = await page.evaluate(sdkSetUpScenario, { username: 'chromium.staff', password: STRONG_PASSWORD });
    expect(pageErrors).toEqual([]);
    expect(r).toEqual({
      setup: { code: 'MFA_SETUP_INCOMPLETE', passkeyOffered: true },
      added: { name: 'Chromium', mfaCompleted: true, signedIn: true, valid: true },
      passwordless: { username: 'chromium.staff', mfaCompleted: true },
    });
    const user = await right.t.s.users.findByLogin('chromium.staff');
    expect(await right.t.s.factors.active(user!.id)).toEqual(['passkey']);
  });

  it('refuses a passkey made on an origin WEBAUTHN_ORIGINS does not name', async () => {
    const page = await pageWithAuthenticator(wrong.origin);
    const r = await page.evaluate(scenario, { username: 'chromium.customer', password: STRONG_PASSWORD, passwordless: false });
    expect(r.registration).toEqual({ status: 400, code: 'PASSKEY_REGISTRATION_FAILED', reason: 'origin', name: null });
    const user = await wrong.t.s.users.findByLogin('chromium.customer');
    expect(await wrong.t.s.database.db.selectFrom('passkeys').select('id').where('user_id', '=', user!.id).execute()).toEqual([]);
  });
});
