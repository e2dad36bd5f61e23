/**
 * Field-key rotation with a crash in the middle (issue 3, section 4), on PostgreSQL: data
 * written under key A, servers moved to key B with A still readable, the re-encryption pass
 * crashed after a batch and run again, and finally servers holding ONLY key B, for which every
 * user still signs in by email, tokens issued under A still validate, and nothing is left under
 * A. Then the same through the operator CLI (`strongroom rotate-field-key`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { BlindIndex } from '../../src/platform/crypto/blind-index.js';
import { FieldCipher } from '../../src/platform/crypto/field-cipher.js';
import { ENCRYPTED_TABLES, FieldReencryption, keyFingerprint } from '../../src/platform/crypto/reencrypt.js';
import { fieldMasters, type Secrets } from '../../src/platform/crypto/secrets.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { cliEnv, runCli } from '../harness/cli.js';
import { admin, bearer, login, signIn, STRONG_PASSWORD, type SignedIn } from '../harness/fixtures.js';

const A = randomBytes(32);
const B = randomBytes(32);
const base = testSecrets();
const underA: Secrets = { ...base, fieldKey: A };
const rotating: Secrets = { ...base, fieldKey: B, previousFieldKeys: [A] };
const onlyB: Secrets = { ...base, fieldKey: B };
const clock = new ManualClock(Date.now());

const people = Array.from({ length: 7 }, (_, i) => ({ username: `person.${i}`, email: `Person.${i}@Bank.example`, phone: `+25470000001${i}` }));
const LEGACY = people[6]!; // stored as before migration 003: in clear, no blind index

async function app(url: string, secrets: Secrets): Promise<TestApp> {
  return createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
}

/** Users with email and phone, one of them as written before migration 003 (clear, unindexed); each signed in once. */
async function seed(s: Registry, t: TestApp): Promise<Map<string, SignedIn>> {
  for (const p of people) await admin(s).createUser({ ...p, roles: ['customer'], password: STRONG_PASSWORD }, { uuid: null, username: 'test' });
  await s.database.db.updateTable('users').set({ email: LEGACY.email, phone: LEGACY.phone, email_bidx: null }).where('username', '=', LEGACY.username).execute();
  const tokens = new Map<string, SignedIn>();
  for (const p of people) tokens.set(p.username, await signIn(t.app, p.username));
  return tokens;
}

const validate = (t: TestApp, token: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });

/** Every stored value of every encrypted column, with the key id each was written under. */
/** A fresh database whose users, sessions and keys were all written under key A. */
async function seededUnderA(): Promise<{ url: string; tokens: Map<string, SignedIn> }> {
  const url = await freshPostgresDatabase();
  const t = await app(url, underA);
  try {
    return { url, tokens: await seed(t.s, t) };
  } finally {
    await t.close();
  }
}

async function storedKeyIds(s: Registry, key: Buffer): Promise<{ underKey: number; total: number }> {
  let underKey = 0;
  let total = 0;
  for (const t of ENCRYPTED_TABLES) {
    for (const c of t.columns) {
      const cipher = new FieldCipher([key], c.purpose);
      const rows = (await s.database.db.selectFrom(t.table as 'users').select(c.column as 'email').execute()) as Array<Record<string, string | null>>;
      for (const v of rows.map((r) => r[c.column])) {
        if (typeof v !== 'string') continue;
        total++;
        if (cipher.keyIdOf(v) === cipher.currentKeyId) underKey++;
      }
    }
  }
  const index = new BlindIndex([key]);
  const rows = await s.database.db.selectFrom('users').select(['email_bidx', 'phone_bidx']).execute();
  const indexes = rows.flatMap((r) => [r.email_bidx, r.phone_bidx]).filter((v): v is string => v !== null);
  underKey += indexes.filter((v) => index.keyIdOf(v) === index.currentKeyId).length;
  return { underKey, total: total + indexes.length };
}

