/**
 * SPEC "Password rules" in full: the policy (each rule named in details.violations), history
 * (ruling 3), expiry by account class, the forced change (ruling 11) and the signed-in change.
 * Time only moves through the ManualClock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { admin, bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Ten distinct passwords that pass every rule. */
const P = Array.from({ length: 10 }, (_, i) => `Vt${i}#qLm${i}!xRp${i}$`);

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  // A service account never expires, so it can administer across every jump of the clock.
  await admin(t.s).createUser({ username: 'pw.root', roles: ['admin'], isServiceAccount: true, password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
});
afterAll(async () => t.close());

type Res = Awaited<ReturnType<typeof login>>;

const adminToken = async (): Promise<string> => (await signIn(t.app, 'pw.root')).access_token;

function change(token: string, current: string, next: string): Promise<Res> {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), payload: { current_password: current, new_password: next } });
}

function reset(resetToken: string, next: string): Promise<Res> {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/password', payload: { reset_token: resetToken, new_password: next } });
}

function validate(token: string): Promise<Res> {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });
}

function rulesOf(res: Res): string[] {
  const body = expectError(res, 422, 'PASSWORD_POLICY_VIOLATION');
  const violations = (body.details as { violations: Array<{ rule: string; message: string }> }).violations;
  for (const v of violations) expect(typeof v.message).toBe('string');
  return violations.map((v) => v.rule);
}

/** Signs in expecting the forced change; returns the reset token and the error details. */
async function changeRequired(username: string, password: string): Promise<{ token: string; details: Record<string, unknown> }> {
  const body = expectError(await login(t.app, username, password), 403, 'PASSWORD_CHANGE_REQUIRED');
  const details = body.details as { reset_token: string };
  expect(typeof details.reset_token).toBe('string');
  return { token: details.reset_token, details };
}

describe('password policy', () => {
  beforeAll(async () => {
    await seedUser(t.s, 'pat.kimani', { email: 'pkimani@bank.example' });
  });

  const cases: Array<[string, string]> = [
    ['min_length', 'Ab1!xyzQ'],
    ['uppercase', 'vt7#qlm2!xrp9$'],
    ['lowercase', 'VT7#QLM2!XRP9$'],
    ['digit', 'Vtx#qLmb!xRpz$'],
    ['symbol', 'Vt7qLm2xRp9Kw'],
    ['keyboard_pattern', 'Vt7#Qwerty!xZ9'],
    ['keyboard_pattern', 'Vt7#x1234!Lmq'],
    ['dictionary_word', 'Password#7Lm2!x'],
    ['contains_personal_data', 'Vt7#PAT.Kimani!'],
    ['contains_personal_data', 'Zz9#pkimaniQ!w'],
    ['max_bytes', `Vt7#qLm2!xRp9$${'€'.repeat(20)}`], // 34 characters, 74 UTF-8 bytes
    ['control_characters', 'Vt7#qLm2\u0007xRp9$'],
  ];

  it.each(cases)('refuses a password breaking %s with 422 naming the rule: %j', async (rule, password) => {
    const { access_token } = await signIn(t.app, 'pat.kimani');
    expect(rulesOf(await change(access_token, STRONG_PASSWORD, password))).toContain(rule);
    await signIn(t.app, 'pat.kimani'); // nothing changed
  });

  it('reports every broken rule at once', async () => {
    const { access_token } = await signIn(t.app, 'pat.kimani');
    expect(rulesOf(await change(access_token, STRONG_PASSWORD, 'abc')).sort()).toEqual(['digit', 'min_length', 'symbol', 'uppercase']);
  });

  it('accepts a compliant password; it expires in 90 days for a regular user', async () => {
    const { access_token } = await signIn(t.app, 'pat.kimani');
    const res = await change(access_token, STRONG_PASSWORD, OTHER_PASSWORD);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'success', password_expires_at: new Date(t.clock.now() + 90 * DAY).toISOString() });
    expectError(await login(t.app, 'pat.kimani', STRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    await signIn(t.app, 'pat.kimani', OTHER_PASSWORD);
    const row = await t.s.database.db.selectFrom('credentials').select(['password_hash', 'password_enc']).where('username', '=', 'pat.kimani').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$2[aby]\$\d\d\$.{53}$/);
    expect(row.password_enc).toBeTruthy();
    expect(row.password_enc).not.toContain(OTHER_PASSWORD);
  });
});

