/**
 * Binding a SAML browser sign-in to the browser that started it (docs/decisions.md "SAML",
 * browser binding). `saml/login` with a `relay_state` sets a cookie holding a fresh nonce (256
 * random bits, base64url); the AuthnRequest's row keeps only its SHA-256 (migration 019). The
 * assertion consumer signs in on such a request only when the browser posting the response
 * sends the cookie and its SHA-256 equals the stored one: a response the attacker got for
 * themselves and posts from their page into a victim's browser (login CSRF), or a victim's
 * response to a request the attacker started and sent them (code theft), finds no cookie, or
 * another login's.
 *
 * The cookie's shape follows the configured ACS URL:
 * - `https:`: `__Host-strongroom_saml`, `Path=/; Secure; HttpOnly; SameSite=None`. The IdP's
 *   HTTP-POST to the ACS is a cross-site top-level POST, which carries only SameSite=None
 *   cookies; `__Host-` means no Domain, Path `/` and Secure, so a sibling subdomain cannot plant
 *   its own (cookie tossing).
 * - `http:` (development, tests on 127.0.0.1 where the IdP is same-site): `strongroom_saml`,
 *   `Path=/; HttpOnly; SameSite=Lax` (a browser refuses SameSite=None without Secure).
 *
 * One cookie per browser: of logins started in parallel tabs, the newest wins (the others'
 * responses are refused; sign in again).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_TTL_MS } from './requests.js';

const SECURE_NAME = '__Host-strongroom_saml';
const PLAIN_NAME = 'strongroom_saml';

/** Whether the ACS is served over https (then the cookie is `__Host-`, Secure, SameSite=None). */
const secure = (acsUrl: string): boolean => URL.canParse(acsUrl) && new URL(acsUrl).protocol === 'https:';

/** The cookie's name for an ACS at `acsUrl`. */
export const bindingCookieName = (acsUrl: string): string => (secure(acsUrl) ? SECURE_NAME : PLAIN_NAME);

const attributes = (acsUrl: string, maxAgeSec: number): string =>
  secure(acsUrl) ? `Path=/; Secure; HttpOnly; SameSite=None; Max-Age=${maxAgeSec}` : `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSec}`;

/** SHA-256 of a nonce, as the request's row keeps it. */
export const bindingHash = (nonce: string): Buffer => createHash('sha256').update(nonce, 'utf8').digest();

/**
 * A binding for a browser sign-in being started: the SHA-256 to record with the AuthnRequest,
 * and the `Set-Cookie` value to answer once it is recorded (it replaces any earlier login's).
 */
export function newBrowserBinding(acsUrl: string): { hash: Buffer; setCookie: string } {
  const nonce = randomBytes(32).toString('base64url');
  return { hash: bindingHash(nonce), setCookie: `${bindingCookieName(acsUrl)}=${nonce}; ${attributes(acsUrl, REQUEST_TTL_MS / 1000)}` };
}

/** Deletes the cookie (Max-Age=0): the sign-in it bound is answered, whatever the answer. */
export function clearBinding(reply: FastifyReply, acsUrl: string): void {
  reply.header('set-cookie', `${bindingCookieName(acsUrl)}=; ${attributes(acsUrl, 0)}`);
}

/** The nonce the browser sent (the first cookie of that name), if any. */
export function browserNonce(request: FastifyRequest, acsUrl: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  const name = bindingCookieName(acsUrl);
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/** Whether `nonce` is the one whose SHA-256 the request keeps (in constant time). */
export function bindingMatches(nonce: string | undefined, stored: Buffer | null): boolean {
  if (nonce === undefined || stored === null || stored.length !== 32) return false;
  return timingSafeEqual(bindingHash(nonce), stored);
}
