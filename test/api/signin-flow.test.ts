import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUB_CONTEXT } from '../../src/signin/pipeline.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.s, 'amina.otieno', { email: 'amina@bank.example', roles: ['staff'] });
});
afterAll(async () => t.close());

describe('login', () => {
  it('returns SPEC sign-in success response with every field', async () => {
    const body = await signIn(t.app, 'amina.otieno');
    expect(body).toMatchObject({
      token_type: 'bearer',
      expires_in: 3600,
      user: { active: true },
      permissions: ['access_ai_chat'], // staff use the assistant (migration 018)
      actions: [],
      user_profile: { username: 'amina.otieno', email: 'amina@bank.example', roles: ['staff'], channel: 'web', mfa_completed: false },
    });
    expect(body.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof (body.user as { id: unknown }).id).toBe('number');
  });

  it('accepts the email in place of the username, case-insensitively', async () => {
    const body = await signIn(t.app, 'AMINA@bank.example');
    expect((body.user_profile as { username: string }).username).toBe('amina.otieno');
  });

  it('issues an access token with every SPEC claim, kid header and encrypted sub', async () => {
    const body = await signIn(t.app, 'amina.otieno', STRONG_PASSWORD, { device_fingerprint: 'fp-1' });
    const header = decodeProtectedHeader(body.access_token);
    expect(header).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    expect(typeof header.kid).toBe('string');
    const c = decodeJwt(body.access_token);
    for (const claim of ['sub', 'user_id', 'roles', 'permissions', 'iat', 'exp', 'nbf', 'jti', 'iss', 'aud', 'session_id', 'device_fingerprint', 'ip_address']) {
      expect(c, claim).toHaveProperty(claim);
    }
    expect(c.exp! - c.iat!).toBe(3600);
    expect(c.aud).toEqual(['strongroom']);
    expect(c.sub).not.toContain('amina');
    expect(c.sub).toMatch(/^[A-Za-z0-9_-]+$/); // base64url (ruling 8)
    expect(t.s.pipeline['deps'].subCipher.open(c.sub!, SUB_CONTEXT)).toBe('amina.otieno');
    expect(c.ip_address).toMatch(/^[0-9a-f]{64}$/); // HMAC of the IP, not the IP
    expect(c.device_fingerprint).toBe('fp-1');
    expect(c.session_id).toBe(body.session_id);
  });

  it('writes USER_LOGIN to the audit trail with SPEC fields', async () => {
    await signIn(t.app, 'amina.otieno');
    const r = await t.s.audit.query({ eventType: 'USER_LOGIN', limit: 1, offset: 0 });
    expect(r.entries[0]).toMatchObject({ event_type: 'USER_LOGIN', status: 'SUCCESS', username: 'amina.otieno', channel: 'web', ip_address: '127.0.0.1' });
  });
});

describe('validate', () => {
  it('answers the caller, its session, roles and permissions', async () => {
    const s = await signIn(t.app, 'amina.otieno');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ valid: true, session_id: s.session_id, roles: ['staff'], permissions: ['access_ai_chat'] });
  });

  it('refuses a request without a token with TOKEN_MISSING', async () => {
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate' }), 401, 'TOKEN_MISSING');
  });
});

describe('refresh', () => {
  it('rotates: the new pair works and the old refresh token is spent', async () => {
    const s = await signIn(t.app, 'amina.otieno');
    const r1 = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: s.refresh_token } });
    expect(r1.statusCode).toBe(200);
    const next = r1.json() as { access_token: string; refresh_token: string; session_id: string };
    expect(next.session_id).toBe(s.session_id);
    expect(next.refresh_token).not.toBe(s.refresh_token);
    const v = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(next.access_token) });
    expect(v.statusCode).toBe(200);
    const r2 = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: next.refresh_token } });
    expect(r2.statusCode).toBe(200);
  });
});

