/**
 * Passkeys (WebAuthn) for the SDK: the JSON shapes the service and `PublicKeyCredential.toJSON()`
 * use, the browser's own ceremony (`createPasskeyInBrowser`, `getPasskeyInBrowser`), and the
 * `client.passkeys` routes. The ceremony itself (the device asking for a fingerprint, face or
 * screen lock) is the platform's: in a browser these helpers call `navigator.credentials`; in an
 * app, or a browser without the JSON methods, pass a function that does it (Android Credential
 * Manager, iOS AuthenticationServices, `@simplewebauthn/browser`).
 */
import { StrongroomError } from './errors.js';
import type { SignInResponse } from './types.js';

/** A credential as options name it (`excludeCredentials`, `allowCredentials`). */
export interface PasskeyDescriptorJSON {
  id: string;
  type: 'public-key';
  transports?: string[];
}

/** `PublicKeyCredentialCreationOptionsJSON`: for `navigator.credentials.create()` (base64url fields). */
export interface PasskeyCreationOptionsJSON {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
  pubKeyCredParams: { alg: number; type: 'public-key' }[];
  timeout?: number;
  excludeCredentials?: PasskeyDescriptorJSON[];
  authenticatorSelection?: { residentKey?: string; requireResidentKey?: boolean; userVerification?: string; authenticatorAttachment?: string };
  attestation?: string;
  extensions?: Record<string, unknown>;
  [field: string]: unknown;
}

/** `PublicKeyCredentialRequestOptionsJSON`: for `navigator.credentials.get()`. */
export interface PasskeyRequestOptionsJSON {
  challenge: string;
  rpId?: string;
  allowCredentials?: PasskeyDescriptorJSON[];
  timeout?: number;
  userVerification?: string;
  [field: string]: unknown;
}

/** `PublicKeyCredential.toJSON()` after `navigator.credentials.create()` (or the platform's equivalent). */
export interface PasskeyRegistrationJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports?: string[]; [field: string]: unknown };
  authenticatorAttachment?: string;
  clientExtensionResults: Record<string, unknown>;
  [field: string]: unknown;
}

/** `PublicKeyCredential.toJSON()` after `navigator.credentials.get()`. */
export interface PasskeyAssertionJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string; [field: string]: unknown };
  authenticatorAttachment?: string;
  clientExtensionResults: Record<string, unknown>;
  [field: string]: unknown;
}

/** Options the service answered: `challenge_id` goes back with the device's answer, once, within 5 minutes. */
export interface PasskeyChallenge<O> {
  challenge_id: string;
  options: O;
}

/** Makes a passkey on the device from creation options (the browser: `createPasskeyInBrowser`). */
export type PasskeyCreate = (options: PasskeyCreationOptionsJSON, ceremony: { signal?: AbortSignal }) => Promise<PasskeyRegistrationJSON>;
/** Signs a challenge with one of the device's passkeys (the browser: `getPasskeyInBrowser`). */
export type PasskeyGet = (options: PasskeyRequestOptionsJSON, ceremony: { signal?: AbortSignal }) => Promise<PasskeyAssertionJSON>;

/** A stored passkey: never its public key or credential id. */
export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  /** Set when a copy was detected (a cloned authenticator): it no longer signs in. */
  suspended_at: string | null;
  device_type: 'singleDevice' | 'multiDevice';
  backed_up: boolean;
  transports: string[];
  aaguid: string;
}

/** A registration's answer; `sign_in` when a set-up `two_factor_token` was given (the client is then signed in). */
export interface RegisteredPasskey extends Passkey {
  sign_in?: SignInResponse;
}

/** A signed-in step-up's answer. */
export interface StepUpResponse {
  verified: true;
  method: string;
  session_id: string;
  verified_at: string;
}

interface JsonCredentials {
  parseCreationOptionsFromJSON?(o: unknown): unknown;
  parseRequestOptionsFromJSON?(o: unknown): unknown;
}

function browserWebAuthn(what: string): { credentials: CredentialsContainer; parse: JsonCredentials } {
  const parse = (globalThis as { PublicKeyCredential?: JsonCredentials }).PublicKeyCredential;
  const credentials = (globalThis as { navigator?: { credentials?: CredentialsContainer } }).navigator?.credentials;
  if (!parse || !credentials || typeof parse[what as keyof JsonCredentials] !== 'function') {
    throw new TypeError(`No WebAuthn JSON support here (PublicKeyCredential.${what}): pass your own function that runs the ceremony (an app's platform API, or @simplewebauthn/browser).`);
  }
  return { credentials, parse };
}

