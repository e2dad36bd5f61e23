/**
 * Who can read /metrics (issue 9 section 9): in production it is never open on the public port.
 * With MANAGEMENT_PORT it moves to a second listener (loopback by default); with METRICS_TOKEN it
 * stays on the public port behind `Authorization: Bearer`; with neither it is not served. Outside
 * production it stays open (test/api/signin-flow.test.ts reads it without a token).
 * `configure` gives production's behaviour without production's secrets: the policy reads only
 * `config.env` and `config.management`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/platform/config.js';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { expectError } from '../harness/fixtures.js';

const TOKEN = 'm3tr1cs-t0ken-0123456789abcdef0123456789';
const production = (c: Config): Config => ({ ...c, env: 'production' });
const scrape = (t: TestApp, authorization?: string) => t.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });

describe('metrics exposure with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_TOKEN: TOKEN }, configure: production });
  });
  afterAll(async () => t.close());

  it('metrics exposure: in production /metrics on the public port needs the token: none or a wrong one is 401 METRICS_TOKEN_REQUIRED, the right one 200', async () => {
    const wrongSameLength = `${TOKEN.slice(0, -1)}X`;
    for (const authorization of [undefined, `Bearer ${wrongSameLength}`, `Bearer ${TOKEN}x`, `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}`, TOKEN, 'Bearer ']) {
      const res = await scrape(t, authorization);
      expectError(res, 401, 'METRICS_TOKEN_REQUIRED');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.body).not.toContain('strongroom_');
    }
    const ok = await scrape(t, `Bearer ${TOKEN}`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain/);
    expect(ok.body).toContain('strongroom_http_requests_total');
    expect((await scrape(t, `bearer ${TOKEN}`)).statusCode).toBe(200); // the scheme is case-insensitive
  });

  it('the health probes stay open', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});

describe('metrics exposure in production with neither MANAGEMENT_PORT nor METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ configure: production });
  });
  afterAll(async () => t.close());

  it('metrics exposure: /metrics is not served on the public port (404 NOT_FOUND), health still is', async () => {
    expectError(await scrape(t), 404, 'NOT_FOUND');
    expectError(await scrape(t, `Bearer ${TOKEN}`), 404, 'NOT_FOUND');
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(doc.paths).not.toHaveProperty('/metrics');
  });
});

describe('metrics exposure with MANAGEMENT_PORT', () => {
  let t: TestApp;
  let management: App;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { MANAGEMENT_PORT: '0' }, configure: production });
    management = await t.buildManagementApp();
    base = await management.listen({ host: t.s.config.management.host, port: t.s.config.management.port });
  });
  afterAll(async () => {
    await management.close();
    await t.close();
  });

  it('with MANAGEMENT_PORT, /metrics is 404 on the public port and served on the management listener', async () => {
    expectError(await scrape(t), 404, 'NOT_FOUND');
    expect(new URL(base).hostname).toBe('127.0.0.1'); // MANAGEMENT_HOST's default: loopback

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await metrics.text()).toContain('strongroom_http_requests_total');
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it('the management listener serves nothing but the probes and /metrics', async () => {
    for (const path of ['/api/docs', '/api/openapi.json', '/api/v1/auth/public_key']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ status_code: 404, error_code: 'NOT_FOUND' });
    }
    const login = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"a","password":"b"}' });
    expect(login.status).toBe(404);
  });
});

describe('metrics exposure with MANAGEMENT_PORT and METRICS_TOKEN', () => {
  let t: TestApp;
  let management: App;
  beforeAll(async () => {
    t = await createTestApp({ env: { MANAGEMENT_PORT: '0', METRICS_TOKEN: TOKEN }, configure: production });
    management = await t.buildManagementApp();
    await management.ready();
  });
  afterAll(async () => {
    await management.close();
    await t.close();
  });

  it('the token is required on the management listener too', async () => {
    expectError(await management.inject({ method: 'GET', url: '/metrics' }), 401, 'METRICS_TOKEN_REQUIRED');
    expect((await management.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(200);
    expectError(await scrape(t, `Bearer ${TOKEN}`), 404, 'NOT_FOUND');
  });
});
