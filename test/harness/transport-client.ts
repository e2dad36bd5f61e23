import type { App } from '../../src/platform/http/app.js';
/**
 * A minimal client of the transport wire format for tests, written from the specification
 * (ARCHITECTURE ruling 4) with node:crypto only, independent of the server's code.
 */
import { constants, createCipheriv, createDecipheriv, generateKeyPairSync, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';

const OAEP = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' } as const;

export interface ClientKeys {
  privateKey: KeyObject;
  publicPem: string;
}

let cached: ClientKeys | undefined;
export function clientKeys(): ClientKeys {
  if (!cached) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    cached = { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  }
  return cached;
}

function gcm(key: Buffer, plaintext: Buffer, iv = randomBytes(12)) {
  const c = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return { iv, ct, tag: c.getAuthTag() };
}

function ungcm(key: Buffer, iv: string, ciphertext: string, tag: string): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'), { authTagLength: 16 });
  d.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([d.update(Buffer.from(ciphertext, 'base64')), d.final()]);
}

/** `{data: {encrypted_key, ciphertext, nonce, tag}}` for a pre-auth route. */
export function preAuthBody(serverPublicPem: string, body: Record<string, unknown>, opts: { keys?: ClientKeys; keyId?: string; aesKey?: Buffer } = {}) {
  const keys = opts.keys ?? clientKeys();
  const aesKey = opts.aesKey ?? randomBytes(32);
  const { iv, ct, tag } = gcm(aesKey, Buffer.from(JSON.stringify({ ...body, client_public_key: keys.publicPem })));
  const data: { encrypted_key: string; ciphertext: string; nonce: string; tag: string; key_id?: string } = {
    encrypted_key: publicEncrypt({ key: serverPublicPem, ...OAEP }, aesKey).toString('base64'),
    ciphertext: ct.toString('base64'),
    nonce: iv.toString('base64'),
    tag: tag.toString('base64'),
  };
  if (opts.keyId) data.key_id = opts.keyId;
  return { data };
}

/** Opens `{encrypted_key, ciphertext, nonce, tag}`; returns the body and the AES key it used. */
export function openPreAuth(envelope: { encrypted_key: string; ciphertext: string; nonce: string; tag: string }, keys: ClientKeys = clientKeys()) {
  const key = privateDecrypt({ key: keys.privateKey, ...OAEP }, Buffer.from(envelope.encrypted_key, 'base64'));
  return { body: JSON.parse(ungcm(key, envelope.nonce, envelope.ciphertext, envelope.tag).toString('utf8')) as Record<string, unknown>, key };
}

/** `{data: {iv, ciphertext, tag}}` under a session key. */
export function sessionBody(key: Buffer, body: unknown) {
  const { iv, ct, tag } = gcm(key, Buffer.from(JSON.stringify(body)));
  return { data: { iv: iv.toString('base64'), ciphertext: ct.toString('base64'), tag: tag.toString('base64') } };
}

export function openSession(key: Buffer, envelope: { iv: string; ciphertext: string; tag: string }): Record<string, unknown> {
  return JSON.parse(ungcm(key, envelope.iv, envelope.ciphertext, envelope.tag).toString('utf8')) as Record<string, unknown>;
}

export const ENCRYPTED = { 'x-encrypted': 'true' };

/** The server's current transport public key (PEM), as a client fetches it. */
export async function fetchServerPem(app: { inject: App['inject'] }): Promise<string> {
  return (await app.inject({ method: 'GET', url: '/api/v1/auth/public_key' })).json<{ public_key: string }>().public_key;
}
