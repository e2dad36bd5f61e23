/**
 * X.509 chains of attestations: each certificate signed by the next, the last one holding (or
 * signed by) a trusted root's key, validity at the injected clock's time, and revoked serial
 * numbers. Signatures are node:crypto's (`X509Certificate.verify`); the DER reader only finds
 * what node does not expose: validity dates and extensions.
 */
import { X509Certificate, createPublicKey, type KeyObject } from 'node:crypto';
import { CLASS_CONTEXT, CLASS_UNIVERSAL, DerError, TAG_BOOLEAN, boolean, childrenOf, octets, oid, parseDer, sequenceOf, time, type DerNode } from './der.js';
import { AttestationError, check } from './errors.js';

/** A chain longer than this is refused before any signature is checked. */
export const MAX_CHAIN_LENGTH = 10;

export interface ParsedCertificate {
  readonly x509: X509Certificate;
  readonly notBefore: number;
  readonly notAfter: number;
  /** Extension values (the OCTET STRING's content) by dotted OID. */
  readonly extensions: ReadonlyMap<string, Buffer>;
  /** The serial number in lowercase hex without leading zeros, as Google's status list names it. */
  readonly serial: string;
  /** The subject public key as SPKI DER. */
  readonly spki: Buffer;
}

function readExtensions(node: DerNode): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const [list] = childrenOf(node); // [3] EXPLICIT Extensions
  for (const ext of sequenceOf(list)) {
    const parts = sequenceOf(ext);
    const id = oid(parts[0]);
    const hasCritical = parts[1]?.cls === CLASS_UNIVERSAL && parts[1].tag === TAG_BOOLEAN;
    if (hasCritical) boolean(parts[1]);
    if (parts.length !== (hasCritical ? 3 : 2)) throw new DerError('extension shape');
    if (out.has(id)) throw new DerError(`duplicate extension ${id}`);
    out.set(id, octets(parts[hasCritical ? 2 : 1]));
  }
  return out;
}

/** One certificate, DER; throws `malformed` when it does not parse. */
export function parseCertificate(der: Buffer): ParsedCertificate {
  try {
    const x509 = new X509Certificate(der);
    const tbs = sequenceOf(sequenceOf(parseDer(der))[0]);
    const hasVersion = tbs[0]?.cls === CLASS_CONTEXT && tbs[0].tag === 0;
    const fields = hasVersion ? tbs.slice(1) : tbs; // serial, signature, issuer, validity, subject, spki, ...
    const [notBefore, notAfter] = sequenceOf(fields[3]).map(time) as [number, number];
    const extNode = fields.slice(6).find((n) => n.cls === CLASS_CONTEXT && n.tag === 3);
    const extensions = extNode ? readExtensions(extNode) : new Map<string, Buffer>();
    const serial = x509.serialNumber.toLowerCase().replace(/^0+(?=.)/, '');
    const spki = x509.publicKey.export({ format: 'der', type: 'spki' });
    return { x509, notBefore, notAfter, extensions, serial, spki };
  } catch (err) {
    throw new AttestationError('malformed', `certificate: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Certificates given as base64 (or base64url) DER strings, leaf first. */
export function parseBase64Chain(chain: readonly string[]): ParsedCertificate[] {
  check(Array.isArray(chain) && chain.length >= 1 && chain.length <= MAX_CHAIN_LENGTH, 'malformed', `the chain must hold 1 to ${MAX_CHAIN_LENGTH} certificates`);
  return chain.map((c) => {
    check(typeof c === 'string' && /^[A-Za-z0-9+/_-]+={0,2}$/.test(c), 'malformed', 'a certificate is not base64 DER');
    return parseCertificate(Buffer.from(c, 'base64'));
  });
}

const rootKeyCache = new WeakMap<readonly string[], KeyObject[]>();

/** The public key of each PEM root (remembered per array: the roots are configuration). */
export function rootKeys(pems: readonly string[]): KeyObject[] {
  let keys = rootKeyCache.get(pems);
  if (!keys) {
    keys = pems.map((pem) => new X509Certificate(pem).publicKey);
    rootKeyCache.set(pems, keys);
  }
  return keys;
}

const sameKey = (a: KeyObject, spki: Buffer): boolean => a.export({ format: 'der', type: 'spki' }).equals(spki);

function signedBy(cert: ParsedCertificate, key: KeyObject): boolean {
  try {
    return cert.x509.verify(key);
  } catch {
    return false; // a key of another type than the signature's
  }
}

export interface ChainOptions {
  /** The trusted roots, PEM. */
  readonly roots: readonly string[];
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** Serial numbers (lowercase hex, no leading zeros) of revoked or suspended certificates. */
  readonly revokedSerials?: ReadonlySet<string>;
  /** Whether the leaf's validity is checked (Android's is set by the device's clock: not checked). */
  readonly checkLeafValidity: boolean;
}

/**
 * Checks `certs` (leaf first, at least 2): each signed by the next; the last one carries a trusted
 * root's key (the root itself, or a re-issue of it: not date-checked, as a trust anchor) or is
 * signed by one; every other certificate valid at `now`; none revoked.
 */
export function verifyChain(certs: readonly ParsedCertificate[], options: ChainOptions): void {
  check(certs.length >= 2 && certs.length <= MAX_CHAIN_LENGTH, 'malformed', `the chain must hold 2 to ${MAX_CHAIN_LENGTH} certificates`);
  for (let i = 0; i < certs.length - 1; i++) check(signedBy(certs[i]!, certs[i + 1]!.x509.publicKey), 'chain_signature_invalid', `certificate ${i}`);
  const last = certs[certs.length - 1]!;
  const roots = rootKeys(options.roots);
  const lastIsAnchor = roots.some((k) => sameKey(k, last.spki));
  check(lastIsAnchor || roots.some((k) => signedBy(last, k)), 'chain_untrusted');
  const dated = certs.slice(options.checkLeafValidity ? 0 : 1, lastIsAnchor ? -1 : undefined);
  for (const c of dated) check(c.notBefore <= options.now && options.now <= c.notAfter, 'certificate_expired', `serial ${c.serial}`);
  const revoked = options.revokedSerials;
  if (revoked) for (const c of certs) check(!revoked.has(c.serial), 'certificate_revoked', `serial ${c.serial}`);
}

/** A P-256 public key from SPKI DER in base64url, or null. */
export function p256Key(spkiB64u: string): KeyObject | null {
  try {
    if (typeof spkiB64u !== 'string' || !/^[A-Za-z0-9_-]+$/.test(spkiB64u)) return null;
    const key = createPublicKey({ key: Buffer.from(spkiB64u, 'base64url'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : null;
  } catch {
    return null;
  }
}
