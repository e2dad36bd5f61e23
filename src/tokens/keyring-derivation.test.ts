import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../platform/clock.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import { FieldCipher } from '../platform/crypto/field-cipher.js';
import { openDatabase, type DatabaseHandle } from '../platform/db/database.js';
import { Keyring, TOKEN_TYPES } from './keyring.js';

/**
 * Token confusion (issue 9 section 10): every token type signs with its own key derived from the
 * keyring secret, so a refresh, reset or 2FA token can never verify as an access token.
 */
let h: DatabaseHandle;
let keyring: Keyring;

beforeAll(async () => {
  h = await openDatabase({ kind: 'pglite-memory' }, pino({ level: 'silent' }));
  await h.migrate();
  const cipher = new FieldCipher([randomBytes(32)], ENCRYPTED_COLUMNS.jwtSecret.purpose);
  keyring = new Keyring({ db: h.db, cipher, clock: new ManualClock(), bus: h.bus, log: pino({ level: 'silent' }), rotationDays: 30 });
  await keyring.init();
});
afterAll(async () => h.close());

const hex = (b: Buffer | undefined): string => (b ? b.toString('hex') : 'none');

describe('Keyring per-type key derivation', () => {
  it('token confusion: the four derived signing keys (access, refresh, reset, 2FA) all differ', () => {
    expect([...TOKEN_TYPES]).toEqual(['access', 'refresh', 'reset', '2fa']);
    const keys = TOKEN_TYPES.map((type) => keyring.signingKey(type));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1); // one secret...
    expect(new Set(keys.map((k) => hex(k.key))).size).toBe(4); // ...four keys
    for (const k of keys) expect(k.key).toHaveLength(32);
  });

  it('token confusion: a kid verifies each type only with that type\'s key, also after a rotation', async () => {
    const before = keyring.signingKey('access').kid;
    await keyring.rotate();
    const after = keyring.signingKey('access').kid;
    expect(after).not.toBe(before);
    const all = new Set<string>();
    for (const kid of [before, after]) {
      for (const type of TOKEN_TYPES) {
        const key = keyring.verificationKey(kid, type);
        expect(key, `${kid} ${type}`).toBeDefined();
        all.add(hex(key));
      }
    }
    expect(all.size).toBe(8); // no key is shared between types, nor between secrets
    for (const type of TOKEN_TYPES) expect(hex(keyring.verificationKey(after, type))).toBe(hex(keyring.signingKey(type).key));
  });
});
