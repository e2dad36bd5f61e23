/** Small helpers the HTTP suites share: seeding users and signing in over HTTP. */
import { expect } from 'vitest';
import type { AdminService } from '../../src/admin/service.js';
import type { AuditEvent } from '../../src/audit/service.js';
import type { Registry } from '../../src/app.js';
import type { App } from '../../src/platform/http/app.js';

export const STRONG_PASSWORD = 'Vt7#qLm2!xRp9$';
export const OTHER_PASSWORD = 'Hq9#zLt4!mWe7&';

/** Account administration as the operator's console does it (temporary passwords returned, never emailed). */
export function admin(s: Registry): AdminService {
  return s.consoleAdmin;
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

/**
 * Saves a risk response policy without rules: every sign-in goes through whatever its risk score,
 * for suites about something else (the signals themselves, geolocation). Before the first sign-in.
 */
export async function withoutRiskResponses(s: Registry): Promise<void> {
  await s.database.db.insertInto('risk_policy')
    .values({ singleton_key: 'SINGLETON', policy: JSON.stringify({ rules: [], account_lock_minutes: 30, address_block_minutes: 15 }), updated_at: new Date(), updated_by: null }).execute();
}

/** A sign-in; `extra.channel` `mobile` or `agent` goes to the app's route (which needs `device_fingerprint`). */
export async function login(app: App, username: string, password = STRONG_PASSWORD, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const url = extra.channel === 'mobile' || extra.channel === 'agent' ? '/api/v1/auth/login/mobile' : '/api/v1/auth/login';
  return app.inject({ method: 'POST', url, payload: { username, password, ...extra }, headers });
}

/** How many audit rows of `eventType` a user has. */
export async function auditTotal(s: Registry, userId: string, eventType: AuditEvent): Promise<number> {
  return (await s.audit.query({ userId, eventType, limit: 1, offset: 0 })).total;
}

/**
 * A distinct client address for request `i` of a burst (TEST-NET-2, RFC 5737), as a botnet
 * would send it: the per-address bounds then stay out of the way of what a test is about.
 */
export function botnetAddress(i: number): string {
  return `198.51.100.${(i % 254) + 1}`;
}

/** `login` from a given client address. */
export async function loginFrom(remoteAddress: string, app: App, username: string, password = STRONG_PASSWORD) {
  return app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password }, remoteAddress });
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

/** A password that is never anyone's. */
export const WRONG_PASSWORD = 'Wrong#Passw0rd!';

/** 429 ACCOUNT_LOCKED with a whole-second Retry-After equal to `details.retry_after_seconds` (and to `retryAfter` when given). */
export function expectLocked(res: { statusCode: number; json(): unknown; body: string; headers: Record<string, unknown> }, retryAfter?: number): void {
  const body = expectError(res, 429, 'ACCOUNT_LOCKED');
  const header = Number(res.headers['retry-after']);
  expect(Number.isInteger(header) && header > 0, `Retry-After: ${String(res.headers['retry-after'])}`).toBe(true);
  expect((body.details as { retry_after_seconds: number }).retry_after_seconds).toBe(header);
  if (retryAfter !== undefined) expect(header).toBe(retryAfter);
}

