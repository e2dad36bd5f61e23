/**
 * The SDK's passkey helpers against a real Strongroom with transport encryption enforced; the
 * device is the harness's software authenticator (test/harness/webauthn.ts) given as the ceremony
 * function, as an app gives its platform's (Android Credential Manager, iOS AuthenticationServices).
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { seedUser, STRONG_PASSWORD } from '../../../test/harness/fixtures.js';
import { SoftAuthenticator } from '../../../test/harness/webauthn.js';
import { generateClientKeyPair } from '../src/crypto.js';
import {
  StrongroomClient, StrongroomError, type FetchLike, type PasskeyAssertionJSON, type PasskeyCreate, type PasskeyGet, type PasskeyRegistrationJSON, type StrongroomClientOptions,
} from '../src/index.js';

const ORIGIN = 'https://app.bank.example';
let t: TestApp;
let baseUrl: string;
let seq = 0;
const keyPair = await generateClientKeyPair();

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', WEBAUTHN_RP_ID: 'bank.example', WEBAUTHN_ORIGINS: ORIGIN, MFA_REQUIRED_ROLES: 'staff' } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t?.close());

const client = (opts: Partial<StrongroomClientOptions> = {}) => new StrongroomClient({ baseUrl, keyPair, ...opts });

/** The software authenticator as the ceremony functions an app passes. */
function device(auth = new SoftAuthenticator()): { auth: SoftAuthenticator; create: PasskeyCreate; get: PasskeyGet } {
  return {
    auth,
    create: async (options) => auth.register(options, { origin: ORIGIN }) as unknown as PasskeyRegistrationJSON,
    get: async (options) => auth.assert(options, { origin: ORIGIN }) as unknown as PasskeyAssertionJSON,
  };
}

async function failure(p: Promise<unknown>): Promise<StrongroomError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(StrongroomError);
  return err as StrongroomError;
}

/** The real fetch, keeping the path, headers and body of each request. */
function recordingFetch(): { fetch: FetchLike; sent: { path: string; headers: Record<string, string>; body: string }[] } {
  const sent: { path: string; headers: Record<string, string>; body: string }[] = [];
  return {
    sent,
    fetch: async (input, init) => {
      sent.push({ path: new URL(input).pathname, headers: Object.fromEntries(new Headers(init.headers).entries()), body: String(init.body ?? '') });
      return globalThis.fetch(input, init);
    },
  };
}

async function serverSessionKey(sessionId: string): Promise<string | undefined> {
  return (await t.s.sessions.get(sessionId))?.aesKey?.toString('base64');
}

describe('passkeys in the SDK', () => {
  it('adds a passkey (the password, encrypted), signs in with it and no password, steps up with it, lists, renames and deletes it', async () => {
    const username = `sdk.passkey${++seq}`;
    await seedUser(t.s, username);
    const { fetch, sent } = recordingFetch();
    const owner = client({ fetch });
    await owner.login({ username, password: STRONG_PASSWORD });
    const d = device();
    const added = await owner.passkeys.add({ name: 'Pixel 8', currentPassword: STRONG_PASSWORD, create: d.create });
    expect(added).toMatchObject({ name: 'Pixel 8', device_type: 'multiDevice', last_used_at: null });
    expect(added.sign_in).toBeUndefined();
    const options = sent.find((s) => s.path === '/api/v1/passkeys/registration/options')!;
    expect(options.headers['x-encrypted']).toBe('true');
    expect(options.body).not.toContain(STRONG_PASSWORD);

    const web = client();
    const signedIn = await web.signInWithPasskey({ get: d.get });
    expect(signedIn.user_profile).toMatchObject({ username, mfa_completed: true });
    expect(web.getSession()!.sessionKey).toBe(await serverSessionKey(signedIn.session_id));
    expect((await web.validate()).valid).toBe(true);

    expect(await failure(web.passkeys.delete(added.id))).toMatchObject({ status: 403, errorCode: 'STEP_UP_REQUIRED' });
    expect(await web.stepUpWithPasskey({ get: d.get })).toMatchObject({ verified: true, method: 'passkey', session_id: signedIn.session_id });
    expect((await web.passkeys.list()).map((p) => p.id)).toEqual([added.id]);
    expect(await web.passkeys.rename(added.id, 'Work phone')).toMatchObject({ id: added.id, name: 'Work phone' });
    expect(await web.passkeys.delete(added.id)).toEqual({ deleted: true, passkeys_left: 0 });
    expect(await failure(client().signInWithPasskey({ get: d.get }))).toMatchObject({ status: 401, errorCode: 'INVALID_CREDENTIALS' });
  });

  it('sets a passkey up as the first factor with the token of 403 MFA_SETUP_INCOMPLETE: the client is signed in; the next sign-in asks for the passkey after the password', async () => {
    const username = `sdk.setup${++seq}`;
    await seedUser(t.s, username, { roles: ['staff'] });
    const d = device();
    const c = client();
    const setup = await failure(c.login({ username, password: STRONG_PASSWORD }));
    expect(setup).toMatchObject({ status: 403, errorCode: 'MFA_SETUP_INCOMPLETE' });
    expect(setup.details.setup_methods).toContain('passkey');
    const twoFactorToken = String(setup.details.two_factor_token);
    const { challenge_id, options } = await c.passkeys.registrationOptions({ twoFactorToken });
    const registered = await c.passkeys.register({ challengeId: challenge_id, name: 'Laptop', response: await d.create(options, {}), twoFactorToken });
    expect(registered.sign_in?.user_profile).toMatchObject({ username, mfa_completed: true });
    expect(c.signedIn).toBe(true);
    expect(c.getSession()!.sessionKey).toBe(await serverSessionKey(registered.sign_in!.session_id));
    expect((await c.validate()).valid).toBe(true);

    const next = client();
    const challenge = await failure(next.login({ username, password: STRONG_PASSWORD }));
    expect(challenge).toMatchObject({ status: 401, errorCode: '2FA_REQUIRED', details: { methods: ['passkey'] } });
    const done = await next.signInWithPasskey({ get: d.get, twoFactorToken: String(challenge.details.two_factor_token) });
    expect(done.user_profile.mfa_completed).toBe(true);
    expect((await next.validate()).session_id).toBe(done.session_id);
  });

  it('a ceremony that fails rejects with its own error and sends no answer; without WebAuthn here and no function, a TypeError', async () => {
    const { fetch, sent } = recordingFetch();
    const c = client({ fetch });
    const cancelled = new StrongroomError(0, 'PASSKEY_CANCELLED', 'The person cancelled.');
    expect(await failure(c.signInWithPasskey({ get: async () => { throw cancelled; } }))).toBe(cancelled);
    expect(sent.map((s) => s.path).filter((p) => p !== '/api/v1/auth/public_key')).toEqual(['/api/v1/auth/passkey/options']);
    await expect(c.signInWithPasskey()).rejects.toThrow(TypeError);
    expect(await failure(c.stepUpWithPasskey({ get: device().get }))).toMatchObject({ status: 0, errorCode: 'NOT_SIGNED_IN' });
  });
});