/** The device's answer as JSON, or a StrongroomError when the person cancelled or nothing was made. */
function toJson<T>(credential: Credential | null): T {
  const c = credential as (Credential & { toJSON?(): unknown }) | null;
  if (!c || typeof c.toJSON !== 'function') throw new StrongroomError(0, 'PASSKEY_CANCELLED', 'The device made no passkey answer.');
  return c.toJSON() as T;
}

/** Cancellation and refusal by the browser (`NotAllowedError`, `AbortError`, ...) as a StrongroomError. */
function ceremonyError(err: unknown): StrongroomError {
  const name = err instanceof Error ? err.name : 'Error';
  const message = err instanceof Error ? err.message : String(err);
  return new StrongroomError(0, 'PASSKEY_CANCELLED', `The passkey ceremony did not finish (${name}): ${message}`, { name }, { cause: err });
}

/** `navigator.credentials.create()` with the service's options; resolves to `toJSON()` of the new credential. */
export async function createPasskeyInBrowser(options: PasskeyCreationOptionsJSON, ceremony: { signal?: AbortSignal } = {}): Promise<PasskeyRegistrationJSON> {
  const { credentials, parse } = browserWebAuthn('parseCreationOptionsFromJSON');
  try {
    const publicKey = parse.parseCreationOptionsFromJSON!(options) as PublicKeyCredentialCreationOptions;
    return toJson(await credentials.create({ publicKey, ...(ceremony.signal ? { signal: ceremony.signal } : {}) }));
  } catch (err) {
    throw err instanceof StrongroomError ? err : ceremonyError(err);
  }
}

/** `navigator.credentials.get()` with the service's options; resolves to `toJSON()` of the assertion. */
export async function getPasskeyInBrowser(options: PasskeyRequestOptionsJSON, ceremony: { signal?: AbortSignal; mediation?: CredentialMediationRequirement } = {}): Promise<PasskeyAssertionJSON> {
  const { credentials, parse } = browserWebAuthn('parseRequestOptionsFromJSON');
  try {
    const publicKey = parse.parseRequestOptionsFromJSON!(options) as PublicKeyCredentialRequestOptions;
    return toJson(await credentials.get({ publicKey, ...(ceremony.signal ? { signal: ceremony.signal } : {}), ...(ceremony.mediation ? { mediation: ceremony.mediation } : {}) }));
  } catch (err) {
    throw err instanceof StrongroomError ? err : ceremonyError(err);
  }
}

/** What the SDK's route helpers need of the client. */
export interface SdkHost {
  request<T>(method: string, path: string, body?: unknown, options?: { auth?: boolean; autoRefresh?: boolean; signal?: AbortSignal }): Promise<T>;
  /** Throws NOT_SIGNED_IN when the client has no session. */
  requireSession(): Promise<void>;
  /** The device fingerprint the client signs in with, if any. */
  fingerprint(): string | undefined;
}

export const PASSKEY_PATHS = Object.freeze({
  registrationOptions: '/api/v1/passkeys/registration/options',
  registrationVerify: '/api/v1/passkeys/registration/verify',
  list: '/api/v1/passkeys',
  signInOptions: '/api/v1/auth/passkey/options',
  signIn: '/api/v1/auth/passkey/login',
  secondFactorOptions: '/api/v1/auth/passkey/2fa/options',
  secondFactorVerify: '/api/v1/auth/passkey/2fa/verify',
  stepUpOptions: '/api/v1/auth/passkey/step-up/options',
  stepUpVerify: '/api/v1/auth/passkey/step-up/verify',
});

/** `client.passkeys`: the signed-in owner's passkeys, and a first factor's set-up after 403 MFA_SETUP_INCOMPLETE. */
export interface PasskeyRoutes {
  /**
   * Creation options for the device. Signed in: `currentPassword` while the account has no second
   * factor, else nothing after a recent step-up (`stepUpWithPasskey`; 403 STEP_UP_REQUIRED
   * otherwise). After 403 MFA_SETUP_INCOMPLETE whose `setup_methods` include `passkey`: its
   * `twoFactorToken` instead, no session needed.
   */
  registrationOptions(input?: { currentPassword?: string; twoFactorToken?: string }): Promise<PasskeyChallenge<PasskeyCreationOptionsJSON>>;
  /**
   * Sends the device's answer to `registrationOptions` and stores the passkey under `name`. With
   * the set-up `twoFactorToken` the sign-in finishes: the answer's `sign_in` signs the client in.
   */
  register(input: { challengeId: string; name: string; response: PasskeyRegistrationJSON; twoFactorToken?: string }): Promise<RegisteredPasskey>;
  /** `registrationOptions`, the ceremony (`create`, by default the browser's), then `register`. */
  add(input: { name: string; create?: PasskeyCreate; currentPassword?: string; twoFactorToken?: string; signal?: AbortSignal }): Promise<RegisteredPasskey>;
  /** The signed-in owner's passkeys, oldest first. */
  list(): Promise<Passkey[]>;
  rename(id: string, name: string): Promise<Passkey>;
  /** Needs a recent step-up (`stepUpWithPasskey`); the last one takes the `passkey` factor with it. */
  delete(id: string): Promise<{ deleted: true; passkeys_left: number }>;
}

