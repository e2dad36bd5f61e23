/**
 * The WebCrypto primitives of the transport wire format, the same in
 * Node 20+ and in browsers (`globalThis.crypto.subtle`):
 *
 * - RSA-OAEP with SHA-256 for both the hash and MGF1 (WebCrypto's `hash` sets both) wraps
 *   AES keys: the server's key for requests, the client's own key pair for answers.
 * - AES-256-GCM with a fresh random 12-byte nonce and a 16-byte tag encrypts bodies. WebCrypto
 *   returns `ciphertext || tag`; the wire carries them apart.
 *
 * Every binary field is standard base64 with padding.
 */
import { fromBase64, toBase64 } from './base64.js';

export const AES_KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const RSA_BITS = 2048;

/** `{data: {...}}` of a pre-auth request, and the shape of a pre-auth answer (without key_id). */
export interface PreAuthEnvelope {
  encrypted_key: string;
  ciphertext: string;
  nonce: string;
  tag: string;
  key_id?: string;
}

/** `{data: {...}}` of an authenticated request, and the shape of its answer. */
export interface SessionEnvelope {
  iv: string;
  ciphertext: string;
  tag: string;
}

const RSA_OAEP = { name: 'RSA-OAEP', hash: 'SHA-256' } as const;

function subtle(): SubtleCrypto {
  const c = globalThis.crypto;
  if (!c?.subtle) throw new Error('WebCrypto (crypto.subtle) is not available: use Node 20+ or a browser page served over HTTPS or from localhost');
  return c.subtle;
}