describe('logout', () => {
  it('revokes the access token and ends the session', async () => {
    const s = await signIn(t.app, 'amina.otieno');
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token) });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ status: 'success', sessions_ended: 1 });
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token) }), 401, 'TOKEN_REVOKED');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: s.refresh_token } }), 401, 'TOKEN_REVOKED');
  });

  it('with all_sessions ends every session of the user', async () => {
    const a = await signIn(t.app, 'amina.otieno');
    const b = await signIn(t.app, 'amina.otieno');
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(a.access_token), payload: { all_sessions: true } });
    expect(out.statusCode).toBe(200);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(b.access_token) }), 401, 'SESSION_INVALID');
  });
});

describe('HTTP conventions', () => {
  it('sets every SPEC common header, with X-Content-SHA256 over the exact body', async () => {
    const res = await login(t.app, 'amina.otieno', 'wrong-password-123', {}, { 'x-correlation-id': 'corr-42' });
    const h = res.headers;
    expect(h['strict-transport-security']).toBe('max-age=31536000; includeSubDomains; preload');
    expect(h['x-content-type-options']).toBe('nosniff');
    expect(h['x-frame-options']).toBe('DENY');
    expect(h['x-xss-protection']).toBe('1; mode=block');
    expect(h['content-security-policy']).toBe("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'");
    expect(h['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(h['permissions-policy']).toBe('geolocation=(), microphone=(), camera=()');
    expect(h['content-type']).toBe('application/json; charset=utf-8');
    expect(h['cache-control']).toBe('no-store, no-cache, must-revalidate, proxy-revalidate');
    expect(h.pragma).toBe('no-cache');
    expect(h.expires).toBe('0');
    expect(h['x-api-version']).toBe('1.0');
    expect(h['x-correlation-id']).toBe('corr-42');
    expect(h['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(h['x-response-time'])).toBeGreaterThanOrEqual(0);
    expect(h['x-content-sha256']).toBe(createHash('sha256').update(res.rawPayload).digest('hex'));
  });

  it('gives each request its own X-Request-ID and generates a correlation id when none is sent', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/health' });
    const b = await t.app.inject({ method: 'GET', url: '/health' });
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    expect(a.headers['x-correlation-id']).toBe(a.headers['x-request-id']);
  });

  it('answers malformed JSON with 400 MALFORMED_REQUEST', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"username": "a", ' });
    expectError(res, 400, 'MALFORMED_REQUEST');
  });

  it('answers a schema failure with 422 VALIDATION_ERROR naming the field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 12, password: 'x' } });
    const body = expectError(res, 422, 'VALIDATION_ERROR');
    expect(JSON.stringify(body.details)).toContain('username');
  });

  it('answers an oversized body with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'a', password: 'x'.repeat(200_000) } });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers an unknown route with 404 NOT_FOUND and the headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nope' });
    expectError(res, 404, 'NOT_FOUND');
    expect(res.headers['x-content-sha256']).toBe(createHash('sha256').update(res.rawPayload).digest('hex'));
  });

  it('serves the OpenAPI document, docs, redoc, health and metrics with the common headers', async () => {
    const doc = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(doc.statusCode).toBe(200);
    const paths = Object.keys((doc.json() as { paths: object }).paths);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/auth/login', '/api/v1/auth/refresh', '/api/v1/auth/logout', '/api/v1/auth/validate', '/api/v1/auth/public_key', '/api/v1/admin/users']));
    for (const url of ['/api/docs/', '/api/redoc', '/health', '/api/health', '/metrics']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['x-content-sha256'], url).toBe(createHash('sha256').update(res.rawPayload).digest('hex'));
      expect(res.headers['x-frame-options'], url).toBe('DENY');
    }
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('strongroom_http_requests_total');
    expect(metrics.body).toContain('strongroom_signins_total');
    expect(metrics.body).toContain('strongroom_active_sessions');
  });

  it('answers public_key on GET and POST alike with SPEC fields', async () => {
    const g = await t.app.inject({ method: 'GET', url: '/api/v1/auth/public_key' });
    const p = await t.app.inject({ method: 'POST', url: '/api/v1/auth/public_key' });
    expect(g.statusCode).toBe(200);
    expect(p.json()).toEqual(g.json());
    expect(g.json()).toMatchObject({ algorithm: 'RSA-2048', public_key: expect.stringContaining('BEGIN PUBLIC KEY') });
  });
});
