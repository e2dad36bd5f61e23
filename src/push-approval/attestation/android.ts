/**
 * Android Key Attestation of the push-approval key: the certificate chain the Keystore gives for
 * the key (`KeyStore.getCertificateChain`, leaf first) proves, when it ends at Google's hardware
 * attestation root, that the key was generated in the phone's TEE or StrongBox, for this
 * enrolment's challenge, by our app. Pure: no clock of its own, no network (Google's revocation
 * list comes in as `revokedSerials`).
 *
 * The checks follow Google's guidance and its reference verifier (android/keyattestation): only
 * the leaf may carry the key description (a second one higher up means a genuine attested key was
 * used to sign a forged leaf); the leaf's validity is not checked (the device's clock sets it);
 * both security levels must be the same hardware level; the key must have been generated, not
 * imported, in the hardware.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { p256Key, parseBase64Chain, verifyChain, type ParsedCertificate } from './chain.js';
import { AttestationError, check } from './errors.js';
import { KEY_DESCRIPTION_OID, ORIGIN_GENERATED, SECURITY_LEVEL, parseKeyDescription, type KeyDescription } from './key-description.js';
import { GOOGLE_ATTESTATION_ROOTS } from './roots.js';

export interface AndroidAttestationInput {
  /** The chain as base64 DER certificates, leaf first. */
  readonly certificateChain: readonly string[];
  /** The bytes the app passed to `setAttestationChallenge`. */
  readonly challenge: Uint8Array;
  /** The key being enrolled, SPKI DER in base64url. */
  readonly publicKey: string;
}

export interface AndroidAppIdentity {
  /** Accepted package names (one of the attested packages must be among them). */
  readonly packageNames: readonly string[];
  /** SHA-256 digests of accepted signing certificates, hex or base64url; when given, one attested digest must be among them. */
  readonly signatureDigests?: readonly string[];
}

export interface AndroidAttestationOptions {
  readonly clock: Clock;
  /** PEM roots; Google's hardware attestation roots by default. */
  readonly trustedRoots?: readonly string[];
  /** Google's status list: serials (lowercase hex) of revoked or suspended certificates. */
  readonly revokedSerials?: ReadonlySet<string>;
  /** When set, the key must belong to this app. */
  readonly app?: AndroidAppIdentity;
}

export interface AndroidAttestationResult {
  readonly platform: 'android';
  readonly security_level: 'tee' | 'strongbox';
  readonly attestation_version: number;
  /** The boot state the hardware saw (informational): null when the attestation does not say. */
  readonly verified_boot: { readonly device_locked: boolean; readonly state: 'verified' | 'self_signed' | 'unverified' | 'failed' } | null;
}

const BOOT_STATES = ['verified', 'self_signed', 'unverified', 'failed'] as const;

/** The leaf's key description; refuses a chain where another certificate carries one too. */
function keyDescriptionOf(certs: readonly ParsedCertificate[]): KeyDescription {
  check(!certs.slice(1).some((c) => c.extensions.has(KEY_DESCRIPTION_OID)), 'chain_extended');
  const ext = certs[0]!.extensions.get(KEY_DESCRIPTION_OID);
  check(ext !== undefined, 'key_description_invalid', 'no key description in the leaf');
  try {
    return parseKeyDescription(ext);
  } catch (err) {
    throw new AttestationError('key_description_invalid', err instanceof Error ? err.message : String(err));
  }
}

function securityLevelOf(kd: KeyDescription): 'tee' | 'strongbox' {
  const level = kd.attestationSecurityLevel;
  check(level !== SECURITY_LEVEL.software && kd.keyMintSecurityLevel !== SECURITY_LEVEL.software, 'software_key');
  check(level === kd.keyMintSecurityLevel, 'key_description_invalid', 'the attestation and the key are at different security levels');
  check(level === SECURITY_LEVEL.trustedEnvironment || level === SECURITY_LEVEL.strongBox, 'key_description_invalid', `security level ${level}`);
  return level === SECURITY_LEVEL.strongBox ? 'strongbox' : 'tee';
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b);

function digestBytes(digest: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(digest) ? Buffer.from(digest, 'hex') : Buffer.from(digest, 'base64url');
}

function checkApp(kd: KeyDescription, app: AndroidAppIdentity): void {
  const id = kd.softwareEnforced.applicationId ?? kd.hardwareEnforced.applicationId;
  check(id !== undefined, 'app_mismatch', 'no application id attested');
  check(id.packageNames.some((n) => app.packageNames.includes(n)), 'app_mismatch', 'package');
  if (app.signatureDigests && app.signatureDigests.length > 0) {
    const accepted = app.signatureDigests.map(digestBytes);
    check(id.signatureDigests.some((d) => accepted.some((a) => a.equals(d))), 'app_mismatch', 'signing certificate');
  }
}

/** Verifies the attestation of the key being enrolled; throws `AttestationError`. */
export function verifyAndroidKeyAttestation(input: AndroidAttestationInput, options: AndroidAttestationOptions): AndroidAttestationResult {
  const certs = parseBase64Chain(input.certificateChain);
  verifyChain(certs, { roots: options.trustedRoots ?? GOOGLE_ATTESTATION_ROOTS, now: options.clock.now(), revokedSerials: options.revokedSerials, checkLeafValidity: false });
  const kd = keyDescriptionOf(certs);
  const level = securityLevelOf(kd);
  check(sameBytes(kd.attestationChallenge, input.challenge), 'challenge_mismatch');
  const claimed = p256Key(input.publicKey);
  check(claimed !== null && claimed.export({ format: 'der', type: 'spki' }).equals(certs[0]!.spki), 'key_mismatch');
  check(kd.hardwareEnforced.origin === ORIGIN_GENERATED, 'key_imported');
  if (options.app) checkApp(kd, options.app);
  const rot = kd.hardwareEnforced.rootOfTrust;
  return {
    platform: 'android',
    security_level: level,
    attestation_version: kd.attestationVersion,
    verified_boot: rot ? { device_locked: rot.deviceLocked, state: BOOT_STATES[rot.verifiedBootState] ?? 'failed' } : null,
  };
}
