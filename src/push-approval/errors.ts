/** Errors of the push-approval factor (src/push-approval; docs/push-approval.md). */
import { defineErrors } from '../platform/errors.js';

export const PushApprovalErrors = defineErrors({
  /** `public_key` is not a P-256 public key in SPKI DER, base64url. */
  PUSH_APPROVAL_KEY_INVALID: { status: 400, message: 'The public key is not a P-256 key (SPKI DER, base64url).' },
  /** `device_id` is not one of the caller's active mobile devices. */
  PUSH_APPROVAL_DEVICE_NOT_FOUND: { status: 404, message: 'No such active mobile device on this account.' },
  /** The enrolment was not started, or its challenge expired (5 minutes): start again. */
  PUSH_APPROVAL_SETUP_EXPIRED: { status: 400, message: 'No push-approval enrolment is waiting, or it expired; start again.' },
  /** The key attestation sent at enrolment does not verify: `details.reason` says why (src/push-approval/attestation/errors.ts). */
  PUSH_APPROVAL_ATTESTATION_INVALID: { status: 400, message: 'The key attestation does not prove the key was made in the phone\'s secure hardware for this enrolment.' },
  /** PUSH_APPROVAL_ATTESTATION=required and the confirmation carries no key attestation. */
  PUSH_APPROVAL_ATTESTATION_REQUIRED: { status: 400, message: 'A key attestation is required to enrol a phone.' },
  /** The signature does not verify under the enrolled key (or the key being enrolled). */
  PUSH_APPROVAL_SIGNATURE_INVALID: { status: 401, message: 'The signature does not verify with the push-approval key.' },
  /** No request with this id for this sign-in (or this account). */
  PUSH_APPROVAL_NOT_FOUND: { status: 404, message: 'No such push-approval request.' },
  /** The phone has not answered yet: ask again after `Retry-After` seconds. */
  PUSH_APPROVAL_PENDING: { status: 409, message: 'The push-approval request is waiting for the phone\'s answer.' },
  /** The request was answered already, or expired, before this answer. */
  PUSH_APPROVAL_ANSWERED: { status: 409, message: 'This push-approval request was already answered or has expired.' },
  /** The approved step-up was completed already: an approval is used once. */
  PUSH_APPROVAL_USED: { status: 409, message: 'This approval was already used; ask for a new one.' },
  /** The phone denied the sign-in, or picked the wrong number. */
  PUSH_APPROVAL_DENIED: { status: 403, message: 'The sign-in was denied on the phone.' },
  /** The phone did not answer within 5 minutes: ask for a new request. */
  PUSH_APPROVAL_EXPIRED: { status: 410, message: 'The push-approval request expired; ask for a new one.' },
  /** Too many requests for this account in the last hour (PUSH_APPROVAL_MAX_PER_HOUR): `Retry-After`. */
  PUSH_APPROVAL_TOO_MANY: { status: 429, message: 'Too many push-approval requests for this account; try again later.' },
  /** The phone could not be reached (push not configured, or no active bound device). */
  PUSH_APPROVAL_UNAVAILABLE: { status: 503, message: 'The phone cannot be reached for a push approval now.' },
});
