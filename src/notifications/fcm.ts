/**
 * Firebase Cloud Messaging HTTP v1 (issue 14 section 2): `POST {PUSH_API_URL}/v1/projects/
 * {project}/messages:send` with an OAuth2 access token got by the JWT-bearer grant (RFC 7523)
 * at the service account's own `token_uri`: a JWT signed RS256 with the account's key (iss its
 * email, aud the token URI, the firebase.messaging scope, one hour), exchanged for a token that
 * is cached until a minute before it expires, one fetch at a time.
 *
 * FCM's answers are mapped to what the caller does (docs/decisions.md "Push delivery"):
 * UNREGISTERED and SENDER_ID_MISMATCH: the token is dead (deactivate it); INVALID_ARGUMENT on the
 * token: a malformed token (deactivate), on anything else: our message is wrong; QUOTA_EXCEEDED,
 * UNAVAILABLE, INTERNAL, a timeout or a network error: retry later (Retry-After honoured);
 * THIRD_PARTY_AUTH_ERROR: the project's APNs or web-push credentials are wrong, an alarm for the
 * operator, not the token's fault; 401 on the send: our access token is stale, fetched again once.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { ServiceAccount } from '../platform/config-push.js';
import { inSpan } from '../platform/observability/tracing.js';

const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

export interface PushMessage {
  token: string;
  title: string;
  body: string;
  data?: Record<string, string>;
  imageUrl?: string;
}

export type PushFailure =
  | 'unregistered' | 'sender_id_mismatch' | 'invalid_token' | 'invalid_message'
  | 'quota_exceeded' | 'unavailable' | 'internal' | 'third_party_auth' | 'auth' | 'timeout' | 'network' | 'unknown';

export type PushResult =
  | { ok: true; messageId: string }
  | { ok: false; reason: PushFailure; retryable: boolean; deactivate: boolean; retryAfterSec?: number; status?: number };

export interface PushProvider {
  send(message: PushMessage): Promise<PushResult>;
}

export interface FcmOptions {
  projectId: string;
  credentials: ServiceAccount;
  apiUrl: string;
  timeoutMs: number;
  clock: Clock;
  log: Logger;
}

const b64url = (v: Buffer | string): string => Buffer.from(v).toString('base64url');

/** A POST to the provider in a span of its own: the server and the status, never the URL's path (the project), a token or the message. */
async function post(name: string, url: string, init: RequestInit): Promise<Response> {
  const u = new URL(url);
  const server = { 'http.request.method': 'POST', 'server.address': u.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
  return inSpan(name, server, async (span) => {
    const res = await fetch(url, { ...init, method: 'POST' });
    span.setAttribute('http.response.status_code', res.status);
    return res;
  });
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), if any. */
function retryAfter(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

interface FcmErrorBody {
  error?: { code?: number; status?: string; message?: string; details?: Array<{ '@type'?: string; errorCode?: string; fieldViolations?: Array<{ field?: string }> }> };
}

/**
 * FCM's error code (its FcmError detail, else the RPC status) and whether the token is what it
 * blames: a BadRequest field violation on `message.token`, or (what FCM mostly sends) only its
 * message "The registration token is not a valid FCM registration token".
 */
function fcmError(body: FcmErrorBody): { code: string; onToken: boolean } {
  const details = body.error?.details ?? [];
  const fcm = details.find((d) => d['@type']?.endsWith('google.firebase.fcm.v1.FcmError'))?.errorCode;
  const onToken = details.some((d) => d.fieldViolations?.some((f) => f.field === 'message.token')) || /registration token/i.test(body.error?.message ?? '');
  return { code: fcm ?? body.error?.status ?? 'UNKNOWN', onToken };
}

/** After the token endpoint refuses our grant (a revoked key), it is not asked again for this long. */
const GRANT_REFUSED_PAUSE_MS = 30_000;

export class FcmClient implements PushProvider {
  private readonly key: KeyObject;
  private cached: { value: string; expiresAt: number } | undefined;
  private fetching: Promise<string> | undefined;
  private refused: { until: number; status: number; error: string } | undefined;

  constructor(private readonly o: FcmOptions) {
    this.key = createPrivateKey(o.credentials.privateKeyPem);
  }

  /** The signed assertion of the JWT-bearer grant (RFC 7523 section 3). */
  private assertion(): string {
    const iat = Math.floor(this.o.clock.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: this.o.credentials.privateKeyId }));
    const claims = b64url(JSON.stringify({ iss: this.o.credentials.clientEmail, scope: FCM_SCOPE, aud: this.o.credentials.tokenUri, iat, exp: iat + 3600 }));
    const signature = b64url(sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), this.key));
    return `${header}.${claims}.${signature}`;
  }

  private async fetchToken(): Promise<string> {
    if (this.refused && this.refused.until > this.o.clock.now()) throw new TokenGrantError(this.refused.status, this.refused.error);
    const res = await post('FCM token', this.o.credentials.tokenUri, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: this.assertion() }).toString(),
      signal: AbortSignal.timeout(this.o.timeoutMs),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string };
    if (!res.ok || typeof body.access_token !== 'string') {
      // The provider's words only (they name no secret); the assertion is never logged. A 4xx is
      // our key's fault: not asked again for a while. A 5xx may pass.
      const error = body.error ?? 'no access_token';
      if (res.status >= 400 && res.status < 500) this.refused = { until: this.o.clock.now() + GRANT_REFUSED_PAUSE_MS, status: res.status, error };
      throw new TokenGrantError(res.status, error);
    }
    this.refused = undefined;
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    this.cached = { value: body.access_token, expiresAt: this.o.clock.now() + Math.max(0, lifetime - 60) * 1000 };
    return body.access_token;
  }

  /** The cached access token, or a new one (one fetch at a time, however many sends wait). */
  private async accessToken(): Promise<string> {
    if (this.cached && this.cached.expiresAt > this.o.clock.now()) return this.cached.value;
    this.fetching ??= this.fetchToken().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  async send(message: PushMessage): Promise<PushResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      let res: Response;
      try {
        const token = await this.accessToken();
        res = await post('FCM send', `${this.o.apiUrl}/v1/projects/${encodeURIComponent(this.o.projectId)}/messages:send`, {
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            message: {
              token: message.token,
              notification: { title: message.title, body: message.body, ...(message.imageUrl === undefined ? {} : { image: message.imageUrl }) },
              ...(message.data === undefined ? {} : { data: message.data }),
            },
          }),
          signal: AbortSignal.timeout(this.o.timeoutMs),
        });
      } catch (err) {
        if (err instanceof TokenGrantError) {
          this.o.log.error({ status: err.status, provider_error: err.providerError }, 'Push: the provider refused the service account\'s token grant; check PUSH_CREDENTIALS_PATH');
          return { ok: false, reason: 'auth', retryable: err.status >= 500, deactivate: false, status: err.status };
        }
        const timeout = (err as Error).name === 'TimeoutError';
        return { ok: false, reason: timeout ? 'timeout' : 'network', retryable: true, deactivate: false };
      }
      if (res.ok) {
        const body = (await res.json().catch(() => ({}))) as { name?: string };
        return { ok: true, messageId: typeof body.name === 'string' ? body.name : '' };
      }
      const body = (await res.json().catch(() => ({}))) as FcmErrorBody;
      const { code, onToken } = fcmError(body);
      if (res.status === 401 && code !== 'THIRD_PARTY_AUTH_ERROR' && attempt === 0) {
        this.cached = undefined; // revoked or expired early: fetch a new one, once
        continue;
      }
      const after = retryAfter(res.headers.get('retry-after'), this.o.clock.now());
      const fail = (reason: PushFailure, retryable: boolean, deactivate = false): PushResult => ({ ok: false, reason, retryable, deactivate, status: res.status, ...(after === undefined ? {} : { retryAfterSec: after }) });
      switch (code) {
        case 'UNREGISTERED':
          return fail('unregistered', false, true);
        case 'SENDER_ID_MISMATCH':
          return fail('sender_id_mismatch', false, true);
        case 'INVALID_ARGUMENT':
          return onToken ? fail('invalid_token', false, true) : fail('invalid_message', false);
        case 'QUOTA_EXCEEDED':
        case 'RESOURCE_EXHAUSTED':
          return fail('quota_exceeded', true);
        case 'UNAVAILABLE':
          return fail('unavailable', true);
        case 'INTERNAL':
          return fail('internal', true);
        case 'THIRD_PARTY_AUTH_ERROR':
          this.o.log.error({ status: res.status }, 'Push: THIRD_PARTY_AUTH_ERROR: the push project\'s APNs certificate or web-push credentials are missing or wrong (the provider\'s console); tokens are not at fault');
          return fail('third_party_auth', false);
        default:
          return res.status >= 500 ? fail('internal', true) : res.status === 401 || res.status === 403 ? fail('auth', false) : fail('unknown', false);
      }
    }
    return { ok: false, reason: 'auth', retryable: true, deactivate: false, status: 401 };
  }
}

class TokenGrantError extends Error {
  constructor(readonly status: number, readonly providerError: string) {
    super(`token grant refused (${status})`);
  }
}
