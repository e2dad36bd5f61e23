/**
 * What the log says about requests, as an operator reads it: one access line per request
 * (method, route, status, time, client address, user, request id; a refusal's error_code), never
 * a token or a body; a service that cannot be given now (a deliberate 5xx such as 503
 * PUSH_NOT_CONFIGURED) one warn line more, without a stack; only an error the code did not mean
 * to raise an error line, with its stack. With ACCESS_LOG=0, a refusal keeps a line of its own.
 * An error body's `details.request_id` is its access line's `req_id`.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
const lines: Array<Record<string, unknown>> = [];
let admin: string;
let adminUuid: string;

beforeAll(async () => {
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } }));
  t = await createTestApp({ log });
  adminUuid = (await seedUser(t.s, 'logs.admin', { roles: ['admin'] })).uuid;
  admin = (await signIn(t.app, 'logs.admin')).access_token;
});
afterAll(async () => t.close());

/** The lines logged while `run` ran. */
async function logged(run: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const from = lines.length;
  await run();
  return lines.slice(from);
}

describe('the log lines of requests that do not succeed', () => {
  it('a success: one access line with method, route, status, time, address, user and request id; no token, no body', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(admin), remoteAddress: '192.0.2.8' });
    expect(res.statusCode).toBe(200);
    const out = lines.filter((l) => l.req_id === res.headers['x-request-id']);
    expect(out).toEqual([expect.objectContaining({ level: 30, msg: 'request', method: 'GET', route: '/api/v1/notifications/preferences', status: 200, ip: '192.0.2.8', user_id: adminUuid, ms: expect.any(Number) })]);
    expect(JSON.stringify(out)).not.toContain(admin);
    expect(JSON.stringify(out)).not.toContain('language');
  });

  it('a refusal: its access line carries the error_code; no stack, no token', async () => {
    await seedUser(t.s, 'logs.customer');
    const customer = await signIn(t.app, 'logs.customer');
    let body: Record<string, unknown> = {};
    const out = await logged(async () => (body = expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/users', headers: bearer(customer.access_token), remoteAddress: '192.0.2.7' }), 403, 'PERMISSION_DENIED')));
    expect(out).toEqual([expect.objectContaining({ level: 30, msg: 'request', error_code: 'PERMISSION_DENIED', status: 403, method: 'GET', route: '/api/v1/admin/users', ip: '192.0.2.7', user_id: (await t.s.users.findByLogin('logs.customer'))!.uuid })]);
    expect(out[0]!.req_id).toBe((body.details as { request_id: string }).request_id); // the id the client can quote finds the line
    expect(out[0]).not.toHaveProperty('trace_id'); // tracing is off
    expect(JSON.stringify(out)).not.toContain(customer.access_token);
    expect(JSON.stringify(out)).not.toContain('"stack"');
  });

  it('with ACCESS_LOG=0: no access lines, and a refusal is one info line of its own', async () => {
    const quiet: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { quiet.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } }));
    const q = await createTestApp({ log, env: { ACCESS_LOG: '0' } });
    try {
      expect((await q.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      expectError(await q.app.inject({ method: 'GET', url: '/api/v1/admin/users' }), 401, 'TOKEN_MISSING');
      const requests = quiet.filter((l) => l.method !== undefined);
      expect(requests).toEqual([expect.objectContaining({ msg: 'request refused', error_code: 'TOKEN_MISSING', status: 401, route: '/api/v1/admin/users' })]);
    } finally {
      await q.close();
    }
  });

  it('a service that is not configured (503 PUSH_NOT_CONFIGURED): one warn line, no stack', async () => {
    const out = await logged(async () => expectError(await t.app.inject({ method: 'POST', url: '/api/v1/notifications/send', headers: bearer(admin), payload: { user_id: adminUuid, title: 't', body: 'b' } }), 503, 'PUSH_NOT_CONFIGURED'));
    expect(out.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(out.filter((l) => l.msg === 'request not served')).toEqual([expect.objectContaining({ level: 40, error_code: 'PUSH_NOT_CONFIGURED', status: 503, user_id: adminUuid })]);
    expect(JSON.stringify(out)).not.toContain('"stack"');
  });

  it('an error nobody meant to raise: 500 INTERNAL_ERROR to the client, an error line with the stack for the operator', async () => {
    const users = t.s.users;
    const real = users.findByUuid.bind(users);
    users.findByUuid = () => Promise.reject(new Error('the database fell over'));
    try {
      const out = await logged(async () => expectError(await t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(admin) }), 500, 'INTERNAL_ERROR'));
      const failed = out.filter((l) => l.msg === 'request failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ level: 50, error_code: 'INTERNAL_ERROR', route: '/api/v1/notifications/preferences' });
      expect(JSON.stringify(failed[0])).toContain('the database fell over');
      expect(JSON.stringify(failed[0])).toContain('"stack"');
    } finally {
      users.findByUuid = real;
    }
  });
});
