/**
 * bcrypt (cost 12 by default) off the event loop (@node-rs/bcrypt runs on the libuv pool).
 *
 * bcrypt reads at most 72 bytes of its input and stops at a NUL byte in many implementations.
 * Rather than silently ignore the rest, the policy refuses such passwords when they are set,
 * and `verify` refuses them outright, so "first 72 bytes + anything" can never sign in.
 */
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';

export const BCRYPT_MAX_BYTES = 72;

export function bcryptSafe(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES && !password.includes('\0');
}

export class PasswordHasher {
  private dummy: Promise<string> | undefined;

  constructor(readonly cost: number) {}

  async hash(password: string): Promise<string> {
    if (!bcryptSafe(password)) throw new Error('password not bcrypt-safe; the policy must refuse it first');
    return bcryptHash(password, this.cost);
  }

  /** Constant-time bcrypt comparison; false for anything bcrypt cannot hold whole. */
  async verify(password: string, hash: string | null): Promise<boolean> {
    if (hash === null || !bcryptSafe(password)) {
      await this.dummyVerify(password);
      return false;
    }
    try {
      return await bcryptVerify(password, hash);
    } catch {
      return false;
    }
  }

  /**
   * Spends the same time as a real verify, for unknown users and refused inputs, so the answer
   * time does not tell whether an account exists (ruling 6).
   */
  async dummyVerify(password: string): Promise<void> {
    this.dummy ??= bcryptHash('strongroom-dummy-password', this.cost);
    const safe = bcryptSafe(password) ? password : password.replace(/\0/g, '').slice(0, 32);
    await bcryptVerify(safe, await this.dummy).catch(() => false);
  }
}
