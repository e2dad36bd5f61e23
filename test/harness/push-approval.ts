/**
 * Push approval in tests: a service with the local FCM fake; a phone with a software P-256 key (as
 * Android Keystore or the Secure Enclave would hold it) and a registered push token, enrolled for
 * a seeded user; the sign-in's and the step-up's requests and completions; the phone's signed
 * answers.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { expect } from 'vitest';
import type { ManualClock } from '../../src/platform/clock.js';
import { answerMessage, enrolMessage, type AnswerDecision } from '../../src/push-approval/crypto.js';
import { createTestApp, type TestApp } from './app.js';
import { startFakeFcm, type FakeFcm } from './fcm.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, withoutRiskResponses } from './fixtures.js';

type Json = Record<string, unknown>;
export interface Phone { key: KeyObject; publicKey: string; token: string }
export interface Enrolled { user: { id: number; uuid: string }; username: string; access: string; phone: Phone; deviceId: string }
export interface Sent { request_id: string; number: number; expires_in: number }

export const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

let seq = 0;

/**
 * A started service for a push-approval suite (call it in `beforeAll`): the FCM fake, 2FA tokens
 * of 15 minutes, no sign-in rate limit, no risk responses; `env` and `clock` as the suite needs.
 */
export async function startApprovalApp(opts: { env?: Record<string, string>; clock?: ManualClock } = {}): Promise<{ t: TestApp; fcm: FakeFcm }> {
  const fcm = await startFakeFcm();
  const t = await createTestApp({ env: { ...fcm.env, TWO_FACTOR_TOKEN_EXPIRE_MINUTES: '15', SIGNIN_RATE_LIMIT_PER_MINUTE: '10000', ...opts.env }, ...(opts.clock ? { clock: opts.clock } : {}) });
  await withoutRiskResponses(t.s);
  return { t, fcm };
}

export function newPhone(): Phone {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { key: privateKey, publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'), token: `approval-kit${++seq}:APA91bH2x7k3Lq9Zr0Xc3A_${'q'.repeat(90)}` };
}

export const signWith = (key: KeyObject, message: string): string => sign('sha256', Buffer.from(message, 'utf8'), { key, dsaEncoding: 'der' }).toString('base64url');

export const wrongOf = (n: number): number => (n === 99 ? 98 : n + 1);

/** The helpers bound to one started service (`t()` is read when called: suites start it in beforeAll). */
export function approvalKit(t: () => TestApp) {
  const post = (url: string, payload: Json, headers: Record<string, string> = {}) => t().app.inject({ method: 'POST', url, payload, headers });

  /** Registers `phone`'s push token in the session of `access`; its device id. */
  async function register(access: string, phone: Phone): Promise<string> {
    const reg = await post('/api/v1/notifications/devices/register', { push_token: phone.token, platform: 'mobile', device_name: 'Pixel 8' }, bearer(access));
    expect(reg.statusCode, reg.body).toBeLessThan(300);
    return reg.json<{ id: string }>().id;
  }

  /** Sets up and confirms `phone`'s key in the session of `access` (which has the step-up or password it needs). */
  async function enrolPhone(access: string, userUuid: string, phone: Phone, deviceId: string, password?: string): Promise<void> {
    const setup = await post('/api/v1/2fa/push-approval/setup', { device_id: deviceId, public_key: phone.publicKey, ...(password ? { current_password: password } : {}) }, bearer(access));
    expect(setup.statusCode, setup.body).toBe(200);
    const { challenge } = setup.json<{ challenge: string }>();
    const confirm = await post('/api/v1/2fa/push-approval/confirm', { signature: signWith(phone.key, enrolMessage(userUuid, challenge)) }, bearer(access));
    expect(confirm.statusCode, confirm.body).toBe(200);
  }

  /** A customer signed in on their phone, the phone's token registered and its key enrolled (their only factor). */
  async function enrolled(prefix = 'approval.kit'): Promise<Enrolled> {
    const username = `${prefix}${++seq}`;
    const user = await seedUser(t().s, username);
    const access = (await signIn(t().app, username)).access_token;
    const phone = newPhone();
    const deviceId = await register(access, phone);
    await enrolPhone(access, user.uuid, phone, deviceId, STRONG_PASSWORD);
    return { user, username, access, phone, deviceId };
  }

  /** The password step of a new sign-in: its 2FA token. */
  async function passwordStep(u: { username: string }): Promise<string> {
    const details = expectError(await login(t().app, u.username, STRONG_PASSWORD, {}, { 'user-agent': FIREFOX }), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(details.methods).toContain('push_approval');
    return details.two_factor_token;
  }

  async function ask(token: string): Promise<Sent> {
    const res = await post('/api/v1/auth/push-approval/request', { two_factor_token: token }, { 'user-agent': FIREFOX });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Sent>();
  }

  /** A step-up request of the session of `access`. */
  async function askStepUp(access: string): Promise<Sent> {
    const res = await post('/api/v1/auth/push-approval/step-up/request', {}, bearer(access, { 'user-agent': FIREFOX }));
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Sent>();
  }

  /** The phone's answer, signed as the app signs it, in the phone's session (`u.access`). */
  const answer = (u: Enrolled, id: string, decision: 'approve' | 'deny', choice?: number, extra: Json = {}, key: KeyObject = u.phone.key, signed: AnswerDecision = extra.report_fraud === true ? 'deny_fraud' : decision) =>
    post(`/api/v1/push-approval/requests/${id}/answer`, { decision, ...(choice === undefined ? {} : { choice }), signature: signWith(key, answerMessage(u.user.uuid, id, signed, choice)), ...extra }, bearer(u.access));

  const complete = (token: string, requestId: string, extra: Json = {}) => post('/api/v1/auth/push-approval/complete', { two_factor_token: token, request_id: requestId, ...extra });
  const completeStepUp = (access: string, requestId: string, extra: Json = {}) => post('/api/v1/auth/push-approval/step-up/complete', { request_id: requestId, ...extra }, bearer(access));

  async function count(table: 'sessions' | 'push_approval_requests' | 'realtime_events', userId: number, where: Json = {}): Promise<number> {
    let q = t().s.database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId);
    for (const [k, v] of Object.entries(where)) q = q.where(k as never, '=', v as never);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  /** The account's count of failed second factors (undefined: none). */
  async function failures(userId: number): Promise<number | undefined> {
    const row = await t().s.database.db.selectFrom('mfa_attempts').select('failed_count').where('user_id', '=', userId).where('factor', '=', 'second_factor').executeTakeFirst();
    return row?.failed_count;
  }

  /** A recent step-up in the session of `access` (as a step-up with the phone would record it). */
  async function steppedUp(access: string): Promise<void> {
    const { session_id } = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString()) as { session_id: string };
    const done = await t().s.database.db.updateTable('sessions').set({ mfa_verified_at: new Date(t().clock.now()) }).where('session_id', '=', session_id).returning('session_id').execute();
    expect(done).toHaveLength(1);
  }

  return { post, register, enrolPhone, enrolled, passwordStep, ask, askStepUp, answer, complete, completeStepUp, count, failures, steppedUp };
}
