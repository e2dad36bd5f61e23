/**
 * Re-authentication of a signed-in user with their current password (or, through
 * `confirmSecret`, another secret such as the USSD PIN), before an action a stolen access token
 * alone must not be able to take (changing the password or PIN, replacing the security answers,
 * enrolling an authenticator app). It is limited exactly as a sign-in is:
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
import type { AttemptLimits, LoginAttempts } from '../policy/lockout.js';
import { clientNetwork } from '../policy/network.js';
import { signinRateKey, type RateLimiter } from '../policy/rate-limit.js';
import { SignInErrors } from '../signin/errors.js';
import { TokenErrors } from '../tokens/errors.js';
import type { ResetClaims, TokenService } from '../tokens/service.js';
import type { UserRow, UserStore } from '../users/store.js';

/** What any current-secret check uses: the address's sign-in rate, the in-flight bound, the lockout. */
export interface SecretCheckDeps {
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  ipHasher: Hasher;
  config: Pick<Config, 'signin' | 'rateLimits'>;
}

export interface ReauthDeps extends SecretCheckDeps {
  credentials: CredentialService;
  hasher: PasswordHasher;
}

/** One check of a current secret (a password, a PIN), as `confirmSecret` runs it. */
export interface SecretCheck {
  /** Who the check is about, for the audit trail (no account: the identifier as given, masked). */
  who: { userId: string | undefined; username: string };
  /** The lockout counter the check takes its attempt from. */
  key: string;
  /** True when the secret is right: one bcrypt comparison (a dummy one when there is nothing to compare). */
  verify: () => Promise<boolean>;
  /** FAILED_LOGIN_ATTEMPT reason; and the message of the 401 INVALID_CREDENTIALS. */
  reason: string;
  message: string;
  /**
   * The route's own rate limit already counts this check, so it does not also count toward the
   * client network's sign-in budget: a USSD gateway speaks for many subscribers from one address,
   * and its routes count per gateway and per subscriber. The in-flight bound always counts the network.
   */
  rateCountedByRoute?: boolean;
  /** Also bound the in-flight checks of `key` itself (a signed-in caller re-authenticating). */
  boundKey: boolean;
  /** The channel's failed-attempt limit and lock length, when the check is a channel's sign-in in all but name (USSD). */
  limits?: AttemptLimits;
}

/**
 * Resolves when the secret is right, else throws 401 INVALID_CREDENTIALS (429 ACCOUNT_LOCKED
 * with Retry-After once the counter locks). Counts toward the network's sign-in rate (429
 * RATE_LIMITED), holds one of its in-flight slots, and takes one reserved attempt of `key`
 * before the comparison (src/policy/lockout.ts), whatever the concurrency. `andThen` is the
 * bcrypt work the caller does next (a new secret's rules and history): it runs inside the same
 * in-flight slot, so the caller's bound covers it too.
 */
export async function confirmSecret(d: SecretCheckDeps, check: SecretCheck, ctx: AuditContext, action: string): Promise<void>;
export async function confirmSecret<T>(d: SecretCheckDeps, check: SecretCheck, ctx: AuditContext, action: string, andThen: () => Promise<T>): Promise<T>;
export async function confirmSecret<T>(d: SecretCheckDeps, check: SecretCheck, ctx: AuditContext, action: string, andThen?: () => Promise<T>): Promise<T | undefined> {
  const networkHash = ctx.ip ? d.ipHasher.hex(clientNetwork(ctx.ip)) : undefined;
  const rule = d.config.rateLimits.signin.ip;
  if (networkHash && rule && !check.rateCountedByRoute) await d.rateLimiter.hit(signinRateKey(networkHash), rule);
  // At most SIGNIN_MAX_IN_FLIGHT_PER_IP checks per address (and per account) in flight, refused
  // before any reservation or bcrypt (issue 9, section 3).
  const keys = [...(networkHash ? [ipInFlightKey(networkHash)] : []), ...(check.boundKey || !networkHash ? [check.key] : [])];
  const leave = d.inFlight.enter(keys);
  try {
    const attempt = await d.attempts.attempt(check.key, async () => ((await check.verify()) ? true : null), check.limits);
    if (attempt.kind === 'ok') return await andThen?.();
    const locked = await d.attempts.refusal(attempt, { ...ctx, ...check.who }, { reason: check.reason, action });
    if (locked) throw locked;
    throw SignInErrors.INVALID_CREDENTIALS({}, { message: check.message });
  } finally {
    leave();
  }
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
  const key = d.attempts.userKey(user.id);
  const check: SecretCheck = {
    who: { userId: user.uuid, username: user.username }, key, boundKey: true,
    verify: () => d.credentials.verifyCurrent(user.id, password, key),
    reason: 'invalid_current_password', message: 'The current password is incorrect.',
  };
  if (andThen) return confirmSecret(d, check, ctx, action, andThen);
  await confirmSecret(d, check, ctx, action);
  return undefined;
}

/**
 * The user a reset token (SPEC "Reset", 10 minutes) stands for, when it was issued for
 * `purpose` (a forced password change, a PIN reset): a token of another purpose, or of a user
 * who is gone, is 401 TOKEN_INVALID. Spending it (single use) is the caller's, in the
 * transaction that uses it.
 */
export async function resetTokenHolder(d: { tokens: TokenService; users: UserStore }, token: string, purpose: string): Promise<{ claims: ResetClaims; user: UserRow }> {
  const claims = await d.tokens.verify(token, 'reset');
  if (claims.purpose !== purpose) throw TokenErrors.TOKEN_INVALID();
  const user = await d.users.findByUuid(claims.user_id);
  if (!user) throw TokenErrors.TOKEN_INVALID();
  return { claims, user };
}