export function randomBytes(n: number): Uint8Array<ArrayBuffer> {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

// ---- PEM (SPKI) ----------------------------------------------------------------------------

export function pemToDer(pem: string): Uint8Array<ArrayBuffer> {
  const m = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
  if (!m) throw new TypeError('not a PEM public key (SPKI, "BEGIN PUBLIC KEY")');
  return fromBase64(m[1]!.replace(/\s+/g, ''));
}

export function derToPem(der: Uint8Array): string {
  const b64 = toBase64(der);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN PUBLIC KEY-----\n${lines.join('\n')}\n-----END PUBLIC KEY-----\n`;
}

// ---- RSA-OAEP (SHA-256, MGF1-SHA-256) --------------------------------------------------------

/** Imports the server's SPKI PEM public key to wrap AES keys. */
export async function importServerPublicKey(pem: string): Promise<CryptoKey> {
  return subtle().importKey('spki', pemToDer(pem), RSA_OAEP, false, ['encrypt']);
}

export interface ClientKeyPair {
  /** Never leaves WebCrypto: not extractable. */
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** SPKI PEM, sent as `client_public_key` in every pre-auth body. */
  publicKeyPem: string;
}

/** A fresh RSA-OAEP-2048 key pair whose private key is not extractable. */
export async function generateClientKeyPair(): Promise<ClientKeyPair> {
  const pair = await subtle().generateKey(
    { ...RSA_OAEP, modulusLength: RSA_BITS, publicExponent: new Uint8Array([1, 0, 1]) },
    false,
    ['encrypt', 'decrypt'],
  );
  const spki = new Uint8Array(await subtle().exportKey('spki', pair.publicKey));
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, publicKeyPem: derToPem(spki) };
}

export async function rsaWrap(publicKey: CryptoKey, rawKey: Uint8Array<ArrayBuffer>): Promise<string> {
  return toBase64(new Uint8Array(await subtle().encrypt(RSA_OAEP, publicKey, rawKey)));
}

/** Unwraps an AES-256 key; the raw bytes, since the session key is kept (as base64). */
export async function rsaUnwrap(privateKey: CryptoKey, wrapped: string): Promise<Uint8Array<ArrayBuffer>> {
  const raw = new Uint8Array(await subtle().decrypt(RSA_OAEP, privateKey, fromBase64(wrapped)));
  if (raw.length !== AES_KEY_BYTES) throw new TypeError('the wrapped key is not an AES-256 key');
  return raw;
}

// ---- AES-256-GCM ------------------------------------------------------------------------------

/** An AES-256-GCM key for WebCrypto; accepts raw bytes or an already imported key. */
export async function aesKey(key: Uint8Array<ArrayBuffer> | CryptoKey): Promise<CryptoKey> {
  if (!(key instanceof Uint8Array)) return key;
  if (key.length !== AES_KEY_BYTES) throw new TypeError('an AES-256 key is 32 bytes');
  return subtle().importKey('raw', key, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

/** AES-GCM parameters; `additionalData` only when given (the real-time channel's frames). */
function gcm(iv: Uint8Array<ArrayBuffer>, additionalData?: Uint8Array<ArrayBuffer>): AesGcmParams {
  return additionalData === undefined ? { name: 'AES-GCM', iv, tagLength: TAG_BYTES * 8 } : { name: 'AES-GCM', iv, tagLength: TAG_BYTES * 8, additionalData };
}

/** Encrypts under a fresh random 12-byte IV; returns the three wire fields. `additionalData` is authenticated, not sent. */
export async function aesGcmSeal(key: Uint8Array<ArrayBuffer> | CryptoKey, plaintext: Uint8Array<ArrayBuffer>, additionalData?: Uint8Array<ArrayBuffer>): Promise<SessionEnvelope> {
  const iv = randomBytes(IV_BYTES);
  const sealed = new Uint8Array(await subtle().encrypt(gcm(iv, additionalData), await aesKey(key), plaintext));
  const split = sealed.length - TAG_BYTES;
  return { iv: toBase64(iv), ciphertext: toBase64(sealed.subarray(0, split)), tag: toBase64(sealed.subarray(split)) };
}

/** Decrypts and authenticates; throws on a wrong key, a wrong length or any flipped bit. */
export async function aesGcmOpen(key: Uint8Array<ArrayBuffer> | CryptoKey, iv: string, ciphertext: string, tag: string, additionalData?: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const ivBytes = fromBase64(iv);
  const tagBytes = fromBase64(tag);
  const ct = fromBase64(ciphertext);
  if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new TypeError('wrong IV or tag length');
  const joined = new Uint8Array(ct.length + TAG_BYTES);
  joined.set(ct);
  joined.set(tagBytes, ct.length);
  return new Uint8Array(await subtle().decrypt(gcm(ivBytes, additionalData), await aesKey(key), joined));
}

// ---- The two envelopes ------------------------------------------------------------------------

/**
 * A pre-auth request body's `data`: a fresh AES-256 key encrypts the JSON, and is wrapped under
 * the server's public key.
 */
export async function sealPreAuth(serverKey: CryptoKey, json: string, keyId?: string): Promise<PreAuthEnvelope> {
  const key = randomBytes(AES_KEY_BYTES);
  const s = await aesGcmSeal(key, utf8(json));
  const envelope: PreAuthEnvelope = { encrypted_key: await rsaWrap(serverKey, key), ciphertext: s.ciphertext, nonce: s.iv, tag: s.tag };
  if (keyId !== undefined) envelope.key_id = keyId;
  return envelope;
}

/** Opens a pre-auth answer with the client's private key: its text, and the AES key it used. */
export async function openPreAuth(privateKey: CryptoKey, envelope: PreAuthEnvelope): Promise<{ text: string; key: Uint8Array<ArrayBuffer> }> {
  const key = await rsaUnwrap(privateKey, envelope.encrypted_key);
  const text = fromUtf8(await aesGcmOpen(key, envelope.nonce, envelope.ciphertext, envelope.tag));
  return { text, key };
}

export async function sealSession(key: Uint8Array<ArrayBuffer> | CryptoKey, json: string): Promise<SessionEnvelope> {
  return aesGcmSeal(key, utf8(json));
}

export async function openSession(key: Uint8Array<ArrayBuffer> | CryptoKey, envelope: SessionEnvelope): Promise<string> {
  return fromUtf8(await aesGcmOpen(key, envelope.iv, envelope.ciphertext, envelope.tag));
}

export function isPreAuthEnvelope(v: unknown): v is PreAuthEnvelope {
  return isRecord(v) && ['encrypted_key', 'ciphertext', 'nonce', 'tag'].every((k) => typeof v[k] === 'string');
}

export function isSessionEnvelope(v: unknown): v is SessionEnvelope {
  return isRecord(v) && ['iv', 'ciphertext', 'tag'].every((k) => typeof v[k] === 'string');
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
