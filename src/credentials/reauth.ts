/**
 * Re-authentication of a signed-in user with their current password, before an action a
 * stolen access token alone must not be able to take (changing the password, replacing the
 * security answers, enrolling an authenticator app). A wrong password counts toward the
 * account lockout exactly as a failed sign-in does (401 INVALID_CREDENTIALS, then 429
 * ACCOUNT_LOCKED with Retry-After), and is audited.
 */
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { PasswordHasher } from './hashing.js';
import type { CredentialService } from './service.js';
import type { LoginAttempts } from '../policy/lockout.js';
import { SignInErrors } from '../signin/errors.js';
import type { UserRow } from '../users/store.js';

export interface ReauthDeps {
  attempts: LoginAttempts;
  credentials: CredentialService;
  hasher: PasswordHasher;
  audit: AuditLog;
}

/** Resolves when `password` is the user's current one; `action` names the route in the audit trail. */
export async function confirmCurrentPassword(d: ReauthDeps, user: UserRow, password: string, ctx: AuditContext, action: string): Promise<void> {
  const key = d.attempts.userKey(user.id);
  const locked = await d.attempts.lockedUntil(key);
  if (locked !== null) throw d.attempts.lockedError(locked);
  const state = await d.credentials.state(user.id);
  if (await d.hasher.verify(password, state?.hash ?? null)) {
    await d.attempts.reset(key);
    return;
  }
  const r = await d.attempts.recordFailure(key);
  const base = { ...ctx, userId: user.uuid, username: user.username };
  await d.audit.record({ ...base, eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', details: { reason: 'invalid_current_password', failed_count: r.failedCount, action } });
  if (r.lockedUntil !== null) {
    await d.audit.record({ ...base, eventType: 'ACCOUNT_LOCKED', status: 'SUCCESS', details: { locked_until: new Date(r.lockedUntil).toISOString() } });
    throw d.attempts.lockedError(r.lockedUntil);
  }
  throw SignInErrors.INVALID_CREDENTIALS({}, { message: 'The current password is incorrect.' });
}