describe('each account class has its own minimum length', () => {
  it('admin and service accounts refuse a password shorter than their class\'s minimum, which a regular account accepts', async () => {
    const own = await createTestApp();
    try {
      // Before any password is checked (the restrictions are cached once read).
      await own.s.database.db.updateTable('password_restrictions').set({ min_length: 16 }).where('account_class', 'in', ['admin', 'service']).execute();
      const fourteen = 'Vt7#qLm2!xRp9$'; // 14 characters, every other rule met
      const create = (username: string, roles: string[], isServiceAccount: boolean) =>
        admin(own.s).createUser({ username, roles, isServiceAccount, password: fourteen }, { uuid: null, username: 'test' });
      for (const [username, roles, service] of [['short.admin', ['admin'], false], ['short.service', ['customer'], true]] as const) {
        const err = await create(username, [...roles], service).then(() => null, (e: unknown) => e as { code: string; details: { violations: { rule: string }[] } });
        expect(err?.code, username).toBe('PASSWORD_POLICY_VIOLATION');
        expect(err!.details.violations.map((v) => v.rule)).toEqual(['min_length']);
        expect(await own.s.users.findByLogin(username)).toBeUndefined();
      }
      expect((await create('long.enough', ['customer'], false)).user.username).toBe('long.enough');
    } finally {
      await own.close();
    }
  });
});

