/**
 * CORS (`@fastify/cors`): a web app on another origin may call the service when its origin is in
 * CORS_ORIGINS. Nothing configured: no CORS header at all (a browser on another origin cannot
 * read any answer). An origin not in the list gets no CORS header either; its preflight is
 * answered as any OPTIONS is (204 with `Allow`), which the browser treats as a refusal.
 *
 * - The allowed origin is echoed (with `Vary: Origin`), or `*` in development when CORS_ORIGINS
 *   is `*` (refused in production by the configuration).
 * - `Access-Control-Allow-Credentials: true` for a listed origin only, never with `*`: the
 *   service's tokens travel in `Authorization`, but the SAML sign-in's browser binding is a
 *   cookie that a page on a listed origin must be able to receive and send back
 *   (`credentials: 'include'`); an unlisted page never gets credentials.
 * - Preflights are cached (`Access-Control-Max-Age`, CORS_MAX_AGE_SECONDS).
 * - The request headers the SDK and the mobile, USSD and tracing clients send are allowed; the
 *   response headers a client reads (the encryption flag, the request id to quote to support,
 *   `Retry-After`, `Allow`...) are exposed.
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CorsConfig } from '../config-cors.js';

export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What a cross-origin page may send besides the CORS-safelisted headers. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization', 'Content-Type', 'Accept', 'Accept-Language', 'X-Device-Fingerprint', 'X-Encrypted', 'X-Correlation-ID',
  'X-Gateway-Key', 'X-SAML-Code', 'traceparent', 'tracestate',
];

/** What a cross-origin page may read besides the CORS-safelisted response headers. */
export const CORS_EXPOSED_HEADERS = [
  'X-Encrypted', 'X-Request-ID', 'X-Correlation-ID', 'X-Content-SHA256', 'X-Response-Time', 'X-API-Version', 'Retry-After', 'Allow',
];

/** True when CORS_ORIGINS turns CORS on. */
export const corsEnabled = (c: CorsConfig): boolean => c.origins === '*' || c.origins.length > 0;

/**
 * Adds the CORS hook and the preflight route to `app` now, not when the plugin tree loads: the
 * hook must run before the transport-encryption and authentication hooks, so that their
 * refusals carry the CORS headers and the page can read the error body.
 */
export function installCors(app: FastifyInstance, config: CorsConfig): void {
  const allowed = new Set(config.origins === '*' ? [] : config.origins);
  const base: FastifyCorsOptions = {
    methods: CORS_METHODS, allowedHeaders: CORS_ALLOWED_HEADERS, exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: config.maxAgeSec, strictPreflight: false,
  };
  const delegator = (request: FastifyRequest, done: (error: Error | null, options?: FastifyCorsOptions) => void): void => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || (config.origins !== '*' && !allowed.has(origin))) {
      done(null, { origin: false });
      return;
    }
    // A preflight has Access-Control-Request-Method; another OPTIONS is answered with `Allow`.
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    const wildcard = config.origins === '*';
    done(null, { ...base, origin: wildcard ? '*' : origin, credentials: !wildcard, preflight });
  };
  (cors as unknown as (i: FastifyInstance, o: FastifyCorsOptions, next: (err?: Error) => void) => void)(app, { delegator, hideOptionsRoute: true }, (err) => {
    if (err) throw err;
  });
}
