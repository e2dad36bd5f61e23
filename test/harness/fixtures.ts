/** Small helpers the HTTP suites share: seeding users and signing in over HTTP. */
import { expect } from 'vitest';
import { AdminService } from '../../src/admin/service.js';
import type { Registry } from '../../src/app.js';
import type { App } from '../../src/platform/http/app.js';

export const STRONG_PASSWORD = 'Vt7#qLm2!xRp9$';
export const OTHER_PASSWORD = 'Hq9#zLt4!mWe7&';

export function admin(s: Registry): AdminService {
  return new AdminService({ db: s.database.db, clock: s.clock, users: s.users, credentials: s.credentials, sessions: s.sessions, attempts: s.attempts, audit: s.audit });
}

export async function seedUser(s: Registry, username: string, opts: { roles?: string[]; password?: string; email?: string; phone?: string } = {}) {
  const r = await admin(s).createUser({ username, email: opts.email ?? null, phone: opts.phone ?? null, roles: opts.roles ?? ['customer'], password: opts.password ?? STRONG_PASSWORD }, { uuid: null, username: 'test' });
  return r.user;
}

export interface SignedIn {
  access_token: string;
  refresh_token: string;
  session_id: string;
  [k: string]: unknown;
}

export async function login(app: App, username: string, password = STRONG_PASSWORD, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password, ...extra }, headers });
}

export async function signIn(app: App, username: string, password = STRONG_PASSWORD, extra: Record<string, unknown> = {}): Promise<SignedIn> {
  const res = await login(app, username, password, extra);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as SignedIn;
}

export function bearer(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, ...extra };
}

/** Asserts SPEC's error body with the exact status and code. */
export function expectError(res: { statusCode: number; json(): unknown; body: string }, status: number, code: string): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ status_code: status, error_code: code });
  expect(typeof body.message).toBe('string');
  expect(typeof body.details).toBe('object');
  return body;
}