describe('forced change (ruling 11)', () => {
  it('an admin-created user signs in with the temporary password, must change it, and the reset token works once', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(await adminToken()), payload: { username: 'new.teller', email: 'new.teller@bank.example', roles: ['staff'] } });
    expect(created.statusCode, created.body).toBe(201);
    const temporary = (created.json() as { temporary_password: string }).temporary_password;

    const { token, details } = await changeRequired('new.teller', temporary);
    expect(details).toMatchObject({ reason: 'temporary_password', expires_in: 600 });
    // A refused password does not spend the token.
    expect(rulesOf(await reset(token, 'new.teller#Aa1'))).toContain('contains_personal_data');
    const ok = await reset(token, STRONG_PASSWORD);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'success', password_expires_at: new Date(t.clock.now() + 90 * DAY).toISOString() });
    expectError(await reset(token, OTHER_PASSWORD), 401, 'TOKEN_REVOKED');

    expectError(await login(t.app, 'new.teller', temporary), 401, 'INVALID_CREDENTIALS');
    const body = await signIn(t.app, 'new.teller');
    expect(body.user_profile).toMatchObject({ username: 'new.teller', roles: ['staff'] });

    const user = (await t.s.users.findByLogin('new.teller'))!;
    expect(user.must_change_password).toBe(false);
    const required = await t.s.audit.query({ userId: user.uuid, eventType: 'PASSWORD_CHANGE_REQUIRED', limit: 5, offset: 0 });
    expect(required.total).toBe(1);
    const changed = await t.s.audit.query({ userId: user.uuid, eventType: 'PASSWORD_CHANGED', limit: 5, offset: 0 });
    expect(changed.entries.map((e) => e.details.via)).toEqual(['reset_token']);
  });

  it('one reset token used by 10 parallel requests: exactly one changes the password (one history row, one PASSWORD_CHANGED), the nine others are refused', async () => {
    const created = await admin(t.s).createUser({ username: 'reset.burst', roles: ['customer'] }, { uuid: null, username: 'test' });
    const { token } = await changeRequired('reset.burst', created.temporaryPassword!);
    const user = (await t.s.users.findByLogin('reset.burst'))!;
    const historyBefore = (await t.s.database.db.selectFrom('credential_history').select('id').where('user_id', '=', user.id).execute()).length;
    const results = await Promise.all(Array.from({ length: 10 }, () => reset(token, STRONG_PASSWORD)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    // A loser finds the token spent (401 TOKEN_REVOKED), or, checked after the winner stored it,
    // the password in the history (422): refused either way, and nothing written.
    for (const r of results.filter((x) => x.statusCode !== 200)) {
      if (r.statusCode === 401) expectError(r, 401, 'TOKEN_REVOKED');
      else expect(rulesOf(r)).toEqual(['history']);
    }
    expect((await t.s.database.db.selectFrom('credential_history').select('id').where('user_id', '=', user.id).execute()).length).toBe(historyBefore + 1);
    expect((await t.s.audit.query({ userId: user.uuid, eventType: 'PASSWORD_CHANGED', limit: 1, offset: 0 })).total).toBe(1);
  });

  it('the reset token expires after 10 minutes with TOKEN_EXPIRED', async () => {
    const created = await admin(t.s).createUser({ username: 'slow.user', roles: ['customer'] }, { uuid: null, username: 'test' });
    const first = await changeRequired('slow.user', created.temporaryPassword!);
    t.clock.advance(10 * MINUTE + 1000);
    expectError(await reset(first.token, STRONG_PASSWORD), 401, 'TOKEN_EXPIRED');

    const second = await changeRequired('slow.user', created.temporaryPassword!);
    t.clock.advance(10 * MINUTE - 1000);
    expect((await reset(second.token, STRONG_PASSWORD)).statusCode).toBe(200);
    await signIn(t.app, 'slow.user');
  });

  it('an admin reset ends the user\'s sessions and forces a change at the next sign-in', async () => {
    const user = await seedUser(t.s, 'reset.me');
    const session = await signIn(t.app, 'reset.me');
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/reset-password`, headers: bearer(await adminToken()) });
    expect(res.statusCode, res.body).toBe(200);
    const temporary = (res.json() as { temporary_password: string }).temporary_password;
    expect(temporary).not.toBe(STRONG_PASSWORD);

    expectError(await validate(session.access_token), 401, 'SESSION_INVALID');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } }), 401, 'TOKEN_REVOKED');
    expectError(await login(t.app, 'reset.me', STRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');

    const { token, details } = await changeRequired('reset.me', temporary);
    expect(details.reason).toBe('temporary_password');
    expect(rulesOf(await reset(token, STRONG_PASSWORD))).toEqual(['history']); // the old one is in history
    expect((await reset(token, OTHER_PASSWORD)).statusCode).toBe(200);
    await signIn(t.app, 'reset.me', OTHER_PASSWORD);

    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'PASSWORD_RESET_BY_ADMIN', limit: 5, offset: 0 });
    expect(audit.entries[0]?.details).toMatchObject({ sessions_ended: 1 });
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/users/00000000-0000-4000-8000-000000000000/reset-password', headers: bearer(await adminToken()) }), 404, 'USER_NOT_FOUND');
  });
});

describe('change password while signed in', () => {
  it('a wrong current password is 401 INVALID_CREDENTIALS and counts toward the lockout', async () => {
    await seedUser(t.s, 'fumbles');
    const { access_token } = await signIn(t.app, 'fumbles');
    // The counter is the account's: two failed sign-ins plus three failed changes make five.
    for (let i = 0; i < 2; i++) expectError(await login(t.app, 'fumbles', 'Not#The1Passw0rd'), 401, 'INVALID_CREDENTIALS');
    for (let i = 0; i < 2; i++) expectError(await change(access_token, 'Not#The1Passw0rd', OTHER_PASSWORD), 401, 'INVALID_CREDENTIALS');
    const locked = await change(access_token, 'Not#The1Passw0rd', OTHER_PASSWORD);
    expectError(locked, 429, 'ACCOUNT_LOCKED');
    expect(locked.headers['retry-after']).toBe(String(15 * 60));

    expectError(await change(access_token, STRONG_PASSWORD, OTHER_PASSWORD), 429, 'ACCOUNT_LOCKED');
    const signin = await login(t.app, 'fumbles', STRONG_PASSWORD);
    expectError(signin, 429, 'ACCOUNT_LOCKED');
    expect(signin.headers['retry-after']).toBe(String(15 * 60));

    const user = (await t.s.users.findByLogin('fumbles'))!;
    const lockAudit = await t.s.audit.query({ userId: user.uuid, eventType: 'ACCOUNT_LOCKED', limit: 5, offset: 0 });
    expect(lockAudit.total).toBe(1);
    const failed = await t.s.audit.query({ userId: user.uuid, eventType: 'FAILED_LOGIN_ATTEMPT', limit: 10, offset: 0 });
    expect(failed.entries.filter((e) => e.details.reason === 'invalid_current_password')).toHaveLength(3);
  });

  it('success keeps this session, ends the others and is audited as PASSWORD_CHANGED', async () => {
    const user = await seedUser(t.s, 'two.devices');
    const a = await signIn(t.app, 'two.devices');
    const b = await signIn(t.app, 'two.devices');
    const res = await change(a.access_token, STRONG_PASSWORD, OTHER_PASSWORD);
    expect(res.statusCode, res.body).toBe(200);

    expect((await validate(a.access_token)).statusCode).toBe(200);
    expectError(await validate(b.access_token), 401, 'SESSION_INVALID');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: b.refresh_token } }), 401, 'TOKEN_REVOKED');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: a.refresh_token } })).statusCode).toBe(200);
    expectError(await login(t.app, 'two.devices', STRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    await signIn(t.app, 'two.devices', OTHER_PASSWORD);

    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'PASSWORD_CHANGED', limit: 5, offset: 0 });
    expect(audit.total).toBe(1);
    expect(audit.entries[0]).toMatchObject({ status: 'SUCCESS', username: 'two.devices', ip_address: '127.0.0.1', details: { via: 'self_service', other_sessions_ended: 1 } });
  });
});

describe('password history (ruling 3)', () => {
  it('refuses the last 8 and any set in the last 12 months; accepts an older 9th', async () => {
    await seedUser(t.s, 'hana.wekesa', { password: P[0] });
    t.clock.advance(1000);
    let token = (await signIn(t.app, 'hana.wekesa', P[0])).access_token;
    expect((await change(token, P[0]!, P[1]!)).statusCode).toBe(200);

    t.clock.advance(400 * DAY); // P0 and P1 are now more than 12 months old
    const { token: resetToken } = await changeRequired('hana.wekesa', P[1]!);
    expect(rulesOf(await reset(resetToken, P[1]!))).toEqual(['history']);
    expect(rulesOf(await reset(resetToken, P[0]!))).toEqual(['history']); // old, but one of the last 8
    expect((await reset(resetToken, P[2]!)).statusCode).toBe(200);

    token = (await signIn(t.app, 'hana.wekesa', P[2])).access_token;
    for (let i = 3; i <= 8; i++) {
      t.clock.advance(1000);
      const r = await change(token, P[i - 1]!, P[i]!);
      expect(r.statusCode, r.body).toBe(200);
    }
    // History, newest first: P8..P2 (now), P1, P0 (400 days ago). The last 8 are P8..P1.
    for (const old of [P[1]!, P[5]!, P[8]!]) expect(rulesOf(await change(token, P[8]!, old))).toEqual(['history']);
    t.clock.advance(1000);
    expect((await change(token, P[8]!, P[0]!)).statusCode).toBe(200); // 9th, and older than 12 months

    t.clock.advance(1000);
    expect((await change(token, P[0]!, P[9]!)).statusCode).toBe(200);
    // Now the last 8 are P9, P0, P8..P3: P2 is outside them but was set within 12 months.
    expect(rulesOf(await change(token, P[9]!, P[2]!))).toEqual(['history']);
    await signIn(t.app, 'hana.wekesa', P[9]);
  });

  it('counts 12 calendar months, not 360 days', async () => {
    await seedUser(t.s, 'ivan.boundary', { password: P[0] });
    const token = (await signIn(t.app, 'ivan.boundary', P[0])).access_token;
    for (let i = 1; i <= 8; i++) {
      t.clock.advance(1000);
      expect((await change(token, P[i - 1]!, P[i]!)).statusCode).toBe(200);
    }
    t.clock.advance(362 * DAY); // P0 is the 9th, set 362 days ago: still within 12 months
    expect(rulesOf(await reset((await changeRequired('ivan.boundary', P[8]!)).token, P[0]!))).toEqual(['history']);
    t.clock.advance(6 * DAY);
    expect((await reset((await changeRequired('ivan.boundary', P[8]!)).token, P[0]!)).statusCode).toBe(200);
  });
});

describe('password expiry', () => {
  it('a regular user\'s password expires after 90 days: PASSWORD_CHANGE_REQUIRED with a reset token', async () => {
    await seedUser(t.s, 'reg.expiry');
    const start = t.clock.now();
    const first = await signIn(t.app, 'reg.expiry');
    expect((first.user_profile as { password_expires_at: string }).password_expires_at).toBe(new Date(start + 90 * DAY).toISOString());
    expect(first.actions).toEqual([]);

    t.clock.advance(90 * DAY - MINUTE);
    expect((await signIn(t.app, 'reg.expiry')).actions).toEqual(['CHANGE_PASSWORD_SOON']);
    t.clock.advance(MINUTE);
    const { token, details } = await changeRequired('reg.expiry', STRONG_PASSWORD);
    expect(details.reason).toBe('password_expired');
    expect((await reset(token, OTHER_PASSWORD)).statusCode).toBe(200);
    const again = await signIn(t.app, 'reg.expiry', OTHER_PASSWORD);
    expect((again.user_profile as { password_expires_at: string }).password_expires_at).toBe(new Date(t.clock.now() + 90 * DAY).toISOString());
  });

  it('an administrator\'s password expires after 60 days', async () => {
    await seedUser(t.s, 'adm.expiry', { roles: ['admin'] });
    t.clock.advance(60 * DAY - MINUTE);
    await signIn(t.app, 'adm.expiry');
    t.clock.advance(MINUTE);
    expect((await changeRequired('adm.expiry', STRONG_PASSWORD)).details.reason).toBe('password_expired');
  });

  it('a service account\'s password never expires', async () => {
    await admin(t.s).createUser({ username: 'svc.batch', roles: ['customer'], isServiceAccount: true, password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
    const first = await signIn(t.app, 'svc.batch');
    expect((first.user_profile as { password_expires_at: unknown }).password_expires_at).toBeNull();
    t.clock.advance(1000 * DAY);
    const later = await signIn(t.app, 'svc.batch');
    expect(later.actions).toEqual([]);
  });
});
