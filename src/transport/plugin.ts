/**
 * Transport encryption of request and response bodies (SPEC "Transport encryption" 1-9,
 * ARCHITECTURE ruling 4), as a Fastify plugin other services of the platform can reuse: it
 * depends on its host only through `TransportOptions` (a key source and a way to find the
 * caller's session key).
 *
 * - Pre-auth routes: `{"data": {encrypted_key, ciphertext, nonce, tag, key_id?}}`; the JSON
 *   inside carries `client_public_key`; the answer (errors included) is
 *   `{encrypted_key, ciphertext, nonce, tag}`, its AES key wrapped for the client.
 * - Other routes: `{"data": {iv, ciphertext, tag}}` under the session key; the answer is
 *   `{iv, ciphertext, tag}` under the same key.
 * - Every decryption failure is a plaintext 400 DECRYPTION_FAILED with one identical message.
 * - With enforcement on, a request is refused (plaintext 422 ENCRYPTION_REQUIRED, before any
 *   other work) without `x-encrypted: true` when it has a body (POST, PUT, PATCH) or when its
 *   route answers personal data (`config: { personalData: true }`), whatever the method: such an
 *   answer then only ever leaves sealed under the caller's session key.
 */
import type { KeyObject } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { aesGcmOpen, aesGcmSeal, newAesKey, parseClientPublicKey, rsaUnwrap, sealForRecipient, TransportDecryptError } from './crypto.js';
import { TransportErrors } from './errors.js';
import type { TransportKeySource } from './keys.js';
import type { BodyEnvelope } from '../platform/http/envelope.js';

/**
 * SPEC Transport encryption 3, plus the routes a client calls before it holds a session key
 * (docs/decisions.md): refresh, the forced password change, email/SMS factor and passkey
 * enrolment with a 2FA token, fetching security questions, requesting an MFA reset, the mobile channel's sign-in
 * and validate (the app's first request), setting a PIN with a reset token, account recovery,
 * and the "this was not me" answer to a sign-in notice.
 */
export const DEFAULT_PREAUTH_ROUTES = [
  '/api/v1/auth/login', '/api/v1/auth/validate', '/api/v1/auth/2fa/request', '/api/v1/auth/2fa/verify',
  '/api/v1/auth/2fa/validate', '/api/v1/auth/agent/validate', '/api/v1/auth/password', '/api/v1/transaction/transfer/receipt',
  '/api/v1/2fa/totp/setup', '/api/v1/2fa/totp/verify', '/api/v1/2fa/totp/verify-login', '/api/v1/2fa/totp/verify-backup-code',
  '/api/v1/auth/security-questions/predefined', '/api/v1/auth/security-questions/verify', '/api/v1/auth/security-questions/setup',
  '/api/v1/auth/refresh', '/api/v1/auth/reset/password',
  '/api/v1/2fa/otp/setup', '/api/v1/2fa/otp/verify', '/api/v1/auth/security-questions', '/api/v1/auth/reset/mfa',
  '/api/v1/auth/login/mobile', '/api/v1/auth/validate/mobile', '/api/v1/auth/reset/pin', '/api/v1/auth/ldap/login', '/api/v1/auth/third-party/login',
  '/api/v1/auth/reset/initiate', '/api/v1/auth/reset/verify-identity', '/api/v1/auth/reset/status', '/api/v1/auth/reset/cancel',
  '/api/v1/auth/reset/access-policy', '/api/v1/auth/gdpr/delete/cancel', '/api/v1/auth/security/not-me',
  '/api/v1/auth/passkey/options', '/api/v1/auth/passkey/login', '/api/v1/auth/passkey/2fa/options', '/api/v1/auth/passkey/2fa/verify',
  '/api/v1/passkeys/registration/options', '/api/v1/passkeys/registration/verify',
  '/api/v1/auth/push-approval/request', '/api/v1/auth/push-approval/complete',
];

