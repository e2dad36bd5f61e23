/**
 * What the log says about a request that did not succeed, as an operator reads it: a refusal is
 * one info line with the code, method, route, client address and user; a service that cannot be
 * given now (a deliberate 5xx such as 503 PUSH_NOT_CONFIGURED) one warn line without a stack; only
 * an error the code did not mean to raise is logged as an error, with its stack. No token in any.
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
  it('a refusal: one info line with error_code, status, method, route, address and user, no stack, no token', async () => {
    await seedUser(t.s, 'logs.customer');
    const customer = await signIn(t.app, 'logs.customer');
    const out = await logged(async () => expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/users', headers: bearer(customer.access_token), remoteAddress: '192.0.2.7' }), 403, 'PERMISSION_DENIED'));
    const refused = out.filter((l) => l.msg === 'request refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 30, error_code: 'PERMISSION_DENIED', status: 403, method: 'GET', route: '/api/v1/admin/users', ip: '192.0.2.7', user_id: (await t.s.users.findByLogin('logs.customer'))!.uuid });
    expect(JSON.stringify(out)).not.toContain(customer.access_token);
    expect(JSON.stringify(out)).not.toContain('"stack"');
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
