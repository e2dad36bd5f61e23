/**
 * iOS: Apple App Attest vouching for the push-approval key. A CryptoKit Secure Enclave key cannot
 * be attested itself; App Attest attests that a genuine instance of our app, on a genuine Apple
 * device, made an App Attest key. The app asks that key to attest a client-data hash that names
 * this enrolment's challenge and the push-approval key it sends:
 *
 *   clientDataHash = SHA-256(UTF-8 "strongroom-push-approval-attest|" + challenge + "|" + public key (SPKI, base64url))
 *
 * so the genuine app, which makes its key in the Secure Enclave, is what hands us that key.
 * Verified as Apple documents ("Validating apps that connect to your server"): the x5c chain to
 * Apple's App Attestation root, the nonce extension, the key id, the App ID's hash, a zero counter
 * and the environment (AAGUID). Pure: the clock is injected.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { Clock } from '../../platform/clock.js';
import { MAX_CHAIN_LENGTH, parseCertificate, verifyChain, type ParsedCertificate } from './chain.js';
import { DerError, childrenOf, octets, parseDer, sequenceOf, CLASS_CONTEXT } from './der.js';
import { AttestationError, check } from './errors.js';
import { APPLE_APP_ATTEST_ROOTS } from './roots.js';

export const APP_ATTEST_PREFIX = 'strongroom-push-approval-attest';
/** The credential certificate's extension holding SHA-256(authData || clientDataHash). */
export const APP_ATTEST_NONCE_OID = '1.2.840.113635.100.8.2';

const AAGUID_PRODUCTION = Buffer.concat([Buffer.from('appattest', 'ascii'), Buffer.alloc(7)]);
const AAGUID_DEVELOPMENT = Buffer.from('appattestdevelop', 'ascii');

export interface AppAttestInput {
  /** The App Attest key id, base64, as `DCAppAttestService.generateKey` gives it. */
  readonly keyId: string;
  /** The attestation object, base64, as `attestKey` gives it. */
  readonly attestation: string;
  /** This enrolment's challenge, as the service sent it. */
  readonly challenge: string;
  /** The push-approval key being enrolled, SPKI DER in base64url, as sent. */
  readonly publicKey: string;
}

export interface AppAttestOptions {
  readonly clock: Clock;
  /** "TEAMID.bundle.id": the App ID whose SHA-256 the authenticator data must carry. */
  readonly appId: string;
  /** Accept development keys (`appattestdevelop`): Xcode builds. Production only by default. */
  readonly allowDevelopment?: boolean;
  /** PEM roots; Apple's App Attestation Root CA by default. */
  readonly trustedRoots?: readonly string[];
}

export interface AppAttestResult {
  readonly platform: 'ios';
  /** App Attest vouches for the app that sent the key, not for the key's storage itself. */
  readonly security_level: 'app_attest';
  readonly environment: 'production' | 'development';
  /** The App Attest key id (base64), to keep for later assertions. */
  readonly key_id: string;
  /** Apple's receipt (base64), to ask Apple for a fraud-risk metric later. */
  readonly receipt: string;
}

