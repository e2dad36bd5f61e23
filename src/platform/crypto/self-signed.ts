/**
 * A self-signed X.509 v3 certificate for an RSA key, in DER (RFC 5280), signed with
 * sha256WithRSAEncryption: what a SAML service provider publishes in its metadata so that the
 * IdP can check the messages it signs (the certificate is a container for the public key; SAML
 * does not use its chain or its dates). Node can read certificates but not make them; this is
 * the small part of ASN.1 DER that making one needs.
 */
import { createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(body.length), body]);
const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const NULL = Buffer.from([0x05, 0x00]);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const out = [40 * a + b];
  for (const n of rest) {
    const groups: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      groups.unshift(v % 128);
      if (v < 128) break;
    }
    out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return tlv(0x06, Buffer.from(out));
}

/** A positive INTEGER from unsigned big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && (b[1]! & 0x80) === 0) b = b.subarray(1);
  return tlv(0x02, (b[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  const year = new Date(ms).getUTCFullYear();
  return year < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

const commonName = (cn: string): Buffer => sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(cn, 'utf8')))));
const SHA256_WITH_RSA = sequence(oid('1.2.840.113549.1.1.11'), NULL);

/** A certificate for `privateKey` (RSA) naming `cn`, valid from `notBefore` for `days` days; PEM. */
export function selfSignedCertificatePem(privateKey: KeyObject, cn: string, notBefore: number, days: number): string {
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))), // [0] EXPLICIT version: v3
    integer(serial),
    SHA256_WITH_RSA,
    commonName(cn),
    sequence(time(notBefore), time(notBefore + days * 86_400_000)),
    commonName(cn),
    spki,
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, SHA256_WITH_RSA, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}
