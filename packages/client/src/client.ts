/**
 * StrongroomClient: the auth routes of Strongroom, and any other route of the platform, with
 * transport encryption (RSA-OAEP-SHA256 + AES-256-GCM bodies) done for the caller.
 *
 * - Pre-auth routes: the JSON body, plus the client's own public key as `client_public_key`, is
 *   encrypted under a fresh AES-256 key wrapped with the server's RSA key; the answer (errors
 *   too) is opened with the client's private key. A pre-auth answer that carries a token pair
 *   (login, refresh, a completed second factor) is a sign-in: its AES key is the session key.
 * - Every other route: the body and the answer are AES-256-GCM under the session key.
 * - The server's public key is fetched once and cached; it is fetched again when it nears
 *   `expires_at`, after `publicKeyMaxAgeMs`, and after a DECRYPTION_FAILED answer, after which
 *   the request is retried once (this is how the client follows a key rotation).
 * - An expired access token (401 TOKEN_EXPIRED) is refreshed once, then the request retried.
 */
import {
  generateClientKeyPair, importServerPublicKey, isPreAuthEnvelope, isRecord, isSessionEnvelope, openPreAuth, openSession,
  sealPreAuth, sealSession, aesKey, type ClientKeyPair,
} from './crypto.js';
import { fromBase64, toBase64 } from './base64.js';
import { StrongroomError } from './errors.js';
import { DEFAULT_BINARY_FRAGMENTS, DEFAULT_EXEMPT_PATHS, DEFAULT_PREAUTH_ROUTES, encryptionModeOf, normalisePath, type EncryptionMode } from './routes.js';
import { passkeyRoutes, signInWithPasskey, stepUpWithPasskey, type PasskeyGet, type PasskeyRoutes, type SdkHost, type StepUpResponse } from './passkeys.js';
import { pushApprovalRoutes, type PushApprovalRoutes } from './push-approval.js';
import { REALTIME_PATH, RealtimeSubscription } from './realtime.js';
import type { RealtimeHandlers, RealtimeOptions } from './realtime-types.js';
import type { CodeSent, Location, SignInChannel, LogoutResponse, PasswordChangedResponse, PublicKeyInfo, SignInResponse, StoredSession, ValidateResponse } from './types.js';

export const PATHS = Object.freeze({
  publicKey: '/api/v1/auth/public_key',
  login: '/api/v1/auth/login',
  loginMobile: '/api/v1/auth/login/mobile',
  refresh: '/api/v1/auth/refresh',
  logout: '/api/v1/auth/logout',
  validate: '/api/v1/auth/validate',
  password: '/api/v1/auth/password',
  resetPassword: '/api/v1/auth/reset/password',
  totpVerifyLogin: '/api/v1/2fa/totp/verify-login',
  totpVerifyBackupCode: '/api/v1/2fa/totp/verify-backup-code',
  codeRequest: '/api/v1/auth/2fa/request',
  codeValidate: '/api/v1/auth/2fa/validate',
  gdprExport: '/api/v1/auth/gdpr/export',
});

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface StrongroomClientOptions {
  /** Origin (and optional path prefix) of the platform's API, e.g. `https://auth.bank.example`. */
  baseUrl: string;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** Binds the session to this device: sent at login and as `X-Device-Fingerprint` on every request. */
  deviceFingerprint?: string;
  /** Transport encryption (default true). False only against a server that does not enforce it. */
  encrypt?: boolean;
  /** Pre-auth routes, when the platform configures others than the defaults (server TRANSPORT_PREAUTH_ROUTES). */
  preAuthRoutes?: readonly string[];
  /** Paths never encrypted. */
  exemptPaths?: readonly string[];
  /** Path fragments whose answers are binary and never encrypted. */
  binaryFragments?: readonly string[];
  /** On 401 TOKEN_EXPIRED, refresh the tokens and retry once (default true). */
  autoRefresh?: boolean;
  /** Fetch the public key again after this long even if it is not near expiry (default 1 hour). */
  publicKeyMaxAgeMs?: number;
  /** Fetch the public key again when it expires within this margin (default 10 minutes). */
  publicKeyExpiryMarginMs?: number;
  /** Headers added to every request (e.g. `x-correlation-id`). */
  headers?: Record<string, string>;
  /** Resume a session saved from `getSession()`. */
  session?: StoredSession | null;
  /** Called whenever the session changes (sign-in, refresh, sign-out); null when it ends. */
  onSessionChange?: (session: StoredSession | null) => void;
  /** The client's RSA key pair; one is generated (non-extractable private key) when absent. */
  keyPair?: ClientKeyPair;
}