const sha256 = (...parts: (Buffer | Uint8Array | string)[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** What the app passes to `attestKey` as clientDataHash. */
export function appAttestClientDataHash(challenge: string, publicKey: string): Buffer {
  return sha256(`${APP_ATTEST_PREFIX}|${challenge}|${publicKey}`);
}

interface AttestationObject { x5c: Buffer[]; receipt: Buffer; authData: Buffer }

const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

function decodeAttestationObject(b64: string): AttestationObject {
  let decoded: unknown;
  try {
    check(typeof b64 === 'string' && /^[A-Za-z0-9+/_-]+={0,2}$/.test(b64), 'malformed', 'not base64');
    decoded = isoCBOR.decodeFirst(Buffer.from(b64, 'base64'));
  } catch (err) {
    if (err instanceof AttestationError) throw err;
    throw new AttestationError('malformed', 'not CBOR');
  }
  check(decoded instanceof Map, 'malformed', 'not a CBOR map');
  check(decoded.get('fmt') === 'apple-appattest', 'format_invalid');
  const stmt: unknown = decoded.get('attStmt');
  const authData: unknown = decoded.get('authData');
  check(stmt instanceof Map && isBytes(authData), 'malformed', 'attStmt or authData');
  const x5c: unknown = stmt.get('x5c');
  const receipt: unknown = stmt.get('receipt');
  // Counted before any certificate is parsed: a long x5c is refused for the price of its length.
  check(Array.isArray(x5c) && x5c.length >= 2 && x5c.length <= MAX_CHAIN_LENGTH, 'malformed', `x5c must hold 2 to ${MAX_CHAIN_LENGTH} certificates`);
  check(x5c.every(isBytes) && isBytes(receipt), 'malformed', 'x5c or receipt');
  return { x5c: x5c.map((c: Uint8Array) => Buffer.from(c)), receipt: Buffer.from(receipt), authData: Buffer.from(authData) };
}

/** The nonce in the credential certificate: SEQUENCE { [1] EXPLICIT OCTET STRING }. */
function nonceOf(cert: ParsedCertificate): Buffer {
  const ext = cert.extensions.get(APP_ATTEST_NONCE_OID);
  check(ext !== undefined, 'malformed', 'no nonce extension');
  try {
    const tagged = sequenceOf(parseDer(ext)).find((n) => n.cls === CLASS_CONTEXT && n.tag === 1);
    if (!tagged) throw new DerError('no [1]');
    return octets(childrenOf(tagged)[0]);
  } catch (err) {
    throw new AttestationError('malformed', `nonce extension: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The uncompressed EC point of the credential certificate's key (what the key id hashes). */
function publicPoint(cert: ParsedCertificate): Buffer {
  const jwk = cert.x509.publicKey.export({ format: 'jwk' });
  check(jwk.kty === 'EC' && jwk.crv === 'P-256' && typeof jwk.x === 'string' && typeof jwk.y === 'string', 'malformed', 'the credential key is not P-256');
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
}

interface AuthData { rpIdHash: Buffer; counter: number; aaguid: Buffer; credentialId: Buffer }

function parseAuthData(a: Buffer): AuthData {
  check(a.length >= 55, 'malformed', 'authenticator data too short');
  const idLength = a.readUInt16BE(53);
  check(a.length >= 55 + idLength, 'malformed', 'credential id truncated');
  return { rpIdHash: a.subarray(0, 32), counter: a.readUInt32BE(33), aaguid: a.subarray(37, 53), credentialId: a.subarray(55, 55 + idLength) };
}

const same = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

function environmentOf(aaguid: Buffer, allowDevelopment: boolean): 'production' | 'development' {
  if (aaguid.equals(AAGUID_PRODUCTION)) return 'production';
  check(aaguid.equals(AAGUID_DEVELOPMENT), 'environment_refused', 'unknown AAGUID');
  check(allowDevelopment, 'environment_refused', 'development key');
  return 'development';
}

/** Verifies an App Attest attestation vouching for the key being enrolled; throws `AttestationError`. */
export function verifyAppAttestation(input: AppAttestInput, options: AppAttestOptions): AppAttestResult {
  const obj = decodeAttestationObject(input.attestation);
  const certs = obj.x5c.map(parseCertificate);
  verifyChain(certs, { roots: options.trustedRoots ?? APPLE_APP_ATTEST_ROOTS, now: options.clock.now(), checkLeafValidity: true });
  const leaf = certs[0]!;
  const clientDataHash = appAttestClientDataHash(input.challenge, input.publicKey);
  check(same(nonceOf(leaf), sha256(obj.authData, clientDataHash)), 'challenge_mismatch');
  check(typeof input.keyId === 'string' && /^[A-Za-z0-9+/_-]+={0,2}$/.test(input.keyId), 'malformed', 'key id');
  const keyId = Buffer.from(input.keyId, 'base64');
  check(same(sha256(publicPoint(leaf)), keyId), 'key_mismatch', 'the key id is not the attested key');
  const auth = parseAuthData(obj.authData);
  check(same(auth.rpIdHash, sha256(options.appId)), 'app_mismatch');
  check(auth.counter === 0, 'counter_not_zero');
  const environment = environmentOf(auth.aaguid, options.allowDevelopment ?? false);
  check(same(auth.credentialId, keyId), 'key_mismatch', 'the credential id is not the key id');
  return { platform: 'ios', security_level: 'app_attest', environment, key_id: keyId.toString('base64'), receipt: obj.receipt.toString('base64') };
}
