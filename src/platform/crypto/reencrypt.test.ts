import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { BlindIndex } from './blind-index.js';
import { FieldCipher } from './field-cipher.js';
import { FieldReencryption, ReencryptionError, type BatchDone } from './reencrypt.js';

/** The re-encryption pass on an in-memory PGlite, with rows written by hand under key A. */
const A = randomBytes(32);
const B = randomBytes(32);
const columnsUnder = (k: Buffer): FieldCipher => new FieldCipher([k], 'columns');

let h: DatabaseHandle;
beforeAll(async () => {
  h = await openDatabase({ kind: 'pglite-memory' }, pino({ level: 'silent' }));
  await h.migrate();
});
beforeEach(async () => {
  await sql`TRUNCATE users, jwt_signing_keys, transport_keys, ldap_config, saml_sp_keys, device_tokens CASCADE`.execute(h.db);
});
afterAll(async () => h.close());

const now = new Date();

/** A user as UserStore writes it under `key` (or in clear, unindexed, as before migrations 003 and 009). */
async function user(name: string, email: string | null, phone: string | null, key: Buffer | 'legacy' = A): Promise<number> {
  const c = key === 'legacy' ? null : columnsUnder(key);
  const row = await h.db.insertInto('users').values({
    username: name,
    email: email === null || !c ? email : c.encrypt(email, 'users.email'),
    email_bidx: email === null || key === 'legacy' ? null : new BlindIndex([key]).of(email),
    phone: phone === null || !c ? phone : c.encrypt(phone, 'users.phone'),
    phone_bidx: phone === null || key === 'legacy' ? null : new BlindIndex([key]).of(phone),
    full_name: null, created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

async function session(userId: number, key: Buffer = A): Promise<string> {
  const id = randomUUID();
  await h.db.insertInto('sessions').values({
    session_id: id, user_id: userId, created_at: now, last_activity: now, expires_at: now, device_fingerprint: '', ip_address: '',
    user_agent: '', is_active: true, mfa_completed: false, channel: 'web', aes_key: columnsUnder(key).encrypt(`key-of-${id}`, 'sessions.aes_key'),
    aes_key_expires_at: null, ended_at: null, end_reason: null,
  }).execute();
  return id;
}

async function seed(): Promise<number[]> {
  const ids = [
    await user('u1', 'One@Bank.example', '+254700000001'),
    await user('u2', 'two@bank.example', null),
    await user('u3', null, '+254700000003'),
    await user('u4', 'four@bank.example', '+254700000004', 'legacy'),
    await user('u5', 'five@bank.example', null),
  ];
  await h.db.insertInto('credentials').values({ user_id: ids[0]!, type: 'password', username: 'u1', password_hash: 'h', password_enc: new FieldCipher([A], 'credential-copy').encrypt('pw-1', 'credentials.password_enc'), changed_at: now }).execute();
  await h.db.insertInto('jwt_signing_keys').values({ kid: 'k1', secret_enc: new FieldCipher([A], 'jwt-keyring').encrypt('secret-1', 'jwt_signing_keys.secret'), created_at: now }).execute();
  await h.db.insertInto('transport_keys').values({ key_id: 't1', private_pem_enc: new FieldCipher([A], 'transport-keyring').encrypt('pem-1', 'transport_keys.private_pem'), public_pem: 'pub', created_at: now, expires_at: now }).execute();
  for (const id of ids.slice(0, 3)) await session(id);
  // A TOTP secret (always encrypted) and an email factor beside it, which has no secret.
  await h.db.insertInto('mfa_factors').values({ user_id: ids[1]!, method: 'totp', status: 'active', secret_enc: new FieldCipher([A], 'mfa-secrets').encrypt('JBSWY3DPEHPK3PXP', 'mfa_factors.secret'), algorithm: 'SHA1', created_at: now, confirmed_at: now }).execute();
  await h.db.insertInto('mfa_factors').values({ user_id: ids[1]!, method: 'email', status: 'active', secret_enc: null, algorithm: null, created_at: now, confirmed_at: now }).execute();
  // The LDAP service account's password (always encrypted).
  await h.db.insertInto('ldap_config').values({
    singleton_key: 'SINGLETON', uri: 'ldaps://ldap.bank.example', bind_dn: 'cn=svc', bind_password_enc: new FieldCipher([A], 'idp-secrets').encrypt('bind-1', 'ldap_config.bind_password'),
    base_dn: 'dc=bank', user_filter: '(uid={username})', attr_mail: 'mail', attr_name: 'cn', group_member_attr: 'memberOf', start_tls: false, ca_cert: null, group_roles: '{}', updated_at: now, updated_by: null,
  }).execute();
  // The SAML service provider's signing key (always encrypted).
  await h.db.insertInto('saml_sp_keys').values({ key_id: 'sp1', private_key_enc: new FieldCipher([A], 'idp-secrets').encrypt('-----BEGIN PRIVATE KEY-----sp', 'saml_sp_keys.private_key'), certificate: 'cert', created_at: now, retired_at: null }).execute();
  // A device push token (encrypted like the email, unique by its blind index).
  await h.db.insertInto('device_tokens').values({ user_id: ids[0]!, push_token: columnsUnder(A).encrypt('fcm-token-0001:APA91b', 'device_tokens.push_token'), push_token_bidx: new BlindIndex([A]).ofExact('fcm-token-0001:APA91b'), platform: 'mobile', device_name: null, created_on: now, updated_on: now }).execute();
  // A date of birth (encrypted like the email) and a new email waiting for its code.
  await h.db.updateTable('users').set({ date_of_birth: columnsUnder(A).encrypt('1988-04-17', 'users.date_of_birth') }).where('id', '=', ids[0]!).execute();
  await h.db.insertInto('profile_contact_changes').values({
    id: randomUUID(), user_id: ids[0]!, kind: 'email', new_value: columnsUnder(A).encrypt('new@bank.example', 'profile_contact_changes.new_value'), destination_masked: 'n***@bank.example',
    code_hash: 'h', created_at: now, expires_at: now, consumed_at: null, superseded_at: null, delivery_status: 'sent',
  }).execute();
  return ids;
}

const oldKeyTotal = async (p: FieldReencryption): Promise<number> => (await p.remaining()).reduce((n, r) => n + r.oldKey, 0);
const rotation = (encryptColumns = true): FieldReencryption => new FieldReencryption({ db: h.db, masters: [B, A], encryptColumns });

/** Everything readable with key B alone, as the plaintext it started as. */
async function expectAllUnderB(): Promise<void> {
  const c = columnsUnder(B);
  const users = await h.db.selectFrom('users').select(['username', 'email', 'email_bidx', 'phone', 'phone_bidx']).orderBy('id').execute();
  const open = (v: string | null, ctx: string): string | null => (v === null ? null : c.decrypt(v, ctx));
  expect(users.map((u) => [u.username, open(u.email, 'users.email'), open(u.phone, 'users.phone')])).toEqual([
    ['u1', 'One@Bank.example', '+254700000001'], ['u2', 'two@bank.example', null], ['u3', null, '+254700000003'],
    ['u4', 'four@bank.example', '+254700000004'], ['u5', 'five@bank.example', null],
  ]);
  for (const u of users) expect(u.email_bidx).toBe(u.email === null ? null : new BlindIndex([B]).of(c.decrypt(u.email, 'users.email')));
  for (const u of users) expect(u.phone_bidx).toBe(u.phone === null ? null : new BlindIndex([B]).of(c.decrypt(u.phone, 'users.phone')));
  const sessions = await h.db.selectFrom('sessions').select(['session_id', 'aes_key']).execute();
  for (const s of sessions) expect(c.decrypt(s.aes_key!, 'sessions.aes_key')).toBe(`key-of-${s.session_id}`);
  const cred = await h.db.selectFrom('credentials').select('password_enc').executeTakeFirstOrThrow();
  expect(new FieldCipher([B], 'credential-copy').decrypt(cred.password_enc!, 'credentials.password_enc')).toBe('pw-1');
  const jwt = await h.db.selectFrom('jwt_signing_keys').select('secret_enc').executeTakeFirstOrThrow();
  expect(new FieldCipher([B], 'jwt-keyring').decrypt(jwt.secret_enc, 'jwt_signing_keys.secret')).toBe('secret-1');
  const tk = await h.db.selectFrom('transport_keys').select('private_pem_enc').executeTakeFirstOrThrow();
  expect(new FieldCipher([B], 'transport-keyring').decrypt(tk.private_pem_enc, 'transport_keys.private_pem')).toBe('pem-1');
  const totp = await h.db.selectFrom('mfa_factors').select(['method', 'secret_enc']).orderBy('method').execute();
  expect(totp.map((f) => [f.method, f.secret_enc === null ? null : new FieldCipher([B], 'mfa-secrets').decrypt(f.secret_enc, 'mfa_factors.secret')])).toEqual([['email', null], ['totp', 'JBSWY3DPEHPK3PXP']]);
  const spKey = await h.db.selectFrom('saml_sp_keys').select('private_key_enc').executeTakeFirstOrThrow();
  expect(new FieldCipher([B], 'idp-secrets').decrypt(spKey.private_key_enc, 'saml_sp_keys.private_key')).toBe('-----BEGIN PRIVATE KEY-----sp');
  const ldap = await h.db.selectFrom('ldap_config').select('bind_password_enc').executeTakeFirstOrThrow();
  expect(new FieldCipher([B], 'idp-secrets').decrypt(ldap.bind_password_enc, 'ldap_config.bind_password')).toBe('bind-1');
  const device = await h.db.selectFrom('device_tokens').select(['push_token', 'push_token_bidx']).executeTakeFirstOrThrow();
  expect(c.decrypt(device.push_token, 'device_tokens.push_token')).toBe('fcm-token-0001:APA91b');
  expect(device.push_token_bidx).toBe(new BlindIndex([B]).ofExact('fcm-token-0001:APA91b'));
  const dob = await h.db.selectFrom('users').select('date_of_birth').where('username', '=', 'u1').executeTakeFirstOrThrow();
  expect(c.decrypt(dob.date_of_birth!, 'users.date_of_birth')).toBe('1988-04-17');
  const change = await h.db.selectFrom('profile_contact_changes').select('new_value').executeTakeFirstOrThrow();
  expect(c.decrypt(change.new_value, 'profile_contact_changes.new_value')).toBe('new@bank.example');
}

describe('FieldReencryption', () => {
  it('moves every encrypted column to the current key, encrypts and indexes legacy rows, and then finds nothing left', async () => {
    await seed();
    const p = rotation();
    expect(await oldKeyTotal(p)).toBe(3 + 2 + 3 + 2 + 3 + 1 + 1 + 1 + 1 + 1 + 1 + 2 + 1 + 1); // emails, phones, email and phone indexes, session keys, password copy, JWT, transport, TOTP, LDAP bind password, SAML SP key, push token and its index, date of birth, pending new email
    expect((await p.remaining()).filter((r) => r.unprotected > 0)).toEqual([
      { table: 'users', column: 'email', oldKey: 3, unprotected: 1 }, { table: 'users', column: 'phone', oldKey: 2, unprotected: 1 },
      { table: 'users', column: 'email_bidx', oldKey: 3, unprotected: 1 }, { table: 'users', column: 'phone_bidx', oldKey: 2, unprotected: 1 },
    ]); // u4, written in clear before migrations 003 and 009
    const reports = await p.run();
    expect(reports.map((r) => [r.table, r.rows])).toEqual([['users', 5], ['credentials', 1], ['sessions', 3], ['jwt_signing_keys', 1], ['transport_keys', 1], ['mfa_factors', 1], ['ldap_config', 1], ['saml_sp_keys', 1], ['profile_contact_changes', 1], ['device_tokens', 1]]);
    expect(reports[0]!.values).toEqual({ email: 4, phone: 3, date_of_birth: 1, email_bidx: 4, phone_bidx: 3 });
    expect((await p.remaining()).every((r) => r.oldKey === 0 && r.unprotected === 0)).toBe(true);
    await expectAllUnderB();
    expect((await p.run()).every((r) => r.rows === 0 && r.batches === 0)).toBe(true); // idempotent
  });

  it('crashes after a batch, loses nothing, and a second run does only what is left', async () => {
    await seed();
    const seen: BatchDone[] = [];
    const crash = rotation().run({ batchSize: 2, onBatch: (b) => seen.push(b), afterBatch: (b) => { if (b.batchesDone === 1) throw new Error('simulated crash'); } });
    await expect(crash).rejects.toThrow('simulated crash');
    expect(seen).toEqual([{ table: 'users', batch: 1, rows: 2, tableRows: 2, tablePending: 5, batchesDone: 1 }]);
    // Mixed: two users under B, the rest under A, and all of it readable with both keys.
    const both = new FieldCipher([B, A], 'columns');
    const users = await h.db.selectFrom('users').select(['email']).where('email', 'is not', null).orderBy('id').execute();
    expect(users.map((u) => both.keyIdOf(u.email!) === both.currentKeyId)).toEqual([true, true, false, false]); // u4 still in clear
    expect(users.map((u) => (both.isEncrypted(u.email!) ? both.decrypt(u.email!, 'users.email') : u.email))).toEqual(['One@Bank.example', 'two@bank.example', 'four@bank.example', 'five@bank.example']);

    const second = await rotation().run({ batchSize: 2 });
    expect(second.map((r) => r.rows)).toEqual([3, 1, 3, 1, 1, 1, 1, 1, 1, 1]);
    await expectAllUnderB();
  });

  it('rolls back the whole batch when a value cannot be decrypted, naming the row and the way out', async () => {
    const ids = [await user('u1', 'a@x.org', null), await user('u2', 'b@x.org', null), await user('u3', 'c@x.org', null, randomBytes(32))];
    const err = await rotation().run({ batchSize: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReencryptionError);
    expect((err as Error).message).toMatch(new RegExp(`^users\\.email of id ${ids[2]} cannot be decrypted .*FIELD_ENCRYPTION_KEYS_PREVIOUS`));
    const keyIds = (await h.db.selectFrom('users').select('email').orderBy('id').execute()).map((u) => columnsUnder(A).keyIdOf(u.email!));
    expect(keyIds.slice(0, 2)).toEqual([columnsUnder(A).currentKeyId, columnsUnder(A).currentKeyId]); // the batch did not commit
  });

  it('with DB_FIELD_ENCRYPTION=0 leaves values in clear, still rotating ciphertext and indexing every email and phone', async () => {
    await user('u1', 'a@x.org', '+254700000001');
    await user('u2', 'b@x.org', '+254700000002', 'legacy');
    const p = rotation(false);
    await p.run();
    const rows = await h.db.selectFrom('users').select(['email', 'email_bidx', 'phone', 'phone_bidx']).orderBy('id').execute();
    const c = columnsUnder(B);
    expect(c.keyIdOf(rows[0]!.email!)).toBe(c.currentKeyId);
    expect(rows[1]).toEqual({ email: 'b@x.org', email_bidx: new BlindIndex([B]).of('b@x.org'), phone: '+254700000002', phone_bidx: new BlindIndex([B]).of('+254700000002') });
    expect((await p.remaining()).every((r) => r.oldKey === 0 && r.unprotected === 0)).toBe(true);
    expect((await rotation(true).remaining()).find((r) => r.column === 'email')).toMatchObject({ oldKey: 0, unprotected: 1 });
  });

  it('stops on two emails that become equal once normalised, saying which', async () => {
    await user('u1', 'dup@x.org', null, 'legacy');
    const second = await user('u2', ' Dup@x.org', null, 'legacy');
    await expect(rotation().run()).rejects.toThrow(new RegExp(`^users id ${second}: its email equals another user's`));
  });

  it('stops on two phone numbers that become equal once separators are removed, saying which', async () => {
    await user('u1', null, '+254700000001', 'legacy');
    const second = await user('u2', null, '+254 700 000 001', 'legacy');
    await expect(rotation().run()).rejects.toThrow(new RegExp(`^users id ${second}: its phone number equals another user's`));
  });
});
