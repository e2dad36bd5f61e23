/** Local sign-in: username or email, bcrypt-checked password (SPEC "Sign-in flows": Local). */
import type { CredentialService } from '../../credentials/service.js';
import type { PasswordHasher } from '../../credentials/hashing.js';
import type { LoginAttempts } from '../../policy/lockout.js';
import type { UserStore } from '../../users/store.js';
import type { Authenticated, SignInStrategy, Subject } from '../strategy.js';

export interface LocalInput {
  username: string;
  password: string;
}

export interface LocalStrategyDeps {
  users: UserStore;
  credentials: CredentialService;
  hasher: PasswordHasher;
  attempts: LoginAttempts;
}

export class LocalStrategy implements SignInStrategy<LocalInput> {
  readonly name = 'local' as const;

  constructor(private readonly deps: LocalStrategyDeps) {}

  passwordOf(input: LocalInput): string {
    return input.password;
  }

  async subject(input: LocalInput): Promise<Subject> {
    const user = await this.deps.users.findByLogin(input.username.trim());
    return { key: this.deps.attempts.subjectKey(user?.id, input.username), identifier: input.username, user };
  }

  async authenticate(input: LocalInput, subject: Subject): Promise<Authenticated | null> {
    if (!subject.user) {
      await this.deps.hasher.dummyVerify(input.password, subject.key); // same time as a real check
      return null;
    }
    const state = await this.deps.credentials.state(subject.user.id);
    const ok = await this.deps.hasher.verify(input.password, state?.hash ?? null, subject.key);
    return ok && state ? { user: subject.user, password: state } : null;
  }
}
