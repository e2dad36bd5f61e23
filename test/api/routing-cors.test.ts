/**
 * Routing and CORS as a client meets them over HTTP: 405 with `Allow` for a known path and a
 * wrong method (404 for an unknown path), OPTIONS and HEAD, query parameters on a route that
 * takes a JSON body, 415 and unparsable bodies that say what to send; CORS_ORIGINS (nothing by
 * default, an allowlist, `*` only outside production), cached preflights, the headers the SDK
 * sends allowed and the ones it reads exposed, never credentials. The browser's side of CORS:
 * test/system/browser-cors.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/platform/config.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { expectError } from '../harness/fixtures.js';

const APP_ORIGIN = 'https://app.bank.example';
const OTHER_ORIGIN = 'https://evil.example';

let plain: TestApp;
let withCors: TestApp;

beforeAll(async () => {
  plain = await createTestApp();
  withCors = await createTestApp({ env: { CORS_ORIGINS: `${APP_ORIGIN},https://admin.bank.example`, CORS_MAX_AGE_SECONDS: '900' } });
});
afterAll(async () => {
  await plain?.close();
  await withCors?.close();
});

const preflight = (t: TestApp, origin: string, url = '/api/v1/auth/login', method = 'POST', headers = 'content-type,x-device-fingerprint,x-encrypted') => t.app.inject({
  method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
});

const corsHeaders = (headers: Record<string, unknown>): string[] => Object.keys(headers).filter((h) => h.startsWith('access-control-')).sort();

describe('methods', () => {
  it('a wrong method on a known path is 405 METHOD_NOT_ALLOWED with Allow and details.allowed', async () => {
    const res = await plain.app.inject({ method: 'DELETE', url: '/api/v1/auth/login' });
    const body = expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('POST, OPTIONS');
    expect(body.details).toMatchObject({ method: 'DELETE', allowed: ['POST', 'OPTIONS'] });
    expect(body.message).toBe('This path does not take DELETE; it takes POST, OPTIONS.');
  });

  it('matches path parameters: PUT on an article is 405, GET and HEAD are allowed there', async () => {
    const res = await plain.app.inject({ method: 'PUT', url: '/api/v1/faq/6d1f4b2a-8c3e-4f5a-9b7d-2e4c6a8f0b13' });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    const categories = await plain.app.inject({ method: 'PATCH', url: '/api/v1/faq/categories' });
    expectError(categories, 405, 'METHOD_NOT_ALLOWED');
    expect(categories.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('an unknown path stays 404 NOT_FOUND, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const res = await plain.app.inject({ method, url: '/api/v1/no-such-thing' });
      expectError(res, 404, 'NOT_FOUND');
      expect(res.headers.allow).toBeUndefined();
    }
  });

  it('HEAD is answered wherever GET is; OPTIONS on a known path is 204 with Allow, on an unknown one 404', async () => {
    const head = await plain.app.inject({ method: 'HEAD', url: '/api/v1/faq/categories' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const options = await plain.app.inject({ method: 'OPTIONS', url: '/api/v1/faq/categories' });
    expect(options.statusCode).toBe(204);
    expect(options.headers.allow).toBe('GET, HEAD, OPTIONS');
    expectError(await plain.app.inject({ method: 'OPTIONS', url: '/api/v1/no-such-thing' }), 404, 'NOT_FOUND');
  });
});

describe('requests that say what to send', () => {
  it('query parameters on a route that takes a JSON body are 422 VALIDATION_ERROR naming them, never echoing their values', async () => {
    const res = await plain.app.inject({ method: 'POST', url: '/api/v1/auth/login?username=ada&password=Secret%23Value1', payload: { username: 'ada', password: 'x' } });
    const body = expectError(res, 422, 'VALIDATION_ERROR');
    expect(body.message).toBe('This route takes no query parameters: send username, password as fields of the JSON body (Content-Type: application/json), not in the URL.');
    expect((body.details as { fields: unknown[] }).fields).toEqual([
      expect.objectContaining({ location: 'querystring', field: 'username', constraint: 'no_query' }),
      expect.objectContaining({ location: 'querystring', field: 'password', constraint: 'no_query' }),
    ]);
    expect(res.body).not.toContain('Secret');
  });

  it('a route with a query of its own still reads it (GET /faq/category/{category}?limit=)', async () => {
    expect((await plain.app.inject({ method: 'GET', url: '/api/v1/faq/category/security?limit=2' })).statusCode).toBe(200);
  });

  it('415 says to send application/json and names what was sent', async () => {
    const xml = await plain.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'text/xml; charset=utf-8' }, payload: '<login/>' });
    const body = expectError(xml, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(body.message).toBe('Send the body as JSON with Content-Type: application/json (this request sent text/xml).');
    expect(body.details).toMatchObject({ sent: 'text/xml', expected: 'application/json' });
  });

  it('a body that is not JSON is 400 MALFORMED_REQUEST saying so, without quoting it', async () => {
    const res = await plain.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"password":"Secret#Value1' });
    const body = expectError(res, 400, 'MALFORMED_REQUEST');
    expect(body.message).toContain('not valid JSON');
    expect(res.body).not.toContain('Secret');
  });
});

describe('CORS', () => {
  it('off by default: no CORS header on an answer or a preflight, whatever the origin', async () => {
    const res = await plain.app.inject({ method: 'GET', url: '/api/v1/auth/public_key', headers: { origin: APP_ORIGIN } });
    expect(res.statusCode).toBe(200);
    expect(corsHeaders(res.headers)).toEqual([]);
    const pre = await preflight(plain, APP_ORIGIN);
    expect(pre.statusCode).toBe(204);
    expect(corsHeaders(pre.headers)).toEqual([]);
  });

  it('an allowed origin\'s preflight: its origin, the methods, the SDK\'s headers, cached, credentials (the SAML binding cookie)', async () => {
    const res = await preflight(withCors, APP_ORIGIN);
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-max-age']).toBe('900');
    expect(String(res.headers['access-control-allow-methods']).split(', ')).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-device-fingerprint', 'x-encrypted', 'x-correlation-id', 'x-gateway-key']));
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(String(res.headers.vary)).toContain('Origin');
  });

  it('an allowed origin\'s answers, errors included, carry its origin and expose the headers the SDK reads', async () => {
    const ok = await withCors.app.inject({ method: 'GET', url: '/api/v1/auth/public_key', headers: { origin: APP_ORIGIN } });
    expect(ok.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    const exposed = String(ok.headers['access-control-expose-headers']).toLowerCase().split(', ');
    expect(exposed).toEqual(expect.arrayContaining(['x-encrypted', 'x-request-id', 'retry-after', 'allow']));
    const refused = await withCors.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: { origin: APP_ORIGIN } });
    expectError(refused, 401, 'TOKEN_MISSING');
    expect(refused.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it('another origin gets no CORS header: its preflight is answered like any OPTIONS (204 with Allow), which a browser refuses', async () => {
    const pre = await preflight(withCors, OTHER_ORIGIN);
    expect(pre.statusCode).toBe(204);
    expect(corsHeaders(pre.headers)).toEqual([]);
    expect(pre.headers.allow).toBe('POST, OPTIONS');
    const res = await withCors.app.inject({ method: 'GET', url: '/api/v1/auth/public_key', headers: { origin: OTHER_ORIGIN } });
    expect(corsHeaders(res.headers)).toEqual([]);
    // An origin is matched exactly: not a prefix, not another scheme or port.
    for (const near of ['https://app.bank.example.evil.example', 'http://app.bank.example', 'https://app.bank.example:8443', 'null']) {
      expect(corsHeaders((await preflight(withCors, near)).headers), near).toEqual([]);
    }
  });

  it('an OPTIONS from an allowed origin that is not a preflight is answered with Allow, not as a preflight', async () => {
    const res = await withCors.app.inject({ method: 'OPTIONS', url: '/api/v1/faq/categories', headers: { origin: APP_ORIGIN } });
    expect(res.statusCode).toBe(204);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('CORS_ORIGINS=* answers any origin with * (outside production), never with credentials', async () => {
    const any = await createTestApp({ env: { CORS_ORIGINS: '*' } });
    try {
      const res = await preflight(any, 'https://anywhere.example');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    } finally {
      await any.close();
    }
  });

  it('configuration: * refused in production with what to set instead; origins must be exact', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y', FIELD_ENCRYPTION_KEY: 'a'.repeat(64), IP_HASH_KEY: 'b'.repeat(64), TRANSPORT_PRIVATE_KEY: 'pem', WEBAUTHN_RP_ID: 'bank.example', WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: 'https://app.bank.example', PUSH_APPROVAL_ANDROID_PACKAGES: 'com.bank.app' };
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
    };
    expect(problems({ ...production, CORS_ORIGINS: '*' })).toEqual([expect.stringMatching(/^CORS_ORIGINS=\* would let a page on any web site .* CORS_ORIGINS=https:\/\/app\.bank\.example/)]);
    expect(problems({ ...production, CORS_ORIGINS: 'http://app.bank.example' })).toEqual(['CORS_ORIGINS: "http://app.bank.example" must use https:// in production']);
    expect(problems({ ...production, CORS_ORIGINS: 'https://app.bank.example' })).toEqual([]);
    expect(problems({ CORS_ORIGINS: 'https://app.bank.example/' })[0]).toContain('must be an exact origin');
    expect(problems({ CORS_ORIGINS: 'app.bank.example' })[0]).toContain('is not an origin');
    expect(loadConfig({ CORS_ORIGINS: '*' }).cors.origins).toBe('*');
    expect(loadConfig({}).cors).toEqual({ origins: [], maxAgeSec: 600 });
  });
});
