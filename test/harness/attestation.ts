/**
 * Forged key attestations for the push-approval attestation tests: X.509 certificates built here
 * with a DER writer of its own (nothing shared with the service's reader) and signed with
 * node:crypto, at fixed dates so tests freeze the clock; Android key descriptions as the Android
 * source defines them; Apple App Attest attestation objects laid out as Apple's, signed by a test
 * CA. `openssl verify` accepts the chains (see the tests).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { AttestationError, type AttestationReason } from '../../src/push-approval/attestation/errors.js';

/** Why `fn` refused the attestation (its `AttestationError`'s reason); throws when it accepted it. */
export function refusal(fn: () => unknown): AttestationReason {
  try {
    fn();
  } catch (err) {
    if (err instanceof AttestationError) return err.reason;
    throw err;
  }
  throw new Error('the attestation was accepted');
}

// ---- DER writer -------------------------------------------------------------------------------

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with identifier octets `id` (one byte, or the high-tag form for [tag] >= 31). */
export function tlv(id: Buffer | number, content: Buffer): Buffer {
  const head = typeof id === 'number' ? Buffer.from([id]) : id;
  return Buffer.concat([head, lengthBytes(content.length), content]);
}

function uintContent(v: number | bigint): Buffer {
  let hex = BigInt(v).toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const b = Buffer.from(hex, 'hex');
  return (b[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), b]) : b;
}

export const der = {
  seq: (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items)),
  set: (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items)),
  int: (v: number | bigint): Buffer => tlv(0x02, uintContent(v)),
  enumerated: (v: number): Buffer => tlv(0x0a, uintContent(v)),
  octets: (b: Buffer | string): Buffer => tlv(0x04, Buffer.from(b)),
  bool: (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0])),
  nul: (): Buffer => Buffer.from([0x05, 0x00]),
  utf8: (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8')),
  bitString: (b: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), b])),
  oid(dotted: string): Buffer {
    const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
    const bytes: number[] = [];
    for (const arc of [a * 40 + b, ...rest]) {
      const digits = [arc & 0x7f];
      for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) digits.unshift((v & 0x7f) | 0x80);
      bytes.push(...digits);
    }
    return tlv(0x06, Buffer.from(bytes));
  },
  /** `[tag] EXPLICIT` (context-specific, constructed), high-tag form from 31. */
  explicit(tag: number, inner: Buffer): Buffer {
    if (tag < 31) return tlv(0xa0 | tag, inner);
    const digits = [tag & 0x7f];
    for (let v = tag >> 7; v > 0; v >>= 7) digits.unshift((v & 0x7f) | 0x80);
    return tlv(Buffer.from([0xbf, ...digits]), inner);
  },
  time(ms: number): Buffer {
    const iso = new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
    return new Date(ms).getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
  },
};

// ---- certificates -----------------------------------------------------------------------------

export type Curve = 'P-256' | 'P-384';
export interface KeyPair { privateKey: KeyObject; publicKey: KeyObject; curve: Curve }
export const ecKey = (curve: Curve = 'P-256'): KeyPair => ({ ...generateKeyPairSync('ec', { namedCurve: curve }), curve });

export interface Extension { oid: string; value: Buffer; critical?: boolean }
export interface TestCert { der: Buffer; key: KeyPair; name: Buffer; b64: string; pem: string }

export interface CertOptions {
  cn: string;
  key: KeyPair;
  /** The issuer; self-signed when absent. */
  issuer?: TestCert;
  notBefore: number;
  notAfter: number;
  ca?: boolean;
  serial?: bigint;
  extensions?: Extension[];
}

const nameOf = (cn: string): Buffer => der.seq(der.set(der.seq(der.oid('2.5.4.3'), der.utf8(cn))));
const SIG_ALG: Record<Curve, { oid: string; hash: string }> = { 'P-256': { oid: '1.2.840.10045.4.3.2', hash: 'sha256' }, 'P-384': { oid: '1.2.840.10045.4.3.3', hash: 'sha384' } };

function extensionDer(e: Extension): Buffer {
  return der.seq(der.oid(e.oid), ...(e.critical ? [der.bool(true)] : []), der.octets(e.value));
}