/**
 * SPEC Transport encryption 6: exact paths; plus the assistant tools' MCP endpoint (MCP clients do
 * not speak the scheme; docs/decisions.md "FAQ"); plus account recovery's "this was not me" page,
 * erasure's "keep my account" page and the sign-in notices' "this was not me" page, with their
 * one-click POSTs (browser pages, with nothing but a single-use token to send); plus the real-time
 * channel's upgrade GET (`/api/v1/ws`: no body to open, and its frames are sealed under the session
 * key by src/realtime itself).
 */
export const DEFAULT_EXEMPT_PATHS = [
  '/api/v1/auth/public_key', '/api/v1/core/translations/fetch', '/api/docs', '/api/redoc', '/api/openapi.json', '/api',
  '/api/health', '/health', '/metrics', '/mcp', '/recovery/cancel', '/gdpr/erasure/cancel', '/security/not-me', '/api/v1/ws',
];

/** Exempt by prefix: the documentation's assets, and the public FAQ (help articles, no account data; docs/decisions.md "FAQ"). */
export const DEFAULT_EXEMPT_PREFIXES = ['/api/docs/', '/api/v1/faq/'];

/** Whether a path is exempt from transport encryption: the exempt paths and prefixes. */
export function isTransportExempt(path: string, exemptPaths: readonly string[] = DEFAULT_EXEMPT_PATHS): boolean {
  return exemptPaths.includes(path) || DEFAULT_EXEMPT_PREFIXES.some((p) => path.startsWith(p));
}

/**
 * USSD traffic is excluded (USSD gateways cannot run the cryptography). It is known by its
 * routes (a `ussd` path segment), never by a header a client could simply send.
 */
export const isUssdPath = (path: string): boolean => path.split('/').includes('ussd');

/** SPEC Transport encryption 7. */
export const DEFAULT_BINARY_FRAGMENTS = [
  'document/download', 'customer/download', 'file/download', 'attachment', 'statement/export', 'simulator/download',
  'report/download', 'qr-code/image',
];

export interface TransportOptions {
  keys: TransportKeySource;
  /** The caller's AES-256 session key (from its bearer token), or null. */
  sessionKey(request: FastifyRequest): Promise<Buffer | null>;
  enforce: boolean;
  /**
   * Refuses a pre-auth envelope seen before (`firstSeen` false): src/transport/replay.ts.
   * `onReplay` is told of each one refused (metrics, log).
   */
  replay?: { firstSeen(encryptedKey: string): Promise<boolean>; onReplay?(request: FastifyRequest): void };
  preAuthRoutes?: string[];
  exemptPaths?: string[];
  binaryFragments?: string[];
}

interface TransportState {
  mode: 'preauth' | 'session';
  /** Key that encrypts the answer; a pre-auth route may replace it (login: the new session key). */
  responseKey: Buffer;
  recipient?: KeyObject;
}

