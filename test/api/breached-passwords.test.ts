/**
 * Threat: a user (or an administrator) sets a password known from other services' data breaches,
 * the first one credential-stuffing tries. With a breach corpus loaded (BREACHED_PASSWORDS_FILTER,
 * a filter imported from a Pwned Passwords file), every way a password is set refuses it with
 * 422 PASSWORD_POLICY_VIOLATION and the rule `breached`, saying nothing about which breach or how
 * often: the signed-in change, the forced change with a reset token (temporary password, admin
 * reset), recovery's new password, and an administrator created with a chosen password. Nothing
 * here depends on the database engine: once, on PostgreSQL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importBreached } from '../../src/credentials/breached/import.js';
import { BREACHED_MESSAGE } from '../../src/credentials/policy.js';
import { AppError } from '../../src/platform/errors.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { admin, bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { pwnedFile } from '../harness/pwned.js';

/** Passes every other rule; in the corpus. */
const BREACHED = 'Hx5#vNq9!bLr3%';
const BREACHED_TOO = 'Gz8&kWp2!dYs6@';
/** In the corpus, and too short. */
const SHORT_BREACHED = 'Qz7#mKw2';
const EXACT = [{ rule: 'breached', message: BREACHED_MESSAGE }];

let t: TestApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-breached-api-'));
  writeFileSync(path.join(dir, 'pwned.txt'), pwnedFile([BREACHED, [BREACHED_TOO, 2], SHORT_BREACHED], { random: 5000, seed: 'api' }));
  const filter = path.join(dir, 'breached.filter');
  await importBreached({ file: path.join(dir, 'pwned.txt'), output: filter, minCount: 1, falsePositiveRate: 0.001 });
  t = await createTestApp({ env: { BREACHED_PASSWORDS_FILTER: filter } });
  await admin(t.s).createUser({ username: 'bp.root', roles: ['admin'], isServiceAccount: true, password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

type Res = Awaited<ReturnType<typeof login>>;

/** 422 PASSWORD_POLICY_VIOLATION; its violations. */
function violations(res: Res): unknown {
  const body = expectError(res, 422, 'PASSWORD_POLICY_VIOLATION');
  expect(Object.keys(body.details as object).sort()).toEqual(['request_id', 'violations']); // nothing about the breach
  return (body.details as { violations: unknown }).violations;
}

const change = (token: string, current: string, next: string): Promise<Res> =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), payload: { current_password: current, new_password: next } });
const reset = (resetToken: string, next: string): Promise<Res> =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/password', payload: { reset_token: resetToken, new_password: next } });

describe('a breached password is refused wherever a password is set', () => {
  it('the signed-in change: 422 with exactly the `breached` rule, no count, no breach named; another password then passes', async () => {
    await seedUser(t.s, 'bp.amina');
    const { access_token } = await signIn(t.app, 'bp.amina');
    expect(violations(await change(access_token, STRONG_PASSWORD, BREACHED))).toEqual(EXACT);
    expect(violations(await change(access_token, STRONG_PASSWORD, BREACHED_TOO))).toEqual(EXACT);
    expect((await change(access_token, STRONG_PASSWORD, OTHER_PASSWORD)).statusCode).toBe(200);
  });

  it('reported beside the other rules it breaks', async () => {
    await seedUser(t.s, 'bp.tariq');
    const { access_token } = await signIn(t.app, 'bp.tariq');
    const rules = (violations(await change(access_token, STRONG_PASSWORD, SHORT_BREACHED)) as Array<{ rule: string }>).map((v) => v.rule);
    expect(rules).toEqual(['min_length', 'breached']);
  });

  it('the forced change after an administrator\'s reset (reset token): 422, and the token still works for a good password', async () => {
    const user = await seedUser(t.s, 'bp.wanjiru');
    const { access_token: adminToken } = await signIn(t.app, 'bp.root');
    const r = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/reset-password`, headers: bearer(adminToken) });
    expect(r.statusCode, r.body).toBe(200);
    const temporary = (r.json() as { temporary_password: string }).temporary_password;
    expect(t.s.breachedPasswords.isBreached(temporary)).toBe(false); // generated passwords meet every rule, this one too
    const forced = expectError(await login(t.app, 'bp.wanjiru', temporary), 403, 'PASSWORD_CHANGE_REQUIRED');
    const token = (forced.details as { reset_token: string }).reset_token;
    expect(violations(await reset(token, BREACHED))).toEqual(EXACT);
    expect((await reset(token, OTHER_PASSWORD)).statusCode).toBe(200);
    await signIn(t.app, 'bp.wanjiru', OTHER_PASSWORD);
  });

  it('recovery\'s new password (the reset token a completed recovery hands out): 422', async () => {
    const user = await seedUser(t.s, 'bp.otieno');
    const { reset_token, reset_with } = await t.s.recovery.resetToken('password', user);
    expect(reset_with).toBe('/api/v1/auth/reset/password');
    expect(violations(await reset(reset_token, BREACHED))).toEqual(EXACT);
    await signIn(t.app, 'bp.otieno'); // nothing changed
  });

  it('an administrator created with a chosen password (create-admin, BOOTSTRAP_ADMIN_PASSWORD): refused, nobody created', async () => {
    const err = await admin(t.s).createUser({ username: 'bp.admin', roles: ['admin'], password: BREACHED }, { uuid: null, username: 'test' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ statusCode: 422, code: 'PASSWORD_POLICY_VIOLATION', details: { violations: EXACT } });
    expect(await t.s.users.findByLogin('bp.admin')).toBeUndefined();
  });

  it('the corpus is exposed for the sign-in risk signal, and checks the password, not its case-folded form', () => {
    expect(t.s.breachedPasswords.enabled).toBe(true);
    expect(t.s.breachedPasswords.isBreached(BREACHED)).toBe(true);
    expect(t.s.breachedPasswords.isBreached(BREACHED.toLowerCase())).toBe(false);
  });
});