/** An X.509 v3 certificate for `key`, signed by the issuer's key (ECDSA with SHA-256 or -384 by curve). */
export function certificate(o: CertOptions): TestCert {
  const signer = o.issuer?.key ?? o.key;
  const alg = der.seq(der.oid(SIG_ALG[signer.curve].oid));
  const exts = [...(o.ca ? [{ oid: '2.5.29.19', critical: true, value: der.seq(der.bool(true)) }] : []), ...(o.extensions ?? [])];
  const tbs = der.seq(
    der.explicit(0, der.int(2)),
    der.int(o.serial ?? BigInt(`0x${randomBytes(8).toString('hex')}`) | 1n),
    alg,
    o.issuer?.name ?? nameOf(o.cn),
    der.seq(der.time(o.notBefore), der.time(o.notAfter)),
    nameOf(o.cn),
    o.key.publicKey.export({ format: 'der', type: 'spki' }),
    ...(exts.length > 0 ? [der.explicit(3, der.seq(...exts.map(extensionDer)))] : []),
  );
  const signature = sign(SIG_ALG[signer.curve].hash, tbs, { key: signer.privateKey, dsaEncoding: 'der' });
  const cert = der.seq(tbs, alg, der.bitString(signature));
  const b64 = cert.toString('base64');
  return { der: cert, key: o.key, name: nameOf(o.cn), b64, pem: `-----BEGIN CERTIFICATE-----\n${b64.replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n` };
}

/** `cert` with one bit of its signature flipped (the structure still parses). */
export function breakSignature(cert: TestCert): TestCert {
  const broken = Buffer.from(cert.der);
  broken[broken.length - 1]! ^= 0x01;
  return { ...cert, der: broken, b64: broken.toString('base64') };
}

export const DAY = 24 * 3600 * 1000;
/** The frozen "now" of the attestation tests. */
export const NOW = Date.UTC(2026, 11, 6, 12, 0, 0);

/** A test CA: a P-384 root and a P-256 intermediate, valid a year around NOW. */
export function testCa(cn = 'Test Attestation Root'): { root: TestCert; intermediate: TestCert } {
  const root = certificate({ cn, key: ecKey('P-384'), notBefore: NOW - 365 * DAY, notAfter: NOW + 3650 * DAY, ca: true });
  const intermediate = certificate({ cn: `${cn} Intermediate`, key: ecKey('P-256'), issuer: root, notBefore: NOW - 30 * DAY, notAfter: NOW + 365 * DAY, ca: true });
  return { root, intermediate };
}

// ---- Android key description ------------------------------------------------------------------

export const KEY_DESCRIPTION_OID = '1.3.6.1.4.1.11129.2.1.17';

export interface KeyDescriptionOptions {
  challenge: Buffer;
  /** Software 0, TrustedEnvironment 1, StrongBox 2 (default 1), for both levels unless `keyMintSecurityLevel`. */
  securityLevel?: number;
  keyMintSecurityLevel?: number;
  /** KeyOrigin: GENERATED 0 (default), IMPORTED 2. */
  origin?: number;
  packageName?: string;
  /** SHA-256 of the app's signing certificate. */
  signatureDigest?: Buffer;
  deviceLocked?: boolean;
}

/** A KeyMint 3 (attestation version 300) key description of an EC P-256 signing key. */
export function keyDescription(o: KeyDescriptionOptions): Buffer {
  const level = o.securityLevel ?? 1;
  const appId = der.seq(
    der.set(der.seq(der.octets(o.packageName ?? 'com.bank.strongroom'), der.int(42))),
    der.set(der.octets(o.signatureDigest ?? Buffer.alloc(32, 7))),
  );
  const software = der.seq(der.explicit(701, der.int(Date.UTC(2026, 11, 6))), der.explicit(709, der.octets(appId)));
  const rootOfTrust = der.seq(der.octets(Buffer.alloc(32, 1)), der.bool(o.deviceLocked ?? true), der.enumerated(0), der.octets(Buffer.alloc(32, 2)));
  const hardware = der.seq(
    der.explicit(1, der.set(der.int(2))), // purpose SIGN
    der.explicit(2, der.int(3)), // algorithm EC
    der.explicit(3, der.int(256)),
    der.explicit(5, der.set(der.int(4))), // digest SHA-256
    der.explicit(10, der.int(1)), // curve P-256
    der.explicit(503, der.nul()), // noAuthRequired
    der.explicit(702, der.int(o.origin ?? 0)),
    der.explicit(704, rootOfTrust),
    der.explicit(705, der.int(150000)),
  );
  return der.seq(der.int(300), der.enumerated(level), der.int(300), der.enumerated(o.keyMintSecurityLevel ?? level),
    der.octets(o.challenge), der.octets(Buffer.alloc(0)), software, hardware);
}

