/**
 * Building blocks of the transport tamper corpus, with node:crypto only: envelopes whose every
 * part the test chooses (key, IV, tag length, how the AES key is wrapped), byte and base64
 * mutations, and client public keys that parse as RSA but are unusable.
 */
import { constants, createCipheriv, createHash, createPublicKey, generateKeyPairSync, publicEncrypt, randomBytes, type CipherGCMTypes } from 'node:crypto';

export const b64 = (b: Buffer): string => b.toString('base64');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** AES-GCM with any key size, IV length and tag length the cipher allows. */
export function gcmSeal(key: Buffer, iv: Buffer, plaintext: Buffer, tagLength = 16): { ct: Buffer; tag: Buffer } {
  const c = createCipheriv(`aes-${key.length * 8}-gcm` as CipherGCMTypes, key, iv, { authTagLength: tagLength });
  return { ct: Buffer.concat([c.update(plaintext), c.final()]), tag: c.getAuthTag() };
}

function mgf1(seed: Buffer, length: number, hash: string): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; Buffer.concat(out).length < length; i++) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(i);
    out.push(createHash(hash).update(seed).update(counter).digest());
  }
  return Buffer.concat(out).subarray(0, length);
}

const xor = (a: Buffer, b: Buffer): Buffer => Buffer.from(a.map((v, i) => v ^ b[i]!));

/**
 * RSAES-OAEP (RFC 8017 7.1.1) encoded by hand, so the label hash and the MGF1 hash can differ
 * (Java's "OAEPWithSHA-256AndMGF1Padding" uses MGF1-SHA1), then raw RSA.
 */
export function oaepWrapManual(publicPem: string, message: Buffer, hash: string, mgfHash: string): Buffer {
  const k = 256;
  const lHash = createHash(hash).digest();
  const hLen = lHash.length;
  const db = Buffer.concat([lHash, Buffer.alloc(k - message.length - 2 * hLen - 2), Buffer.from([1]), message]);
  const seed = randomBytes(hLen);
  const maskedDb = xor(db, mgf1(seed, k - hLen - 1, mgfHash));
  const maskedSeed = xor(seed, mgf1(maskedDb, hLen, mgfHash));
  return publicEncrypt({ key: publicPem, padding: constants.RSA_NO_PADDING }, Buffer.concat([Buffer.from([0]), maskedSeed, maskedDb]));
}

export const wrap = {
  sha256: (pem: string, key: Buffer): Buffer => publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, key),
  sha1: (pem: string, key: Buffer): Buffer => publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, key),
  pkcs1v15: (pem: string, key: Buffer): Buffer => publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_PADDING }, key),
  raw: (pem: string, key: Buffer): Buffer => publicEncrypt({ key: pem, padding: constants.RSA_NO_PADDING }, Buffer.concat([Buffer.alloc(256 - key.length), key])),
  sha256Mgf1Sha1: (pem: string, key: Buffer): Buffer => oaepWrapManual(pem, key, 'sha256', 'sha1'),
};

/** `value` with byte `index` (negative: from the end) XORed with `mask`. */
export function flipByte(value: string, index: number, mask = 0x01): string {
  const buf = Buffer.from(value, 'base64');
  const i = index < 0 ? buf.length + index : index;
  buf[i]! ^= mask;
  return b64(buf);
}

/** Same bytes, but the unused low bit of the last base64 digit set: not the canonical encoding. */
export function nonCanonical(value: string): string {
  const padded = value.endsWith('=');
  if (!padded) throw new Error('only a padded value has unused bits');
  const at = value.replace(/=+$/, '').length - 1;
  const digit = ALPHABET[ALPHABET.indexOf(value[at]!) ^ 1]!;
  return value.slice(0, at) + digit + value.slice(at + 1);
}

export const urlSafe = (value: string): string => value.replace(/\+/g, '-').replace(/\//g, '_');

/** Client public keys that are not acceptable: each parses, or not, but none may be used. */
export function badClientKeys(): Record<string, string> {
  const spki = (k: { export(o: { type: 'spki'; format: 'pem' }): string | Buffer }): string => k.export({ type: 'spki', format: 'pem' }).toString();
  const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
  const jwk = rsa2048.export({ format: 'jwk' }) as { n: string; e: string };
  const n = Buffer.from(jwk.n, 'base64url');
  const fromJwk = (nBuf: Buffer, e: Buffer): string => spki(createPublicKey({ key: { kty: 'RSA', n: nBuf.toString('base64url'), e: e.toString('base64url') }, format: 'jwk' }));
  const even = Buffer.from(n);
  even[even.length - 1]! &= 0xfe;
  const n4096 = Buffer.from((generateKeyPairSync('rsa', { modulusLength: 4096 }).publicKey.export({ format: 'jwk' }) as { n: string }).n, 'base64url');
  const n3072 = Buffer.from((generateKeyPairSync('rsa', { modulusLength: 3072 }).publicKey.export({ format: 'jwk' }) as { n: string }).n, 'base64url');
  // An odd exponent of 3071 bits: below the modulus, so the key parses.
  const hugeOddBelow = (mod: Buffer): Buffer => {
    const e = Buffer.alloc(mod.length, 0xff);
    e[0] = 0x7f;
    return e;
  };
  const der = rsa2048.export({ type: 'spki', format: 'der' });
  return {
    'not PEM': 'hello, I am a key',
    'base64 DER without PEM armour': b64(der),
    'PEM armour around garbage': '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n',
    'an EC P-256 key': spki(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey),
    'an Ed25519 key': spki(generateKeyPairSync('ed25519').publicKey),
    'an RSA-1024 key': spki(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey),
    'an RSA-4608 key (over the 4096-bit cap)': spki(generateKeyPairSync('rsa', { modulusLength: 4608 }).publicKey),
    'an RSA-PSS key': spki(generateKeyPairSync('rsa-pss', { modulusLength: 2048 }).publicKey),
    'an RSA key with e > n': fromJwk(n, Buffer.concat([Buffer.from([1]), n])),
    'an RSA key with an even modulus': fromJwk(even, Buffer.from([1, 0, 1])),
    'an RSA-4096 key with a 65-bit exponent': fromJwk(n4096, Buffer.from('010000000000000001', 'hex')),
    // Threat: each public operation as slow as a private one (OpenSSL accepts these up to 3072 bits).
    'an RSA-3072 key with a 3071-bit exponent': fromJwk(n3072, hugeOddBelow(n3072)),
    'an RSA-2048 key with e = 3': fromJwk(n, Buffer.from([3])),
    'an RSA-2048 key with e = 65539': fromJwk(n, Buffer.from([1, 0, 3])),
    'over 4096 characters': `${spki(rsa2048)}${' '.repeat(4096)}`,
  };
}
