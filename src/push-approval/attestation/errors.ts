/**
 * Why a key attestation was refused: one stable reason per failure. The verifiers throw
 * `AttestationError`; the enrolment route maps it to one HTTP error with the reason in
 * `details.reason` (docs/push-approval.md).
 */
export const ATTESTATION_REASONS = {
  /** The chain, a certificate, the CBOR object or an extension could not be decoded. */
  malformed: 'The attestation could not be decoded.',
  /** A certificate of the chain is not signed by the next one. */
  chain_signature_invalid: 'A certificate of the attestation chain is not signed by the next one.',
  /** The chain does not end at a trusted root (Google's hardware attestation roots, Apple's App Attestation root). */
  chain_untrusted: 'The attestation chain does not end at a trusted root.',
  /** A certificate of the chain is expired or not yet valid. */
  certificate_expired: 'A certificate of the attestation chain is outside its validity period.',
  /** A certificate of the chain is on the revocation list (Google's attestation status list). */
  certificate_revoked: 'A certificate of the attestation chain has been revoked.',
  /** A certificate above the attested key's also carries a key description: someone extended a genuine chain. */
  chain_extended: 'The attestation chain was extended below an attested key.',
  /** The attested key's certificate has no key description, or it does not parse. */
  key_description_invalid: 'The key description of the attested key is missing or invalid.',
  /** The key lives in software, not in a TEE or StrongBox. */
  software_key: 'The key is not kept in secure hardware.',
  /** The key was imported into the secure hardware, not generated there (a copy may exist outside). */
  key_imported: 'The key was not generated in the secure hardware.',
  /** The attestation was made for another enrolment (another challenge). */
  challenge_mismatch: 'The attestation was not made for this enrolment.',
  /** The attested key is not the key being enrolled (or not the App Attest key named). */
  key_mismatch: 'The attested key is not the key being enrolled.',
  /** The attestation comes from another app (package, signing certificate, or App ID). */
  app_mismatch: 'The attestation comes from another app.',
  /** Not an App Attest attestation object (`fmt` is not apple-appattest). */
  format_invalid: 'The attestation is not in the expected format.',
  /** A development App Attest key where only production ones are accepted, or an unknown environment. */
  environment_refused: 'The attestation comes from an app environment that is not accepted.',
  /** The App Attest key was used before (its counter is not 0): an attestation is made once. */
  counter_not_zero: 'The App Attest key was used before its attestation.',
  /** No app of this platform is configured (PUSH_APPROVAL_IOS_APP_ID unset for App Attest; PUSH_APPROVAL_ANDROID_PACKAGES unset in `required` mode): nothing to check the attestation against. */
  platform_not_accepted: 'The service accepts no attestation from this platform.',
} as const;

export type AttestationReason = keyof typeof ATTESTATION_REASONS;

/** A refused attestation: `reason` is stable (it goes to `details.reason`); `message` says it for people. */
export class AttestationError extends Error {
  constructor(readonly reason: AttestationReason, detail?: string) {
    super(detail === undefined ? ATTESTATION_REASONS[reason] : `${ATTESTATION_REASONS[reason]} (${detail})`);
    this.name = 'AttestationError';
  }
}

/** Throws `reason` unless `ok`. */
export function check(ok: boolean, reason: AttestationReason, detail?: string): asserts ok {
  if (!ok) throw new AttestationError(reason, detail);
}
