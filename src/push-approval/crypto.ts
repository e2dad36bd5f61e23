/**
 * The push-approval factor's cryptography: the three numbers the phone offers, and the check of a
 * signature made by the key the phone keeps in its secure hardware (Android Keystore, iOS Secure
 * Enclave): ECDSA on P-256 with SHA-256, the signature DER-encoded, both in base64url.
 */
import { createPublicKey, randomInt, verify, type KeyObject } from 'node:crypto';

/** The prefix of what the phone signs to confirm its key at enrolment. */
export const ENROL_PREFIX = 'strongroom-push-approval-enrol';
/** The prefix of what the phone signs to answer a sign-in request (versioned). */
export const ANSWER_PREFIX = 'strongroom-push-approval:v1';

/** What the phone's answer signs: a fraud report is a decision of its own, so it cannot be added or removed. */
export type AnswerDecision = 'approve' | 'deny' | 'deny_fraud';

export const enrolMessage = (userUuid: string, challenge: string): string => `${ENROL_PREFIX}|${userUuid}|${challenge}`;
export const answerMessage = (userUuid: string, requestId: string, decision: AnswerDecision, choice: number | undefined): string =>
  `${ANSWER_PREFIX}|${userUuid}|${requestId}|${decision}|${choice ?? ''}`;

/**
 * The number to show on the sign-in page (10-99) and the three the phone offers: that number and
 * two other distinct two-digit numbers, in random order. `random(min, max)` returns an integer in
 * [min, max) (node:crypto's `randomInt` by default).
 */
export function drawNumbers(random: (min: number, max: number) => number = randomInt): { number: number; choices: [number, number, number] } {
  const number = random(10, 100);
  const picked = new Set([number]);
  while (picked.size < 3) picked.add(random(10, 100));
  const choices = [...picked];
  for (let i = choices.length - 1; i > 0; i--) { // Fisher-Yates
    const j = random(0, i + 1);
    [choices[i], choices[j]] = [choices[j]!, choices[i]!];
  }
  return { number, choices: choices as [number, number, number] };
}

/** The P-256 public key in `spkiB64u` (SPKI DER, base64url), or null when it is not one. */
export function parsePublicKey(spkiB64u: string): KeyObject | null {
  try {
    const key = createPublicKey({ key: Buffer.from(spkiB64u, 'base64url'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return null;
    return key;
  } catch {
    return null;
  }
}

/** Whether `signatureB64u` (ECDSA P-256 SHA-256, DER, base64url) signs `message` under the key `spkiB64u`. Never throws. */
export function verifySignature(spkiB64u: string, message: string, signatureB64u: string): boolean {
  const key = parsePublicKey(spkiB64u);
  if (!key) return false;
  try {
    return verify('sha256', Buffer.from(message, 'utf8'), { key, dsaEncoding: 'der' }, Buffer.from(signatureB64u, 'base64url'));
  } catch {
    return false;
  }
}
