/**
 * The key attestation of a push-approval enrolment: what the phone sends with its confirmation
 * (Android's Keystore certificate chain, or iOS App Attest's key id and attestation object),
 * checked against this enrolment's challenge and key by the verifier of its platform, with the
 * settings of PUSH_APPROVAL_ATTESTATION (src/platform/config-push-approval.ts). What is stored is
 * the verifier's result without Apple's receipt.
 */
import type { Clock } from '../../platform/clock.js';
import type { PushApprovalAttestationConfig } from '../../platform/config-push-approval.js';
import { verifyAndroidKeyAttestation, type AndroidAttestationResult } from './android.js';
import { verifyAppAttestation, type AppAttestResult } from './apple.js';
import { check } from './errors.js';

/** The `attestation` of the confirmation body. */
export type EnrolmentAttestation =
  | { format: 'android-key'; certificate_chain: string[] }
  | { format: 'apple-appattest'; key_id: string; attestation_object: string };

/** What is stored of a verified attestation (`push_approval_keys.attestation`). */
export type StoredAttestation = AndroidAttestationResult | Omit<AppAttestResult, 'receipt'>;

/** How the key was proved: in a TEE or a StrongBox (Android), handed over by the genuine app (iOS App Attest), or not at all. */
export type AttestationLevel = 'tee' | 'strongbox' | 'app_attest' | 'none';
export const ATTESTATION_LEVELS: readonly AttestationLevel[] = ['tee', 'strongbox', 'app_attest', 'none'];

export function levelOf(stored: StoredAttestation | null): AttestationLevel {
  return stored?.security_level ?? 'none';
}

/**
 * Verifies `attestation` for the key `publicKey` (SPKI DER, base64url) enrolled with `challenge`;
 * throws `AttestationError`. Android: the challenge's UTF-8 bytes are the attestation challenge,
 * and in `required` mode PUSH_APPROVAL_ANDROID_PACKAGES must name the app (else
 * `platform_not_accepted`); iOS: App Attest attested SHA-256 of
 * `strongroom-push-approval-attest|<challenge>|<public key>`, and PUSH_APPROVAL_IOS_APP_ID must be set.
 */
export function verifyEnrolmentAttestation(attestation: EnrolmentAttestation, enrolment: { challenge: string; publicKey: string }, config: PushApprovalAttestationConfig, clock: Clock): StoredAttestation {
  if (attestation.format === 'android-key') {
    const { packageNames, signatureDigests, roots } = config.android;
    // `required` means our app's key in secure hardware: without the app's packages there is
    // nothing to check the app against, as for iOS without its App ID. `optional` takes any app's hardware key.
    check(packageNames.length > 0 || config.mode !== 'required', 'platform_not_accepted', 'PUSH_APPROVAL_ANDROID_PACKAGES is not set');
    return verifyAndroidKeyAttestation(
      { certificateChain: attestation.certificate_chain, challenge: Buffer.from(enrolment.challenge, 'utf8'), publicKey: enrolment.publicKey },
      { clock, ...(roots ? { trustedRoots: roots } : {}), ...(packageNames.length > 0 ? { app: { packageNames, signatureDigests } } : {}) },
    );
  }
  const { appId, allowDevelopment, roots } = config.ios;
  check(appId !== undefined, 'platform_not_accepted', 'PUSH_APPROVAL_IOS_APP_ID is not set');
  const { receipt: _receipt, ...stored } = verifyAppAttestation(
    { keyId: attestation.key_id, attestation: attestation.attestation_object, challenge: enrolment.challenge, publicKey: enrolment.publicKey },
    { clock, appId, allowDevelopment, ...(roots ? { trustedRoots: roots } : {}) },
  );
  return stored;
}
