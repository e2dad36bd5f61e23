/**
 * One interface for every sign-in method (local now; LDAP and SAML plug in the same way), in
 * the manner of Ory Kratos's `selfservice/strategy/*`: a strategy names the account an attempt
 * is about and checks the secret; everything else (rate limit, lockout, password state, access
 * policy, MFA, tokens, session, audit) is the pipeline's, the same for every method.
 */
import type { PasswordState } from '../credentials/service.js';
import type { Grants, UserRow } from '../users/store.js';

export type StrategyName = 'local' | 'ldap' | 'saml' | 'pin' | 'passkey';

export interface Subject {
  /** Lockout counter key for this attempt. */
  key: string;
  /** The identifier as typed, for the audit trail. */
  identifier: string;
  /** The account, when the identifier names one. */
  user: UserRow | undefined;
}

/** A right secret: the user, and the local password's state when the strategy checked one. */
export interface Authenticated {
  user: UserRow;
  /**
   * Present when a local password was checked: its expiry and temporary flag then apply (a
   * forced change), read once with the hash. Absent for methods whose password lives elsewhere.
   */
  password?: PasswordState;
  /** The user's roles and permissions, when the strategy read them just now (the pipeline reads them otherwise). */
  grants?: Grants;
}

export interface SignInStrategy<Input> {
  readonly name: StrategyName;
  /** The message of its 401 INVALID_CREDENTIALS, in the words of its channel (default: username or password). */
  readonly invalidMessage?: string;
  /** Its password lives elsewhere (a directory): no local expiry to read or warn about. */
  readonly passwordElsewhere?: boolean;
  /**
   * Its proof is two factors by itself (a passkey: the device's key and the person's fingerprint,
   * face or device PIN): the sign-in completes with `mfa_completed` and no second factor is asked.
   */
  readonly multiFactor?: boolean;
  /**
   * The password the attempt carries, when this method checks one here: asked, once it proved
   * right, whether it is in the operator's breach corpus (the `breached_password` risk signal).
   */
  passwordOf?(input: Input): string;
  subject(input: Input): Promise<Subject>;
  /** The user when the secret is right, otherwise null. Takes the same time either way. */
  authenticate(input: Input, subject: Subject): Promise<Authenticated | null>;
}