export interface RequestOptions {
  /** Extra headers for this request. */
  headers?: Record<string, string>;
  /** Send `Authorization: Bearer` with the session's access token (default: when signed in). */
  auth?: boolean;
  /** Refresh and retry once on 401 TOKEN_EXPIRED (default: the client's `autoRefresh`). */
  autoRefresh?: boolean;
  signal?: AbortSignal;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

interface CachedKey {
  info: PublicKeyInfo;
  key: CryptoKey;
  expiresAt: number;
  fetchedAt: number;
}

interface Session {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  rawKey: Uint8Array<ArrayBuffer> | null;
  key: CryptoKey | null;
  accessTokenExpiresAt: number;
}

/** What one exchange sent and got. */
interface Exchange {
  status: number;
  body: unknown;
  /** The AES key of a sealed pre-auth answer. */
  answerKey: Uint8Array<ArrayBuffer> | null;
  sealed: boolean;
}

export class StrongroomClient {
  readonly baseUrl: string;
  readonly encrypt: boolean;
  readonly preAuthRoutes: readonly string[];
  readonly exemptPaths: readonly string[];
  readonly binaryFragments: readonly string[];
  private readonly fetchImpl: FetchLike;
  private readonly autoRefresh: boolean;
  private readonly maxKeyAge: number;
  private readonly keyMargin: number;
  private readonly headers: Record<string, string>;
  private readonly onSessionChange: ((session: StoredSession | null) => void) | undefined;
  private fingerprint: string | undefined;
  private keyPair: Promise<ClientKeyPair> | undefined;
  private serverKey: CachedKey | undefined;
  private serverKeyLoading: Promise<CachedKey> | undefined;
  private current: Session | null = null;
  private pendingSession: Promise<void> | undefined;
  private refreshing: Promise<SignInResponse> | undefined;
  private readonly host: SdkHost;
  /** The owner's passkeys, and a passkey as the first factor after 403 MFA_SETUP_INCOMPLETE (`registrationOptions`, `register`, `add`, `list`, `rename`, `delete`). */
  readonly passkeys: PasskeyRoutes;
  /** Push approval: after 401 2FA_REQUIRED (`request`, `waitForApproval`), and a signed-in session's step-up (`stepUp`, or `requestStepUp` then `waitForStepUp`). */
  readonly pushApproval: PushApprovalRoutes;

