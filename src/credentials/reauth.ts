/**
 * Re-authentication of a signed-in user with their current password, before an action a
 * stolen access token alone must not be able to take (changing the password, replacing the
 * security answers, enrolling an authenticator app). It is limited exactly as a sign-in is:
 * the address's sign-in rate (429 RATE_LIMITED), and the account's reserved attempts, so a
 * wrong password counts toward the account lockout (401 INVALID_CREDENTIALS, then 429
 * ACCOUNT_LOCKED with Retry-After); it is audited.
 */
import type { AuditContext } from '../audit/service.js';
import type { PasswordHasher } from './hashing.js';
import type { CredentialService } from './service.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import { ipInFlightKey, type InFlightLimit } from '../policy/in-flight.js';
import type { LoginAttempts } from '../policy/lockout.js';
import { clientNetwork } from '../policy/network.js';
import { signinRateKey, type RateLimiter } from '../policy/rate-limit.js';
import { SignInErrors } from '../signin/errors.js';
import type { UserRow } from '../users/store.js';

export interface ReauthDeps {
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  ipHasher: Hasher;
  config: Pick<Config, 'signin'>;
  credentials: CredentialService;
  hasher: PasswordHasher;
}

/**
 * Resolves when `password` is the user's current one; `action` names the route in the audit
 * trail. `andThen` is the bcrypt work the route does next (a new password's rules and history):
 * it runs inside the same in-flight slot, so a caller's bound covers it too.
 */
export async function confirmCurrentPassword(d: ReauthDeps, user: UserRow, password: string, ctx: AuditContext, action: string): Promise<void>;
export async function confirmCurrentPassword<T>(d: ReauthDeps, user: UserRow, password: string, ctx: AuditContext, action: string, andThen: () => Promise<T>): Promise<T>;
export async function confirmCurrentPassword<T>(d: ReauthDeps, user: UserRow, password: string, ctx: AuditContext, action: string, andThen?: () => Promise<T>): Promise<T | undefined> {
  // A password check from an address counts toward that address's sign-in rate, and takes one
  // of the account's reserved attempts (src/policy/lockout.ts): a stolen access token buys no
  // more password guesses than the sign-in form, whatever the concurrency.
  const networkHash = ctx.ip ? d.ipHasher.hex(clientNetwork(ctx.ip)) : undefined;
  if (networkHash) await d.rateLimiter.hit(signinRateKey(networkHash), d.config.signin.rateLimitPerMinute);
  // At most SIGNIN_MAX_IN_FLIGHT_PER_IP checks per address and per account in flight, refused
  // before any reservation or bcrypt (issue 9, section 3).
  const userKey = d.attempts.userKey(user.id);
  const leave = d.inFlight.enter(networkHash ? [ipInFlightKey(networkHash), userKey] : [userKey]);
  try {
    const attempt = await d.attempts.attempt(userKey, async () => {
      const state = await d.credentials.state(user.id);
      return (await d.hasher.verify(password, state?.hash ?? null, userKey)) ? true : null;
    });
    if (attempt.kind === 'ok') return await andThen?.();
    const locked = await d.attempts.refusal(attempt, { ...ctx, userId: user.uuid, username: user.username }, { reason: 'invalid_current_password', action });
    if (locked) throw locked;
    throw SignInErrors.INVALID_CREDENTIALS({}, { message: 'The current password is incorrect.' });
  } finally {
    leave();
  }
}