declare module 'fastify' {
  interface FastifyRequest {
    transport: TransportState | null;
  }
  interface FastifyContextConfig {
    /**
     * The route answers a person's personal data (contacts, addresses, devices, a copy of their
     * records): with enforcement on, it is refused without `x-encrypted: true`, even as a GET.
     */
    personalData?: boolean;
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const pathOf = (request: FastifyRequest): string => request.url.split('?')[0]!.replace(/\/+$/, '') || '/';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseJsonObject(buf: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = secureJson.parse(buf.toString('utf8'), undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new TransportDecryptError();
  }
  if (!isObject(value)) throw new TransportDecryptError();
  return value;
}

/** Pre-auth login: answer under the new session key, which the client keeps. */
export function useResponseKey(request: FastifyRequest, key: Buffer): void {
  if (request.transport?.mode === 'preauth') request.transport.responseKey = key;
}

/**
 * `enforce` refuses unencrypted writes, and unflagged requests for personal data, when
 * enforcement is on; `decrypt` replaces an encrypted body by its plaintext; `seal` encrypts the
 * serialized answer. State lives on `request.transport`.
 */
export type Transport = BodyEnvelope;

export function createTransport(opts: TransportOptions): Transport {
  const preAuth = new Set(opts.preAuthRoutes ?? DEFAULT_PREAUTH_ROUTES);
  const exempt = opts.exemptPaths ?? DEFAULT_EXEMPT_PATHS;
  const binary = opts.binaryFragments ?? DEFAULT_BINARY_FRAGMENTS;
  const isExempt = (path: string): boolean => isTransportExempt(path, exempt);
  const isUssd = (_request: FastifyRequest, path: string): boolean => isUssdPath(path);
  const flagged = (request: FastifyRequest): boolean => String(request.headers['x-encrypted'] ?? '').toLowerCase() === 'true';
  const fail = (): Error => TransportErrors.DECRYPTION_FAILED();

  return {
    requestDecorator: 'transport',

    async enforce(request) {
      request.transport = null;
      if (!opts.enforce || flagged(request)) return;
      const personal = request.routeOptions.config?.personalData === true;
      if (!personal && !BODY_METHODS.has(request.method)) return;
      const path = pathOf(request);
      if (isExempt(path) || isUssd(request, path)) return;
      if (!personal) throw TransportErrors.ENCRYPTION_REQUIRED();
      throw TransportErrors.ENCRYPTION_REQUIRED({}, { message: 'This answer holds personal data and leaves only encrypted: send the request with x-encrypted: true under your session key.' });
    },

    async decrypt(request) {
      const path = pathOf(request);
      if (!flagged(request) || isExempt(path) || isUssd(request, path)) return;
      const hasBody = BODY_METHODS.has(request.method);
      try {
        if (preAuth.has(path)) {
          if (!hasBody) throw new TransportDecryptError();
          const data = isObject(request.body) ? request.body.data : undefined;
          if (!isObject(data)) throw new TransportDecryptError();
          const candidates = data.key_id === undefined ? opts.keys.live() : opts.keys.live().filter((k) => k.keyId === data.key_id);
          let aesKey: Buffer | undefined;
          for (const k of candidates) {
            try {
              aesKey = rsaUnwrap(k.privateKey, data.encrypted_key);
              break;
            } catch {
              // try the next live key (a client may still hold the previous public key)
            }
          }
          if (!aesKey) throw new TransportDecryptError();
          const body = parseJsonObject(aesGcmOpen(aesKey, data.nonce, data.ciphertext, data.tag));
          const recipient = parseClientPublicKey(body.client_public_key);
          // Recorded only once it opened: junk cannot fill the cache, and a replay is refused
          // like any envelope that does not open (one answer, no oracle).
          if (opts.replay && !(await opts.replay.firstSeen(data.encrypted_key as string))) {
            opts.replay.onReplay?.(request);
            throw new TransportDecryptError();
          }
          delete body.client_public_key;
          request.body = body;
          request.transport = { mode: 'preauth', responseKey: newAesKey(), recipient };
          return;
        }
        const key = await opts.sessionKey(request);
        if (!key) throw new TransportDecryptError();
        if (hasBody) {
          const data = isObject(request.body) ? request.body.data : undefined;
          if (!isObject(data)) throw new TransportDecryptError();
          request.body = parseJsonObject(aesGcmOpen(key, data.iv, data.ciphertext, data.tag));
        }
        request.transport = { mode: 'session', responseKey: key };
      } catch (err) {
        if (err instanceof TransportDecryptError) throw fail();
        throw err;
      }
    },

    seal(request, reply, payload) {
      const state = request.transport;
      // Matched on the route's pattern, so a path parameter cannot turn sealing off (a wildcard
      // route has no pattern to speak of: its path is used).
      const pattern = request.routeOptions.url;
      const route = pattern === undefined || pattern.includes('*') ? pathOf(request) : pattern;
      if (!state || binary.some((f) => route.includes(f))) return payload;
      const type = String(reply.getHeader('content-type') ?? '');
      if (type !== '' && !type.startsWith('application/json')) return payload;
      const sealed = state.mode === 'preauth' ? sealForRecipient(state.recipient!, state.responseKey, payload) : aesGcmSeal(state.responseKey, payload);
      reply.header('x-encrypted', 'true');
      return JSON.stringify(sealed);
    },
  };
}