  constructor(options: StrongroomClientOptions) {
    if (typeof options?.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('StrongroomClient: baseUrl is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.encrypt = options.encrypt ?? true;
    this.preAuthRoutes = options.preAuthRoutes ?? DEFAULT_PREAUTH_ROUTES;
    this.exemptPaths = options.exemptPaths ?? DEFAULT_EXEMPT_PATHS;
    this.binaryFragments = options.binaryFragments ?? DEFAULT_BINARY_FRAGMENTS;
    this.autoRefresh = options.autoRefresh ?? true;
    this.maxKeyAge = options.publicKeyMaxAgeMs ?? 3_600_000;
    this.keyMargin = options.publicKeyExpiryMarginMs ?? 600_000;
    this.headers = { ...options.headers };
    this.onSessionChange = options.onSessionChange;
    this.fingerprint = options.deviceFingerprint;
    if (options.keyPair) this.keyPair = Promise.resolve(options.keyPair);
    if (options.session) this.pendingSession = this.restore(options.session);
    this.host = {
      request: (method, path, body, opts) => this.request(method, path, body, opts),
      requireSession: async () => {
        await this.requireSession();
      },
      fingerprint: () => this.fingerprint,
    };
    this.passkeys = passkeyRoutes(this.host);
    this.pushApproval = pushApprovalRoutes(this.host);
  }

  // ---- The auth routes ------------------------------------------------------------------------

  /** The server's transport public key (cached; `force` fetches it again). */
  async publicKey(options: { force?: boolean } = {}): Promise<PublicKeyInfo> {
    return (await this.serverPublicKey(options.force ?? false)).info;
  }

  /**
   * Signs in. Keeps the tokens and the session key. Throws `StrongroomError`: 401
   * INVALID_CREDENTIALS, 403 PASSWORD_CHANGE_REQUIRED (`details.reset_token` for
   * `resetPassword`), 401 2FA_REQUIRED (`details.two_factor_token`), 429 ACCOUNT_LOCKED, 403
   * POLICY_RESTRICTED (`details.rule`), ...
   *
   * `channel` `mobile` or `agent` signs in at `/auth/login/mobile` and needs a device fingerprint
   * (here or in the options); agents send their `location` for the branch geofence.
   */
  async login(input: { username: string; password: string; channel?: SignInChannel; deviceFingerprint?: string; location?: Location }): Promise<SignInResponse> {
    const body: Record<string, unknown> = { username: input.username, password: input.password };
    if (input.deviceFingerprint !== undefined) this.fingerprint = input.deviceFingerprint;
    if (this.fingerprint !== undefined) body.device_fingerprint = this.fingerprint;
    const channel = input.channel ?? 'web';
    if (channel === 'web') return this.request<SignInResponse>('POST', PATHS.login, body, { auth: false, autoRefresh: false });
    if (this.fingerprint === undefined) throw new TypeError(`a ${channel} sign-in needs a device fingerprint (deviceFingerprint)`);
    Object.assign(body, { channel }, input.location ?? {});
    return this.request<SignInResponse>('POST', PATHS.loginMobile, body, { auth: false, autoRefresh: false });
  }

  /** Exchanges the refresh token for a new token pair and a new session key. Concurrent calls share one refresh. */
  async refresh(): Promise<SignInResponse> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Ends this session (or, with `allSessions`, every session of the user) and forgets it. */
  async logout(input: { allSessions?: boolean } = {}): Promise<LogoutResponse> {
    await this.requireSession();
    try {
      const r = await this.request<LogoutResponse>('POST', PATHS.logout, input.allSessions ? { all_sessions: true } : {});
      this.setSessionInternal(null);
      return r;
    } catch (err) {
      if (err instanceof StrongroomError && err.status === 401) this.setSessionInternal(null);
      throw err;
    }
  }

  /** Checks the access token and its session. */
  async validate(): Promise<ValidateResponse> {
    await this.requireSession();
    return this.request<ValidateResponse>('POST', PATHS.validate, {});
  }

  /** Changes the password of the signed-in user; this session stays, the others end. */
  async changePassword(input: { currentPassword: string; newPassword: string }): Promise<PasswordChangedResponse> {
    await this.requireSession();
    return this.request<PasswordChangedResponse>('POST', PATHS.password, { current_password: input.currentPassword, new_password: input.newPassword });
  }

  /**
   * Finishes a forced password change with the `reset_token` of a 403 PASSWORD_CHANGE_REQUIRED.
   * Every session of the user ends: sign in again with the new password.
   */
  async resetPassword(input: { resetToken: string; newPassword: string }): Promise<PasswordChangedResponse> {
    const r = await this.request<PasswordChangedResponse>('POST', PATHS.resetPassword, { reset_token: input.resetToken, new_password: input.newPassword }, { auth: false, autoRefresh: false });
    if (this.current) this.setSessionInternal(null);
    return r;
  }

  // ---- Second factors (after a 401 2FA_REQUIRED) ---------------------------------------------------

  /** Finishes a sign-in with a code from the authenticator app; keeps the tokens and the session key. */
  async verifyTotp(input: { twoFactorToken: string; code: string }): Promise<SignInResponse> {
    return this.request<SignInResponse>('POST', PATHS.totpVerifyLogin, { two_factor_token: input.twoFactorToken, code: input.code }, { auth: false, autoRefresh: false });
  }

  /** Finishes a sign-in with one of the ten single-use backup codes. */
  async verifyBackupCode(input: { twoFactorToken: string; code: string }): Promise<SignInResponse> {
    return this.request<SignInResponse>('POST', PATHS.totpVerifyBackupCode, { two_factor_token: input.twoFactorToken, code: input.code }, { auth: false, autoRefresh: false });
  }

  /** Sends a one-time code by email or SMS for the sign-in behind `twoFactorToken`. */
  async requestCode(input: { twoFactorToken: string; method: 'email' | 'sms' | 'push' }): Promise<CodeSent> {
    return this.request<CodeSent>('POST', PATHS.codeRequest, { two_factor_token: input.twoFactorToken, method: input.method }, { auth: false, autoRefresh: false });
  }

  /** Finishes a sign-in with the one-time code that `requestCode` sent. */
  async validateCode(input: { twoFactorToken: string; code: string }): Promise<SignInResponse> {
    return this.request<SignInResponse>('POST', PATHS.codeValidate, { two_factor_token: input.twoFactorToken, code: input.code }, { auth: false, autoRefresh: false });
  }

  /**
   * Signs in with a passkey: with no `twoFactorToken` without a password (the device offers the
   * passkeys it holds; the one chosen names the account); with the `twoFactorToken` of a 401
   * 2FA_REQUIRED whose `methods` include `passkey`, as the second factor. `get` runs the device's
   * ceremony (default: the browser's `navigator.credentials.get`). Keeps the tokens and the session
   * key like `login`. A passwordless failure of any kind is 401 INVALID_CREDENTIALS; as a second
   * factor, 401 PASSKEY_INVALID or 400 PASSKEY_CHALLENGE_INVALID.
   */
  async signInWithPasskey(input: { get?: PasskeyGet; twoFactorToken?: string; signal?: AbortSignal } = {}): Promise<SignInResponse> {
    return signInWithPasskey(this.host, input);
  }

  /** Steps the signed-in session up with one of the owner's passkeys (before a sensitive change: 403 STEP_UP_REQUIRED). */
  async stepUpWithPasskey(input: { get?: PasskeyGet; signal?: AbortSignal } = {}): Promise<StepUpResponse> {
    return stepUpWithPasskey(this.host, input);
  }

  // ---- Your data --------------------------------------------------------------------------------

  /**
   * Everything the service holds about the signed-in person (`GET /api/v1/auth/gdpr/export`; the
   * server asks for a sign-in or step-up in the last 10 minutes). `json`: the document. `csv`: the
   * ZIP's bytes. Under transport encryption the server seals the ZIP inside JSON (base64, with its
   * SHA-256): this opens the envelope, checks the digest and returns the bytes; without a session
   * key the ZIP comes as it is.
   */
  async downloadExport(format: 'json'): Promise<Record<string, unknown>>;
  async downloadExport(format: 'csv'): Promise<Uint8Array>;
  async downloadExport(format: 'json' | 'csv'): Promise<Record<string, unknown> | Uint8Array> {
    const body = await this.request<unknown>('GET', `${PATHS.gdprExport}?format=${format}`);
    if (format === 'json' || body instanceof Uint8Array) return body as Record<string, unknown> | Uint8Array;
    if (!isRecord(body) || typeof body.data !== 'string' || typeof body.sha256 !== 'string') throw new StrongroomError(200, 'INVALID_RESPONSE', 'The export is not in the expected envelope.');
    const bytes = fromBase64(body.data);
    const digest = Array.from(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
    if (digest !== body.sha256) throw new StrongroomError(200, 'INVALID_RESPONSE', 'The export\'s bytes do not match their SHA-256.');
    return bytes;
  }

  // ---- The real-time channel ------------------------------------------------------------------

  /**
   * Subscribes to the real-time channel (`GET /api/v1/ws`): the handlers get each event of the
   * signed-in user, decrypted with the session key, in order, once; the subscription reconnects
   * and resumes after the last event it saw, refreshing the tokens when the server asks (4002,
   * 4003). Needs a session key (the client encrypts). On Node 20 pass `options.WebSocket` (the
   * `ws` package); browsers and Node 22+ have one.
   */
  realtime(handlers: RealtimeHandlers, options: RealtimeOptions = {}): RealtimeSubscription {
    const url = new URL(this.baseUrl + REALTIME_PATH);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return new RealtimeSubscription({
      url: url.toString(),
      credentials: async () => {
        await this.pendingSession;
        const s = this.current;
        const key = s ? await this.sessionKey(s) : null;
        return s && key ? { accessToken: s.accessToken, key, fingerprint: this.fingerprint } : null;
      },
      refresh: () => this.refresh(),
    }, handlers, options);
  }

  // ---- Any route ------------------------------------------------------------------------------

  /**
   * Calls any route of the platform; `path` starts with `/` and may carry a query string. The
   * encryption is picked by path (pre-auth, session or none); holding a session key, every call
   * is sent with `x-encrypted: true`, GETs included (a server that enforces transport encryption
   * refuses an unflagged GET of personal data: profile, consents, export). Resolves to the
   * decrypted JSON answer (a `Uint8Array` for a non-JSON answer, `undefined` for an empty one);
   * throws `StrongroomError` for any error answer.
   */
  async request<T = unknown>(method: HttpMethod | (string & {}), path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    if (!path.startsWith('/')) throw new TypeError('request: path must start with "/"');
    await this.pendingSession;
    const m = method.toUpperCase();
    const mode = this.modeOf(m, path);
    const withAuth = options.auth ?? this.current !== null;
    const sentWith = this.current;
    let ex = await this.exchange(m, path, body, mode, withAuth, options);

    if (mode === 'preauth' && isError(ex, 400, 'DECRYPTION_FAILED')) {
      // The server may have rotated (and revoked) its key: fetch it again, retry once.
      this.serverKey = undefined;
      ex = await this.exchange(m, path, body, mode, withAuth, options);
    }
    if (withAuth && isError(ex, 401, 'TOKEN_EXPIRED') && (options.autoRefresh ?? this.autoRefresh) && this.current) {
      // Refresh once, unless a concurrent call has already replaced the tokens this one used.
      if (this.current === sentWith) await this.refresh();
      ex = await this.exchange(m, path, body, mode, withAuth, options);
    }
    if (ex.status < 200 || ex.status >= 300) throw StrongroomError.fromBody(ex.status, ex.body);

    // A pre-auth answer with a token pair is a sign-in (login, refresh, a completed second
    // factor, or a first factor's enrolment that finished one under `sign_in`): its AES key is
    // the session key (null when the client does not encrypt).
    if (BODY_METHODS.has(m) && this.preAuthRoutes.includes(normalisePath(path))) {
      const signIn = isTokenPair(ex.body) ? ex.body : isRecord(ex.body) && isTokenPair(ex.body.sign_in) ? ex.body.sign_in : null;
      if (signIn) this.adopt(signIn, ex.answerKey);
    }
    return ex.body as T;
  }

  // ---- Session state ----------------------------------------------------------------------------

  get signedIn(): boolean {
    return this.current !== null;
  }

  /** The key_id of the cached server public key, if any. */
  get serverKeyId(): string | null {
    return this.serverKey?.info.key_id ?? null;
  }

  get deviceFingerprint(): string | undefined {
    return this.fingerprint;
  }

  /** A copy of the session to persist; mind that it holds the session key and the tokens. */
  getSession(): StoredSession | null {
    const s = this.current;
    if (!s) return null;
    return { accessToken: s.accessToken, refreshToken: s.refreshToken, sessionId: s.sessionId, sessionKey: s.rawKey ? toBase64(s.rawKey) : null, accessTokenExpiresAt: s.accessTokenExpiresAt };
  }

  /** Resumes a saved session, or forgets the current one (`null`) without calling the server. */
  async setSession(session: StoredSession | null): Promise<void> {
    if (session === null) {
      this.setSessionInternal(null);
      return;
    }
    this.pendingSession = this.restore(session);
    await this.pendingSession;
  }

  // ---- Internals ------------------------------------------------------------------------------

  private async restore(s: StoredSession): Promise<void> {
    const rawKey = s.sessionKey === null ? null : fromBase64(s.sessionKey);
    this.setSessionInternal({
      accessToken: s.accessToken, refreshToken: s.refreshToken, sessionId: s.sessionId, accessTokenExpiresAt: s.accessTokenExpiresAt,
      rawKey, key: rawKey ? await aesKey(rawKey) : null,
    }, false);
  }

  private async requireSession(): Promise<Session> {
    await this.pendingSession;
    if (!this.current) throw new StrongroomError(0, 'NOT_SIGNED_IN', 'Sign in first.');
    return this.current;
  }

  private async doRefresh(): Promise<SignInResponse> {
    const s = await this.requireSession();
    try {
      return await this.request<SignInResponse>('POST', PATHS.refresh, { refresh_token: s.refreshToken }, { auth: false, autoRefresh: false });
    } catch (err) {
      // A refused refresh token cannot be used again: the session is over for this client.
      if (err instanceof StrongroomError && err.status === 401 && this.current === s) this.setSessionInternal(null);
      throw err;
    }
  }

  private adopt(body: SignInResponse, rawKey: Uint8Array<ArrayBuffer> | null): void {
    const next: Session = {
      accessToken: body.access_token, refreshToken: body.refresh_token, sessionId: body.session_id,
      accessTokenExpiresAt: Date.now() + (typeof body.expires_in === 'number' ? body.expires_in * 1000 : 0),
      rawKey, key: null,
    };
    this.setSessionInternal(next);
  }

  private setSessionInternal(s: Session | null, notify = true): void {
    this.current = s;
    if (notify && this.onSessionChange) this.onSessionChange(this.getSession());
  }

  private modeOf(method: string, path: string): EncryptionMode {
    if (!this.encrypt) return 'none';
    const mode = encryptionModeOf(path, { preAuthRoutes: this.preAuthRoutes, exemptPaths: this.exemptPaths });
    // A pre-auth body is what carries the client's key: without a body there is nothing to encrypt.
    if (mode === 'preauth' && !BODY_METHODS.has(method)) return 'none';
    return mode;
  }

  private async clientKeys(): Promise<ClientKeyPair> {
    this.keyPair ??= generateClientKeyPair().catch((err: unknown) => {
      this.keyPair = undefined;
      throw err;
    });
    return this.keyPair;
  }

  private async serverPublicKey(force: boolean): Promise<CachedKey> {
    const now = Date.now();
    const k = this.serverKey;
    if (!force && k && now - k.fetchedAt < this.maxKeyAge && k.expiresAt - now > this.keyMargin) return k;
    this.serverKeyLoading ??= this.fetchPublicKey().finally(() => {
      this.serverKeyLoading = undefined;
    });
    return this.serverKeyLoading;
  }

  private async fetchPublicKey(): Promise<CachedKey> {
    const ex = await this.exchange('GET', PATHS.publicKey, undefined, 'none', false, {});
    if (ex.status !== 200) throw StrongroomError.fromBody(ex.status, ex.body);
    const info = ex.body;
    if (!isRecord(info) || typeof info.public_key !== 'string' || typeof info.key_id !== 'string' || typeof info.expires_at !== 'string') {
      throw new StrongroomError(ex.status, 'INVALID_RESPONSE', 'The public key answer is not in the documented shape.');
    }
    let key: CryptoKey;
    try {
      key = await importServerPublicKey(info.public_key);
    } catch (err) {
      throw new StrongroomError(ex.status, 'INVALID_RESPONSE', 'The server public key could not be imported.', {}, { cause: err });
    }
    const expiresAt = Date.parse(info.expires_at);
    this.serverKey = { info: info as unknown as PublicKeyInfo, key, expiresAt: Number.isNaN(expiresAt) ? 0 : expiresAt, fetchedAt: Date.now() };
    return this.serverKey;
  }

  private async sessionKey(s: Session): Promise<CryptoKey | null> {
    if (!s.rawKey) return null;
    s.key ??= await aesKey(s.rawKey);
    return s.key;
  }

  /** One HTTP exchange: encrypts, sends, reads and decrypts. Does not throw for error statuses. */
  private async exchange(method: string, path: string, body: unknown, mode: EncryptionMode, withAuth: boolean, options: RequestOptions): Promise<Exchange> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers, ...options.headers };
    if (this.fingerprint !== undefined) headers['x-device-fingerprint'] = this.fingerprint;
    const session = this.current;
    if (withAuth) {
      if (!session) throw new StrongroomError(0, 'NOT_SIGNED_IN', 'Sign in first.');
      headers.authorization = `Bearer ${session.accessToken}`;
    }

    let payload: string | undefined;
    let clientKeys: ClientKeyPair | undefined;
    let key: CryptoKey | null = null;
    let flagged = false;
    if (mode === 'preauth') {
      if (body !== undefined && !isRecord(body)) throw new TypeError('request: the body of a pre-auth route is a JSON object');
      clientKeys = await this.clientKeys();
      const server = await this.serverPublicKey(false);
      const json = JSON.stringify({ ...body, client_public_key: clientKeys.publicKeyPem });
      payload = JSON.stringify({ data: await sealPreAuth(server.key, json, server.info.key_id) });
      flagged = true;
    } else if (mode === 'session' && session && (key = await this.sessionKey(session))) {
      flagged = true;
      if (BODY_METHODS.has(method)) payload = JSON.stringify({ data: await sealSession(key, JSON.stringify(body ?? {})) });
    } else if (mode === 'session' && BODY_METHODS.has(method)) {
      throw new StrongroomError(0, 'NOT_SIGNED_IN', 'This request must be encrypted under a session key: sign in first.');
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
    }
    if (flagged) headers['x-encrypted'] = 'true';
    if (payload !== undefined) headers['content-type'] = 'application/json';

    let res: Response;
    try {
      const init: RequestInit = { method, headers };
      if (payload !== undefined) init.body = payload;
      if (options.signal) init.signal = options.signal;
      res = await this.fetchImpl(this.baseUrl + path, init);
    } catch (err) {
      throw new StrongroomError(0, 'NETWORK_ERROR', `The request to ${normalisePath(path)} failed: ${err instanceof Error ? err.message : String(err)}`, {}, { cause: err });
    }

    const sealed = (res.headers.get('x-encrypted') ?? '').toLowerCase() === 'true';
    const type = res.headers.get('content-type') ?? '';
    const bytes = new Uint8Array(await res.arrayBuffer());
    const invalid = (message: string, cause?: unknown): StrongroomError => new StrongroomError(res.status, 'INVALID_RESPONSE', message, {}, { cause });
    if (bytes.length === 0) return { status: res.status, body: undefined, answerKey: null, sealed };
    if (!sealed && type !== '' && !type.includes('json')) {
      if (flagged && !res.ok) throw invalid(`HTTP ${res.status} with a ${type} body`);
      return { status: res.status, body: bytes, answerKey: null, sealed };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(bytes));
    } catch (err) {
      throw invalid(`HTTP ${res.status} with a body that is not JSON`, err);
    }
    if (!sealed) {
      // Errors raised before the body is decrypted (enforcement, a bad envelope, a refused
      // token) are plaintext; a successful answer to an encrypted request never is, except on
      // the binary paths.
      const binary = this.binaryFragments.some((f) => normalisePath(path).includes(f));
      if (flagged && res.ok && !binary) throw invalid('The server answered an encrypted request in plaintext.');
      return { status: res.status, body: parsed, answerKey: null, sealed };
    }
    try {
      if (mode === 'preauth' && clientKeys && isPreAuthEnvelope(parsed)) {
        const opened = await openPreAuth(clientKeys.privateKey, parsed);
        return { status: res.status, body: JSON.parse(opened.text), answerKey: opened.key, sealed };
      }
      if (mode === 'session' && key && isSessionEnvelope(parsed)) {
        return { status: res.status, body: JSON.parse(await openSession(key, parsed)), answerKey: null, sealed };
      }
    } catch (err) {
      throw invalid('The encrypted answer could not be decrypted.', err);
    }
    throw invalid('The encrypted answer is not in the expected envelope.');
  }
}

function isError(ex: Exchange, status: number, code: string): boolean {
  return ex.status === status && isRecord(ex.body) && ex.body.error_code === code;
}

function isTokenPair(body: unknown): body is SignInResponse {
  return isRecord(body) && typeof body.access_token === 'string' && typeof body.refresh_token === 'string' && typeof body.session_id === 'string';
}
