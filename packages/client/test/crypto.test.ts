/**
 * The SDK's WebCrypto primitives against node:crypto, both ways, and against the server's own
 * transport code: what one side seals the other opens, byte for byte.
 */
import { constants, createCipheriv, createDecipheriv, createPublicKey, generateKeyPairSync, privateDecrypt, publicEncrypt, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as server from '../../../src/transport/crypto.js';
import { DEFAULT_BINARY_FRAGMENTS as SERVER_BINARY, DEFAULT_EXEMPT_PATHS as SERVER_EXEMPT, DEFAULT_EXEMPT_PREFIXES as SERVER_EXEMPT_PREFIXES, DEFAULT_PREAUTH_ROUTES as SERVER_PREAUTH } from '../../../src/transport/plugin.js';
import { fromBase64, toBase64 } from '../src/base64.js';
import {
  aesGcmOpen, aesGcmSeal, derToPem, generateClientKeyPair, importServerPublicKey, openPreAuth, openSession, pemToDer, rsaUnwrap, rsaWrap,
  sealPreAuth, sealSession, utf8, fromUtf8,
} from '../src/crypto.js';
import { DEFAULT_BINARY_FRAGMENTS, DEFAULT_EXEMPT_PATHS, DEFAULT_EXEMPT_PREFIXES, DEFAULT_PREAUTH_ROUTES, encryptionModeOf } from '../src/routes.js';

const OAEP = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' } as const;
const serverPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const serverPem = serverPair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const clientPair = await generateClientKeyPair();

const u8 = (b: Buffer): Uint8Array<ArrayBuffer> => new Uint8Array(b);

describe('base64', () => {
  it('matches Buffer for every length from 0 to 100', () => {
    for (let n = 0; n <= 100; n++) {
      const bytes = randomBytes(n);
      const text = toBase64(bytes);
      expect(text).toBe(bytes.toString('base64'));
      expect(Buffer.from(fromBase64(text)).equals(bytes)).toBe(true);
    }
  });

  it.each([
    ['missing padding', 'QUI'],
    ['base64url alphabet', 'ab-_'],
    ['whitespace', 'QU I='],
    ['non-canonical trailing bits', 'QUJ='],
    ['padding in the middle', 'QQ==QUJD'],
  ])('refuses %s', (_name, text) => {
    expect(() => fromBase64(text)).toThrow(TypeError);
  });
});

describe('PEM', () => {
  it('writes the same SPKI PEM as node:crypto and reads it back', async () => {
    const der = serverPair.publicKey.export({ type: 'spki', format: 'der' });
    expect(derToPem(der)).toBe(serverPem);
    expect(Buffer.from(pemToDer(serverPem)).equals(der)).toBe(true);
  });
});

describe('RSA-OAEP (SHA-256 hash and MGF1)', () => {
  it('SDK wraps, node:crypto unwraps', async () => {
    const key = randomBytes(32);
    const wrapped = await rsaWrap(await importServerPublicKey(serverPem), u8(key));
    expect(Buffer.from(wrapped, 'base64')).toHaveLength(256);
    expect(privateDecrypt({ key: serverPair.privateKey, ...OAEP }, Buffer.from(wrapped, 'base64')).equals(key)).toBe(true);
  });

  it('node:crypto wraps for the SDK client key, the SDK unwraps', async () => {
    const key = randomBytes(32);
    const wrapped = publicEncrypt({ key: clientPair.publicKeyPem, ...OAEP }, key).toString('base64');
    expect(Buffer.from(await rsaUnwrap(clientPair.privateKey, wrapped)).equals(key)).toBe(true);
  });

  it('refuses a key wrapped with SHA-1 OAEP', async () => {
    const wrapped = publicEncrypt({ key: clientPair.publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, randomBytes(32)).toString('base64');
    await expect(rsaUnwrap(clientPair.privateKey, wrapped)).rejects.toThrow();
  });

  it('generates an RSA-2048 client key pair whose private key cannot be exported', async () => {
    const pub = createPublicKey(clientPair.publicKeyPem);
    expect(pub.asymmetricKeyType).toBe('rsa');
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(clientPair.privateKey.extractable).toBe(false);
    await expect(globalThis.crypto.subtle.exportKey('pkcs8', clientPair.privateKey)).rejects.toThrow();
    // The server accepts it as a client public key.
    expect(() => server.parseClientPublicKey(clientPair.publicKeyPem)).not.toThrow();
  });
});

describe('AES-256-GCM (12-byte IV, 16-byte tag)', () => {
  const key = randomBytes(32);

  it('SDK seals, node:crypto opens', async () => {
    const s = await aesGcmSeal(u8(key), utf8('{"amount":"100.00","currency":"KES"}'));
    expect(Buffer.from(s.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(s.tag, 'base64')).toHaveLength(16);
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(s.iv, 'base64'), { authTagLength: 16 });
    d.setAuthTag(Buffer.from(s.tag, 'base64'));
    expect(Buffer.concat([d.update(Buffer.from(s.ciphertext, 'base64')), d.final()]).toString()).toBe('{"amount":"100.00","currency":"KES"}');
  });

  it('node:crypto seals, SDK opens', async () => {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    const ct = Buffer.concat([c.update('héllo, wörld'), c.final()]);
    const opened = await aesGcmOpen(u8(key), iv.toString('base64'), ct.toString('base64'), c.getAuthTag().toString('base64'));
    expect(fromUtf8(opened)).toBe('héllo, wörld');
  });

  it('uses a fresh IV for every message', async () => {
    const ivs = new Set<string>();
    for (let i = 0; i < 50; i++) ivs.add((await aesGcmSeal(u8(key), utf8('same'))).iv);
    expect(ivs.size).toBe(50);
  });

  it.each(['iv', 'ciphertext', 'tag'] as const)('refuses a flipped bit in %s', async (field) => {
    const s = await sealSession(u8(key), '{"a":1}');
    const bytes = Buffer.from(s[field], 'base64');
    bytes[0]! ^= 1;
    await expect(openSession(u8(key), { ...s, [field]: bytes.toString('base64') })).rejects.toThrow();
  });

  it('refuses a truncated tag and a wrong key', async () => {
    const s = await sealSession(u8(key), '{"a":1}');
    await expect(openSession(u8(key), { ...s, tag: Buffer.from(s.tag, 'base64').subarray(0, 12).toString('base64') })).rejects.toThrow();
    await expect(openSession(u8(randomBytes(32)), s)).rejects.toThrow();
  });
});

describe('the two envelopes against the server code', () => {
  it('a pre-auth request the SDK seals is opened by the server', async () => {
    const env = await sealPreAuth(await importServerPublicKey(serverPem), JSON.stringify({ username: 'amina', client_public_key: clientPair.publicKeyPem }), 'kid-1');
    expect(Object.keys(env).sort()).toEqual(['ciphertext', 'encrypted_key', 'key_id', 'nonce', 'tag']);
    const aes = server.rsaUnwrap(serverPair.privateKey, env.encrypted_key);
    const body = JSON.parse(server.aesGcmOpen(aes, env.nonce, env.ciphertext, env.tag).toString()) as Record<string, unknown>;
    expect(body.username).toBe('amina');
    expect(() => server.parseClientPublicKey(body.client_public_key)).not.toThrow();
  });

  it('a pre-auth answer the server seals to the client key is opened by the SDK, with its AES key', async () => {
    const sessionKey = server.newAesKey();
    const answer = server.sealForRecipient(server.parseClientPublicKey(clientPair.publicKeyPem), sessionKey, '{"access_token":"x"}');
    const opened = await openPreAuth(clientPair.privateKey, answer);
    expect(opened.text).toBe('{"access_token":"x"}');
    expect(Buffer.from(opened.key).equals(sessionKey)).toBe(true);
  });

  it('session bodies go both ways under one key', async () => {
    const key = server.newAesKey();
    const fromSdk = await sealSession(u8(key), '{"all_sessions":true}');
    expect(server.aesGcmOpen(key, fromSdk.iv, fromSdk.ciphertext, fromSdk.tag).toString()).toBe('{"all_sessions":true}');
    const fromServer = server.aesGcmSeal(key, '{"status":"success"}');
    expect(await openSession(u8(key), fromServer)).toBe('{"status":"success"}');
  });
});

describe('route classification', () => {
  it('mirrors the server defaults', () => {
    expect([...DEFAULT_PREAUTH_ROUTES]).toEqual(SERVER_PREAUTH);
    expect([...DEFAULT_EXEMPT_PATHS]).toEqual(SERVER_EXEMPT);
    expect([...DEFAULT_EXEMPT_PREFIXES]).toEqual(SERVER_EXEMPT_PREFIXES);
    expect([...DEFAULT_BINARY_FRAGMENTS]).toEqual(SERVER_BINARY);
  });

  it.each([
    ['/api/v1/auth/login', 'preauth'],
    ['/api/v1/auth/refresh/', 'preauth'],
    ['/api/v1/auth/validate?x=1', 'preauth'],
    ['/api/v1/auth/logout', 'session'],
    ['/api/v1/admin/users?page=2', 'session'],
    ['/api/v1/auth/public_key', 'none'],
    ['/health', 'none'],
    ['/api/docs/static/index.html', 'none'],
    ['/api/v1/ussd/session', 'none'],
    ['/api/v1/faq/search', 'none'],
    ['/api/v1/faq/31/helpful', 'none'],
    ['/mcp', 'none'],
    ['/api/v1/admin/faqs', 'session'],
  ])('%s is %s', (path, mode) => {
    expect(encryptionModeOf(path, { preAuthRoutes: DEFAULT_PREAUTH_ROUTES, exemptPaths: DEFAULT_EXEMPT_PATHS })).toBe(mode);
  });
});
