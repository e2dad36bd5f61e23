/**
 * A passkey as a second factor or a step-up: the answer is checked like any factor's code, an
 * attempt reserved first on the account's second-factor counter (`MFA_MAX_FAILURES`, shared with
 * the other factors: 429 MFA_LOCKED), a failure audited MFA_FAILED, a success clearing the count.
 */
import { auditContext } from '../audit/service.js';
import type { MfaAttempts } from '../mfa/attempts.js';
import { secondFactorLimit } from '../mfa/attempts.js';
import type { ChallengeService, MfaContext } from '../mfa/challenge.js';
import { MfaErrors } from '../mfa/errors.js';
import type { Config } from '../platform/config.js';
import { retryLater } from '../platform/errors.js';
import type { UserRow } from '../users/store.js';
import { PasskeyErrors } from './errors.js';
import type { PasskeyService } from './service.js';
import type { ChallengeBinding } from './store.js';
import type { AuthenticationResponseJSON } from './webauthn.js';

export interface FactorCheckDeps {
  config: Pick<Config, 'mfa'>;
  passkeys: PasskeyService;
  mfaAttempts: MfaAttempts;
  challenges: ChallengeService;
}

/** Throws 400 PASSKEY_CHALLENGE_INVALID, 401 PASSKEY_INVALID or 429 MFA_LOCKED unless the answer proves one of `user`'s passkeys. */
export async function checkPasskeyFactor(d: FactorCheckDeps, user: UserRow, ctx: MfaContext, binding: ChallengeBinding, challengeId: string, response: AuthenticationResponseJSON): Promise<void> {
  const limit = secondFactorLimit(d.config);
  const reservation = await d.mfaAttempts.reserve(user.id, 'second_factor', limit);
  if (!reservation.ok) {
    const locked = retryLater(MfaErrors.MFA_LOCKED, reservation.retryAfterSec);
    await d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'passkey', { reason: 'locked', ...locked.details });
    throw locked;
  }
  const outcome = await d.passkeys.verifyAssertion(challengeId, binding, response, auditContext(ctx));
  if (outcome.ok) {
    await d.mfaAttempts.clear(user.id, 'second_factor');
    return;
  }
  await d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'passkey', { reason: outcome.reason, purpose: binding.purpose, failed_count: reservation.failedCount });
  if (reservation.failedCount >= limit.max) await d.challenges.audit('MFA_LOCKED', 'SUCCESS', user, ctx, 'passkey', { locked_minutes: limit.lockMinutes });
  throw outcome.reason === 'challenge' ? PasskeyErrors.PASSKEY_CHALLENGE_INVALID() : PasskeyErrors.PASSKEY_INVALID();
}