const preAuth = { auth: false, autoRefresh: false } as const;

export function passkeyRoutes(host: SdkHost): PasskeyRoutes {
  const routes: PasskeyRoutes = {
    async registrationOptions(input = {}) {
      if (input.twoFactorToken !== undefined) return host.request('POST', PASSKEY_PATHS.registrationOptions, { two_factor_token: input.twoFactorToken }, preAuth);
      await host.requireSession();
      return host.request('POST', PASSKEY_PATHS.registrationOptions, input.currentPassword === undefined ? {} : { current_password: input.currentPassword });
    },
    async register(input) {
      const body = { challenge_id: input.challengeId, name: input.name, response: input.response };
      if (input.twoFactorToken !== undefined) return host.request('POST', PASSKEY_PATHS.registrationVerify, { ...body, two_factor_token: input.twoFactorToken }, preAuth);
      await host.requireSession();
      return host.request('POST', PASSKEY_PATHS.registrationVerify, body);
    },
    async add(input) {
      const { challenge_id, options } = await routes.registrationOptions(input);
      const response = await (input.create ?? createPasskeyInBrowser)(options, input.signal ? { signal: input.signal } : {});
      return routes.register({ challengeId: challenge_id, name: input.name, response, ...(input.twoFactorToken === undefined ? {} : { twoFactorToken: input.twoFactorToken }) });
    },
    async list() {
      await host.requireSession();
      return (await host.request<{ passkeys: Passkey[] }>('GET', PASSKEY_PATHS.list)).passkeys;
    },
    async rename(id, name) {
      await host.requireSession();
      return host.request('PATCH', `${PASSKEY_PATHS.list}/${encodeURIComponent(id)}`, { name });
    },
    async delete(id) {
      await host.requireSession();
      return host.request('DELETE', `${PASSKEY_PATHS.list}/${encodeURIComponent(id)}`);
    },
  };
  return routes;
}

/**
 * A sign-in with a passkey: passwordless (no `twoFactorToken`: the device offers the passkeys it
 * holds and the one chosen names the account), or as the second factor after 401 2FA_REQUIRED
 * whose `methods` include `passkey`.
 */
export async function signInWithPasskey(host: SdkHost, input: { get?: PasskeyGet; twoFactorToken?: string; signal?: AbortSignal } = {}): Promise<SignInResponse> {
  const get = input.get ?? getPasskeyInBrowser;
  const ceremony = input.signal ? { signal: input.signal } : {};
  if (input.twoFactorToken !== undefined) {
    const token = { two_factor_token: input.twoFactorToken };
    const { challenge_id, options } = await host.request<PasskeyChallenge<PasskeyRequestOptionsJSON>>('POST', PASSKEY_PATHS.secondFactorOptions, token, preAuth);
    const response = await get(options, ceremony);
    return host.request('POST', PASSKEY_PATHS.secondFactorVerify, { ...token, challenge_id, response }, preAuth);
  }
  const { challenge_id, options } = await host.request<PasskeyChallenge<PasskeyRequestOptionsJSON>>('POST', PASSKEY_PATHS.signInOptions, {}, preAuth);
  const response = await get(options, ceremony);
  const fingerprint = host.fingerprint();
  return host.request('POST', PASSKEY_PATHS.signIn, { challenge_id, response, ...(fingerprint === undefined ? {} : { device_fingerprint: fingerprint }) }, preAuth);
}

/** A step-up of the signed-in session with one of the owner's passkeys. */
export async function stepUpWithPasskey(host: SdkHost, input: { get?: PasskeyGet; signal?: AbortSignal } = {}): Promise<StepUpResponse> {
  await host.requireSession();
  const { challenge_id, options } = await host.request<PasskeyChallenge<PasskeyRequestOptionsJSON>>('POST', PASSKEY_PATHS.stepUpOptions, {});
  const response = await (input.get ?? getPasskeyInBrowser)(options, input.signal ? { signal: input.signal } : {});
  return host.request('POST', PASSKEY_PATHS.stepUpVerify, { challenge_id, response });
}