export interface AndroidChainOptions extends KeyDescriptionOptions {
  ca: { root: TestCert; intermediate: TestCert };
  /** The device key attested (default: a new P-256 key). */
  deviceKey?: KeyPair;
  /**
   * The chain-extension attack: a genuine attestation of a hardware key K (TEE, GENERATED) whose
   * holder signs, with K, a forged leaf for `deviceKey` whose key description says what the
   * options say. The chain is then [forged leaf, K's genuine certificate, intermediate, root].
   */
  extendGenuineChain?: boolean;
}

/** A Keystore-style chain, leaf first: [leaf (device key, key description), intermediate, root]. */
export function androidChain(o: AndroidChainOptions): { chain: TestCert[]; deviceKey: KeyPair; spki: string } {
  const deviceKey = o.deviceKey ?? ecKey('P-256');
  const spki = deviceKey.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
  const ext = { oid: KEY_DESCRIPTION_OID, value: keyDescription(o) };
  // Keystore sets a leaf's dates from the device (here: the epoch to 2048, as many do).
  const leafOf = (key: KeyPair, issuer: TestCert, extension: Extension): TestCert =>
    certificate({ cn: 'Android Keystore Key', key, issuer, notBefore: 0, notAfter: Date.UTC(2048, 0, 1), extensions: [extension] });
  if (!o.extendGenuineChain) return { chain: [leafOf(deviceKey, o.ca.intermediate, ext), o.ca.intermediate, o.ca.root], deviceKey, spki };
  const genuine = leafOf(ecKey('P-256'), o.ca.intermediate, { oid: KEY_DESCRIPTION_OID, value: keyDescription({ challenge: Buffer.from('another enrolment') }) });
  return { chain: [leafOf(deviceKey, genuine, ext), genuine, o.ca.intermediate, o.ca.root], deviceKey, spki };
}

// ---- Apple App Attest -------------------------------------------------------------------------

export const APP_ATTEST_NONCE_OID = '1.2.840.113635.100.8.2';
const sha256 = (...parts: (Buffer | string)[]): Buffer => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };

export interface AppAttestOptions {
  ca: { root: TestCert; intermediate: TestCert };
  appId: string;
  clientDataHash: Buffer;
  aaguid?: 'production' | 'development' | Buffer;
  counter?: number;
  /** Overrides the nonce in the certificate (default: SHA-256(authData || clientDataHash)). */
  nonce?: Buffer;
  /** Overrides the credential id in the authenticator data (default: the key id). */
  credentialId?: Buffer;
  /** Overrides the format (default apple-appattest). */
  fmt?: string;
  /** The credential certificate's validity (default: NOW - 1 day to NOW + 10 days). */
  notAfter?: number;
}

/** An App Attest key attesting `clientDataHash`: its key id (base64) and attestation object (base64). */
export function appAttestation(o: AppAttestOptions): { keyId: string; attestation: string } {
  const key = ecKey('P-256');
  const jwk = key.publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const keyId = sha256(point);
  const aaguid = o.aaguid === 'development' ? Buffer.from('appattestdevelop') : o.aaguid instanceof Buffer ? o.aaguid : Buffer.concat([Buffer.from('appattest'), Buffer.alloc(7)]);
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(o.counter ?? 0);
  const credentialId = o.credentialId ?? keyId;
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credentialId.length);
  const cose = Buffer.from(isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]])));
  const authData = Buffer.concat([sha256(o.appId), Buffer.from([0x40]), counter, aaguid, idLength, credentialId, cose]);
  const nonce = o.nonce ?? sha256(authData, o.clientDataHash);
  const credCert = certificate({
    cn: keyId.toString('hex'), key, issuer: o.ca.intermediate, notBefore: NOW - DAY, notAfter: o.notAfter ?? NOW + 10 * DAY,
    extensions: [{ oid: APP_ATTEST_NONCE_OID, value: der.seq(der.explicit(1, der.octets(nonce))) }],
  });
  const object = new Map<string, unknown>([
    ['fmt', o.fmt ?? 'apple-appattest'],
    ['attStmt', new Map<string, unknown>([['x5c', [new Uint8Array(credCert.der), new Uint8Array(o.ca.intermediate.der)]], ['receipt', new Uint8Array(Buffer.from('receipt'))]])],
    ['authData', new Uint8Array(authData)],
  ]);
  return { keyId: keyId.toString('base64'), attestation: Buffer.from(isoCBOR.encode(object as never)).toString('base64') };
}
