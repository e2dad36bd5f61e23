/**
 * Passwordless sign-in with a passkey, through the one sign-in pipeline (src/signin/pipeline.ts)
 * like every other method: rate limits, lockout, account state, access policy, risk and audit
 * are the pipeline's. The credential id of the answer names the account. A passkey proves both
 * possession (the device's key) and the person (user verification, always required), so the
 * strategy is `multiFactor`: the session is `mfa_completed` and no further factor is asked.
 *
 * Every failure (unknown credential, spent or expired challenge, wrong origin, bad signature, a
 * counter that went back) returns null: the pipeline answers the same 401 INVALID_CREDENTIALS as
 * for a wrong password. A counter that went back is audited PASSKEY_CLONE_DETECTED by the service.
 */
import type { AuditContext } from '../audit/service.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Authenticated, SignInStrategy, Subject } from '../signin/strategy.js';
import type { UserStore } from '../users/store.js';
import type { PasskeyService } from './service.js';
import type { AuthenticationResponseJSON } from './webauthn.js';

export interface PasskeyInput {
  challengeId: string;
  response: AuthenticationResponseJSON;
  /** The request's audit context (a clone is audited while the answer is checked). */
  audit: AuditContext;
}

export class PasskeyStrategy implements SignInStrategy<PasskeyInput> {
  readonly name = 'passkey' as const;
  readonly multiFactor = true;
  /** The value of each attempt's challenge, spent by `subject`. */
  private readonly spent = new WeakMap<PasskeyInput, string>();

  constructor(private readonly deps: { passkeys: PasskeyService; users: UserStore; attempts: LoginAttempts }) {}

  /**
   * Spends the challenge first: an answer to a spent, expired or unknown challenge (a replay, the
   * rest of a parallel burst) names no account, so it counts against the client's own attempts
   * (the pipeline's key for an unknown identifier), never toward locking the passkey's owner out.
   */
  async subject(input: PasskeyInput): Promise<Subject> {
    const credentialId = String(input.response.id);
    const anonymous = `passkey ${credentialId.slice(0, 16)}`;
    const challenge = await this.deps.passkeys.store.consumeChallenge(input.challengeId, { purpose: 'signin', userId: null });
    if (challenge === undefined) return { key: this.deps.attempts.subjectKey(undefined, anonymous), identifier: anonymous, user: undefined };
    this.spent.set(input, challenge);
    const passkey = await this.deps.passkeys.store.byCredential(credentialId);
    const user = passkey ? await this.deps.users.findById(passkey.userId) : undefined;
    const identifier = user?.username ?? anonymous;
    return { key: this.deps.attempts.subjectKey(user?.id, identifier), identifier, user };
  }

  async authenticate(input: PasskeyInput, subject: Subject): Promise<Authenticated | null> {
    const challenge = this.spent.get(input);
    if (challenge === undefined || !subject.user) return null;
    const outcome = await this.deps.passkeys.verifyAnswer(challenge, { purpose: 'signin', userId: null }, input.response, input.audit);
    return outcome.ok && outcome.passkey.userId === subject.user.id ? { user: subject.user } : null;
  }
}