describe('field-key rotation with a crash in the middle', () => {
  let url: string;
  let tokens: Map<string, SignedIn>;

  beforeAll(async () => {
    ({ url, tokens } = await seededUnderA());
  });

  it('crashes after one batch and leaves the data fully readable, half under A and half under B', async () => {
    const t = await app(url, rotating); // every server now writes under B and still reads A
    try {
      const pass = new FieldReencryption({ db: t.s.database.db, masters: fieldMasters(rotating), encryptColumns: true });
      const crashed = pass.run({ batchSize: 2, afterBatch: (b) => { if (b.batchesDone === 1) throw new Error('simulated crash'); } });
      await expect(crashed).rejects.toThrow('simulated crash');

      const b = await storedKeyIds(t.s, B);
      const a = await storedKeyIds(t.s, A);
      expect(b.underKey).toBeGreaterThan(0);
      expect(a.underKey).toBeGreaterThan(b.underKey);
      for (const p of people) {
        const res = await login(t.app, p.email.toUpperCase());
        expect(res.statusCode, `${p.email}: ${res.body}`).toBe(200);
        expect((res.json() as SignedIn).user_profile).toMatchObject({ username: p.username, email: p.email });
        expect((await validate(t, tokens.get(p.username)!.access_token)).statusCode).toBe(200);
      }
    } finally {
      await t.close();
    }
  });

  it('a second crash later on, then a run to completion, leaves nothing under A', async () => {
    const t = await app(url, rotating);
    try {
      const pass = new FieldReencryption({ db: t.s.database.db, masters: fieldMasters(rotating), encryptColumns: true });
      await expect(pass.run({ batchSize: 2, afterBatch: (b) => { if (b.table === 'sessions') throw new Error('crash in sessions'); } })).rejects.toThrow('crash in sessions');
      expect((await pass.remaining()).find((r) => r.column === 'aes_key')!.oldKey).toBeGreaterThan(0);
      expect((await pass.remaining()).filter((r) => r.table === 'users').every((r) => r.oldKey === 0 && r.unprotected === 0)).toBe(true);

      const last = await pass.run({ batchSize: 2 });
      expect(last.find((r) => r.table === 'users')!.rows).toBe(0); // done before, not redone
      expect(last.find((r) => r.table === 'sessions')!.rows).toBeGreaterThan(0);
      expect((await pass.remaining()).every((r) => r.oldKey === 0 && r.unprotected === 0)).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('with ONLY key B: every user signs in by email and is found by phone, tokens issued under A still validate, nothing is under A', async () => {
    const t = await app(url, onlyB); // loads the JWT and transport keyrings: they were re-wrapped under B
    try {
      for (const p of people) {
        const body = await signIn(t.app, p.email.toLowerCase());
        expect(body.user_profile).toMatchObject({ username: p.username, email: p.email, phone: p.phone });
        expect((await t.s.users.findByPhone(p.phone))?.username).toBe(p.username); // the USSD lookup, by the phone index under B
        const old = await validate(t, tokens.get(p.username)!.access_token); // its session's aes_key is read too
        expect(old.statusCode, old.body).toBe(200);
      }
      expect(await storedKeyIds(t.s, A)).toMatchObject({ underKey: 0 });
      const b = await storedKeyIds(t.s, B);
      expect(b.underKey).toBe(b.total);
      const legacy = await t.s.database.db.selectFrom('users').select(['email', 'email_bidx', 'phone']).where('username', '=', LEGACY.username).executeTakeFirstOrThrow();
      expect(legacy.email).toMatch(/^fe1:/);
      expect(legacy.phone).toMatch(/^fe1:/);
      expect(legacy.email_bidx).toBe(new BlindIndex([B]).of(LEGACY.email));
      expect((await new FieldReencryption({ db: t.s.database.db, masters: [B], encryptColumns: true }).remaining()).every((r) => r.oldKey === 0)).toBe(true);
    } finally {
      await t.close();
    }
  });
});

describe('strongroom rotate-field-key', () => {
  let url: string;
  let tokens: Map<string, SignedIn>;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-fk-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  beforeAll(async () => {
    ({ url, tokens } = await seededUnderA());
  });

  it('refuses to start without the old key, and --check reports what remains under it', async () => {
    const missing = await runCli(['rotate-field-key'], cliEnv(onlyB, dataDir, { DATABASE_URL: url }));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/users\.email of id \d+ cannot be decrypted with the current key or any key of FIELD_ENCRYPTION_KEYS_PREVIOUS/);
    expect(missing.stderr).toContain('running the command again continues from there');

    const check = await runCli(['rotate-field-key', '--check'], cliEnv(rotating, dataDir, { DATABASE_URL: url }));
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`field key ${keyFingerprint(B)} (FIELD_ENCRYPTION_KEY) is current; previous key still read: ${keyFingerprint(A)}.`);
    expect(check.stdout).toMatch(/^ {2}users\.email: 6 under an old key, 1 in clear$/m);
    expect(check.stdout).toMatch(/^ {2}jwt_signing_keys\.secret_enc: 1 under an old key$/m);
    expect(check.stdout).not.toContain('Re-encrypting');
    expect(check.stderr).toContain('run strongroom rotate-field-key (without --check)');
  });

  it('re-encrypts in batches with progress per table, says the old key can go, and a second run has nothing to do', async () => {
    const env = cliEnv(rotating, dataDir, { DATABASE_URL: url });
    const r = await runCli(['reencrypt', '--batch-size', '2'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Re-encrypting in batches of 2 rows, each committed on its own:');
    expect(r.stdout).toMatch(/^ {2}users: batch 1, 2 of 7 rows$/m);
    expect(r.stdout).toMatch(/^ {2}users: batch 4, 7 of 7 rows$/m);
    expect(r.stdout).toMatch(/^ {2}users: done, 7 rows re-encrypted in 4 batches \(email 7, phone 7, email_bidx 7, phone_bidx 7\)$/m);
    expect(r.stdout).toMatch(/^ {2}credentials: done, 7 rows re-encrypted in 4 batches \(password_enc 7\)$/m);
    expect(r.stdout).toContain('Check: no value remains under an old key, and every email and phone index is under the current key.');
    expect(r.stdout).toContain(`It is now safe to drop the old key (${keyFingerprint(A)}): remove FIELD_ENCRYPTION_KEYS_PREVIOUS from every server and restart them.`);

    const again = await runCli(['rotate-field-key'], env);
    expect(again.code, again.stderr).toBe(0);
    for (const table of ['users', 'credentials', 'sessions', 'jwt_signing_keys', 'transport_keys']) expect(again.stdout).toContain(`  ${table}: nothing to do`);
  });

  it('then servers holding only the new key work: sign-in by email and tokens issued before', async () => {
    const check = await runCli(['rotate-field-key', '--check'], cliEnv(onlyB, dataDir, { DATABASE_URL: url }));
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain('No FIELD_ENCRYPTION_KEYS_PREVIOUS is configured: there is no old key to drop.');
    const t = await app(url, onlyB);
    try {
      for (const p of people) {
        expect((await signIn(t.app, p.email.toUpperCase())).user_profile).toMatchObject({ username: p.username });
        expect((await validate(t, tokens.get(p.username)!.access_token)).statusCode).toBe(200);
      }
    } finally {
      await t.close();
    }
  });

  it('runs on the embedded PGlite and releases it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-fk-pglite-'));
    try {
      const r = await runCli(['rotate-field-key'], cliEnv(testSecrets(), dir));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('PGlite (embedded)');
      expect(r.stdout).toContain('  users: nothing to do');
      expect(r.stdout).toContain('No FIELD_ENCRYPTION_KEYS_PREVIOUS is configured');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
