/**
 * bcrypt (cost 12 by default) off the event loop (the `bcrypt` addon hashes on the libuv pool).
 *
 * bcrypt reads at most 72 bytes of its input and stops at a NUL byte in many implementations.
 * Rather than silently ignore the rest, the policy refuses such passwords when they are set,
 * and `verify` refuses them outright, so "first 72 bytes + anything" can never sign in.
 */
import os from 'node:os';
import bcrypt from 'bcrypt';

const bcryptHash = (password: string, cost: number): Promise<string> => bcrypt.hash(password, cost);
const bcryptVerify = (password: string, hash: string): Promise<boolean> => bcrypt.compare(password, hash);

export const BCRYPT_MAX_BYTES = 72;

/**
 * bcrypt runs on the libuv pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which
 * file, DNS and other crypto work share. With the pool full of 0.25 s hashes, every such job
 * would queue behind them while sign-ins are busy (validate p99 rose to 316 ms before this
 * gate, docs/benchmarks.md). One bcrypt per core already keeps the CPU busy, so at most that
 * many run at once (never the whole pool), first come first served.
 */
export const DEFAULT_BCRYPT_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism(), 3));

/** At most `limit` tasks at once; the others wait in arrival order. */
class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

export function bcryptSafe(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES && !password.includes('\0');
}

export class PasswordHasher {
  private dummy: Promise<string> | undefined;
  private readonly gate: Gate;

  constructor(readonly cost: number, concurrency = DEFAULT_BCRYPT_CONCURRENCY) {
    this.gate = new Gate(concurrency);
  }

  async hash(password: string): Promise<string> {
    if (!bcryptSafe(password)) throw new Error('password not bcrypt-safe; the policy must refuse it first');
    return this.gate.run(() => bcryptHash(password, this.cost));
  }

  /** Constant-time bcrypt comparison; false for anything bcrypt cannot hold whole. */
  async verify(password: string, hash: string | null): Promise<boolean> {
    if (hash === null || !bcryptSafe(password)) {
      await this.dummyVerify(password);
      return false;
    }
    try {
      return await this.gate.run(() => bcryptVerify(password, hash));
    } catch {
      return false;
    }
  }

  /**
   * Spends the same time as a real verify, for unknown users and refused inputs, so the answer
   * time does not tell whether an account exists (ruling 6).
   */
  async dummyVerify(password: string): Promise<void> {
    this.dummy ??= this.gate.run(() => bcryptHash('strongroom-dummy-password', this.cost));
    const safe = bcryptSafe(password) ? password : password.replace(/\0/g, '').slice(0, 32);
    const dummy = await this.dummy;
    await this.gate.run(() => bcryptVerify(safe, dummy)).catch(() => false);
  }
}
