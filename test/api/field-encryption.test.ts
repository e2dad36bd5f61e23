/**
 * Field encryption at rest (issue 3, section 2; SPEC Transport encryption 9): with
 * DB_FIELD_ENCRYPTION=1 the raw columns hold ciphertext, yet sign-in by email, email uniqueness
 * and the admin API work as before through the blind index; with 0 the same flows work on
 * plaintext. The database is read directly, as someone holding a copy of it would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/app.js';
import { FieldCipher } from '../../src/platform/crypto/field-cipher.js';
import { createTestApp, testSecrets, type TestApp } from '../harness/app.js';
import { admin, bearer, expectError, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';

const INDEX = /^[0-9a-f]{8}:[0-9a-f]{64}$/;

async function createPerson(s: Registry, username: string, email: string, phone: string) {
  const r = await admin(s).createUser({ username, email, phone, fullName: 'Amina Otieno', roles: ['customer'], password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
  return r.user;
}

async function rawUser(s: Registry, id: number) {
  return s.database.db.selectFrom('users').select(['email', 'email_bidx', 'phone', 'phone_bidx', 'username', 'full_name']).where('id', '=', id).executeTakeFirstOrThrow();
}

async function rawSecrets(s: Registry, userId: number, sessionId: string) {
  const cred = await s.database.db.selectFrom('credentials').select('password_enc').where('user_id', '=', userId).executeTakeFirstOrThrow();
  const session = await s.database.db.selectFrom('sessions').select('aes_key').where('session_id', '=', sessionId).executeTakeFirstOrThrow();
  return { passwordEnc: cred.password_enc!, aesKey: session.aes_key! };
}

/** What both settings must keep working: sign-in by email in any case, uniqueness, admin search. */
function behavesTheSame(get: () => TestApp) {
  it('signs in by email, case-insensitively and ignoring surrounding blanks, and answers with the plaintext profile', async () => {
    const t = get();
    for (const id of ['kofi@bank.example', 'KOFI@Bank.Example']) {
      const body = await signIn(t.app, id);
      expect(body.user_profile).toMatchObject({ username: 'kofi.mensah', email: 'Kofi@Bank.example', phone: '+233200000002' });
    }
    expect(await t.s.users.findByLogin('  kofi@bank.example ')).toMatchObject({ username: 'kofi.mensah' });
  });

  it('refuses a duplicate email in another case with 409 USER_EXISTS, and the database refuses it too', async () => {
    const t = get();
    const token = (await signIn(t.app, 'root.admin')).access_token;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(token), payload: { username: 'kofi.other', email: 'KOFI@BANK.EXAMPLE', roles: ['customer'] } });
    expect(expectError(res, 409, 'USER_EXISTS').details).toMatchObject({ fields: ['email'] });
    // The unique blind index, not only the check before the insert (a lost race answers 23505).
    const insert = t.s.database.db.transaction().execute((trx) => t.s.users.create(trx, {
      username: 'kofi.race', email: 'kofi@BANK.example', phone: null, fullName: null, isServiceAccount: false, mustChangePassword: false, now: new Date(),
    }));
    await expect(insert).rejects.toMatchObject({ code: '23505' });
  });

  it('admin search matches username and full name by substring and the email only whole, in any case', async () => {
    const t = get();
    const token = (await signIn(t.app, 'root.admin')).access_token;
    const names = async (q: string): Promise<string[]> => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/users?search=${encodeURIComponent(q)}`, headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { users: Array<{ username: string; email: string | null }> };
      return body.users.map((u) => `${u.username} ${u.email}`);
    };
    expect(await names('KOFI@bank.example')).toEqual(['kofi.mensah Kofi@Bank.example']);
    expect(await names('mensah')).toEqual(['kofi.mensah Kofi@Bank.example']);
    expect(await names('Kofi Mensah')).toEqual(['kofi.mensah Kofi@Bank.example']);
    expect(await names('kofi@bank')).toEqual([]); // part of an email: no match (it may be stored encrypted)
  });

  it('still finds and guards a row written before the blind index existed (plaintext, no index)', async () => {
    const t = get();
    const u = (await admin(t.s).createUser({ username: 'old.timer', email: 'x@y.example', roles: ['customer'], password: STRONG_PASSWORD }, { uuid: null, username: 'test' })).user;
    await t.s.database.db.updateTable('users').set({ email: 'Old.Timer@Bank.example', email_bidx: null }).where('id', '=', u.id).execute();
    expect((await signIn(t.app, 'old.timer@bank.example')).user_profile).toMatchObject({ username: 'old.timer', email: 'Old.Timer@Bank.example' });
    await expect(admin(t.s).createUser({ username: 'old.timer2', email: 'OLD.TIMER@bank.example', roles: ['customer'] }, { uuid: null, username: 'test' }))
      .rejects.toMatchObject({ code: 'USER_EXISTS', details: { fields: ['email'] } });
  });
}

describe('DB_FIELD_ENCRYPTION=1', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { DB_FIELD_ENCRYPTION: '1' } });
    await admin(t.s).createUser({ username: 'root.admin', roles: ['admin'], password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
    const u = await createPerson(t.s, 'kofi.mensah', 'Kofi@Bank.example', '+233200000002');
    await t.s.database.db.updateTable('users').set({ full_name: 'Kofi Mensah' }).where('id', '=', u.id).execute();
  });
  afterAll(async () => t.close());

  it('stores email, phone, the password copy and the session key as ciphertext; username and full name in clear', async () => {
    const user = (await t.s.users.findByLogin('kofi.mensah'))!;
    const signed = await signIn(t.app, 'kofi@bank.example');
    const raw = await rawUser(t.s, user.id);
    expect(raw.email).toMatch(/^fe1:[A-Za-z0-9_-]+$/);
    expect(raw.phone).toMatch(/^fe1:[A-Za-z0-9_-]+$/);
    expect(raw.email_bidx).toMatch(INDEX);
    expect(raw.phone_bidx).toMatch(INDEX);
    expect(`${raw.email} ${raw.phone} ${raw.email_bidx} ${raw.phone_bidx}`.toLowerCase()).not.toMatch(/kofi|bank|233200000002/);
    expect(raw).toMatchObject({ username: 'kofi.mensah', full_name: 'Kofi Mensah' });
    const secrets = await rawSecrets(t.s, user.id, signed.session_id);
    expect(secrets.passwordEnc).toMatch(/^fe1:/);
    expect(secrets.passwordEnc).not.toContain(STRONG_PASSWORD);
    expect(secrets.aesKey).toMatch(/^fe1:/);
    // The same phone number encrypted again gives another ciphertext (random IV), read back alike; it is found by its index.
    const again = t.s.sensitive.protect('+233200000002', 'users.phone');
    expect(again).not.toBe(raw.phone);
    expect(t.s.sensitive.reveal(again, 'users.phone')).toBe('+233200000002');
    expect((await t.s.users.findByPhone('+233200000002'))?.username).toBe('kofi.mensah');
  });

  it('an encrypted value moved to another column or row does not read back', async () => {
    const kofi = (await t.s.users.findByLogin('kofi.mensah'))!;
    const raw = await rawUser(t.s, kofi.id);
    await t.s.database.db.updateTable('users').set({ phone: raw.email }).where('id', '=', kofi.id).execute();
    await expect(t.s.users.findById(kofi.id)).rejects.toThrow('could not be decrypted');
    await t.s.database.db.updateTable('users').set({ phone: raw.phone }).where('id', '=', kofi.id).execute();
    expect((await t.s.users.findById(kofi.id))?.phone).toBe('+233200000002');
  });

  behavesTheSame(() => t);
});

describe('DB_FIELD_ENCRYPTION=0', () => {
  let t: TestApp;
  const secrets = testSecrets();
  beforeAll(async () => {
    t = await createTestApp({ env: { DB_FIELD_ENCRYPTION: '0' }, secrets });
    await admin(t.s).createUser({ username: 'root.admin', roles: ['admin'], password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
    const u = await createPerson(t.s, 'kofi.mensah', 'Kofi@Bank.example', '+233200000002');
    await t.s.database.db.updateTable('users').set({ full_name: 'Kofi Mensah' }).where('id', '=', u.id).execute();
  });
  afterAll(async () => t.close());

  it('stores email, phone and the session key in clear, still indexes the email, and keeps the password copy encrypted', async () => {
    const user = (await t.s.users.findByLogin('kofi.mensah'))!;
    const signed = await signIn(t.app, 'kofi@bank.example');
    expect(await rawUser(t.s, user.id)).toMatchObject({ email: 'Kofi@Bank.example', phone: '+233200000002', email_bidx: expect.stringMatching(INDEX) });
    const secrets = await rawSecrets(t.s, user.id, signed.session_id);
    expect(secrets.aesKey).toMatch(/^[0-9a-f]{64}$/);
    expect(secrets.passwordEnc).toMatch(/^fe1:/); // a reversible password copy is never written in clear (docs/decisions.md)
  });

  it('reads values encrypted while the switch was on', async () => {
    const kofi = (await t.s.users.findByLogin('kofi.mensah'))!;
    const enc = new FieldCipher([secrets.fieldKey], 'columns').encrypt('+233200000099', 'users.phone');
    await t.s.database.db.updateTable('users').set({ phone: enc }).where('id', '=', kofi.id).execute();
    expect((await t.s.users.findById(kofi.id))?.phone).toBe('+233200000099');
    await t.s.database.db.updateTable('users').set({ phone: '+233200000002' }).where('id', '=', kofi.id).execute();
  });

  behavesTheSame(() => t);
});
