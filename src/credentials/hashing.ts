/**
 * bcrypt (cost 12 by default) off the event loop (the `bcrypt` addon hashes on the libuv pool).
 *
 * bcrypt reads at most 72 bytes of its input and stops at a NUL byte in many implementations.
 * Rather than silently ignore the rest, the policy refuses such passwords when they are set,
 * and `verify` refuses them outright, so "first 72 bytes + anything" can never sign in.
 */
import os from 'node:os';
import bcrypt from 'bcrypt';
import { inSpan, SpanKind } from '../platform/observability/tracing.js';
import { retryLater } from '../platform/errors.js';
import { CredentialErrors } from './errors.js';

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

/**
 * At most `limit` tasks at once. Waiting tasks queue per *lane* (the account the work is for)
 * and are served one lane at a time, in turn: a caller with many comparisons queued delays
 * another account's sign-in by at most one comparison per busy lane, not by its whole queue
 * (issue 9, section 3; a plain first-come queue let one user's parallel re-authentications
 * hold another's sign-in for seconds).
 */
export class FairGate {
  private active = 0;
  /** Lanes with waiting tasks, in turn order (a Map keeps insertion order). */
  private readonly lanes = new Map<string, Array<() => void>>();

  constructor(private readonly limit: number) {}

  async run<T>(lane: string, task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.enqueue(lane, resolve)); // the slot is handed over
    try {
      return await task();
    } finally {
      this.handOver();
    }
  }

  /** Tasks waiting for a slot, all lanes together. */
  get waiting(): number {
    let n = 0;
    for (const q of this.lanes.values()) n += q.length;
    return n;
  }

  private enqueue(lane: string, resolve: () => void): void {
    const queue = this.lanes.get(lane);
    if (queue) queue.push(resolve);
    else this.lanes.set(lane, [resolve]);
  }

  /** Gives the freed slot to the next lane in turn; that lane goes to the back of the turn. */
  private handOver(): void {
    const first = this.lanes.entries().next();
    if (first.done) {
      this.active--;
      return;
    }
    const [lane, queue] = first.value;
    const next = queue.shift()!;
    this.lanes.delete(lane);
    if (queue.length > 0) this.lanes.set(lane, queue);
    next();
  }
}

/** The lane of work no request is waiting for (start-up, jobs). */
const SYSTEM_LANE = 'system';

/** The lane of work for one account (the same key as its lockout counter). */
export const accountLane = (userId: number): string => `u:${userId}`;

export function bcryptSafe(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES && !password.includes('\0');
}

/** SIGNIN_MAX_QUEUED's default: about 12 s of bcrypt-12 on two cores. */
export const DEFAULT_MAX_QUEUED = 100;

export class PasswordHasher {
  private dummy: Promise<string> | undefined;
  private readonly gate: FairGate;

  /**
   * `maxQueued`: requests' bcrypt work waiting for a slot, beyond which more is refused at once
   * (`503 SIGNIN_BUSY`, see `admit`); work of no request (start-up, jobs) always queues.
   */
  constructor(readonly cost: number, concurrency = DEFAULT_BCRYPT_CONCURRENCY, private readonly maxQueued = DEFAULT_MAX_QUEUED) {
    this.gate = new FairGate(concurrency);
  }

  /** `lane`: the account the work is for (see `FairGate`). */
  async hash(password: string, lane = SYSTEM_LANE): Promise<string> {
    if (!bcryptSafe(password)) throw new Error('password not bcrypt-safe; the policy must refuse it first');
    if (lane !== SYSTEM_LANE) this.admit();
    return this.timed('hash', lane, () => bcryptHash(password, this.cost));
  }

  /**
   * Load shedding: when more password checks wait than the node can do in about `maxQueued`
   * bcrypt times, a new one is refused before it queues (`503 SIGNIN_BUSY` with Retry-After)
   * instead of waiting for minutes behind a flood while its client has given up. Checked before
   * any comparison, for known and unknown accounts alike (the answer tells nothing about the
   * account), and thrown before the caller's attempt is judged, so it counts as no failure.
   */
  private admit(): void {
    if (this.gate.waiting >= this.maxQueued) throw retryLater(CredentialErrors.SIGNIN_BUSY, 2);
  }

  /** Constant-time bcrypt comparison; false for anything bcrypt cannot hold whole. */
  async verify(password: string, hash: string | null, lane = SYSTEM_LANE): Promise<boolean> {
    this.admit();
    if (hash === null || !bcryptSafe(password)) {
      await this.dummyVerify(password, lane);
      return false;
    }
    try {
      return await this.timed('compare', lane, () => bcryptVerify(password, hash));
    } catch {
      return false;
    }
  }

  /**
   * Spends the same time as a real verify, for unknown users and refused inputs, so the answer
   * time does not tell whether an account exists (ruling 6).
   */
  async dummyVerify(password: string, lane = SYSTEM_LANE): Promise<void> {
    this.admit();
    this.dummy ??= this.timed('hash', SYSTEM_LANE, () => bcryptHash('strongroom-dummy-password', this.cost));
    const safe = bcryptSafe(password) ? password : password.replace(/\0/g, '').slice(0, 32);
    const dummy = await this.dummy;
    await this.timed('compare', lane, () => bcryptVerify(safe, dummy)).catch(() => false);
  }

  /**
   * `task` through the gate, in a span `bcrypt hash` or `bcrypt compare` (the same for a dummy
   * comparison as for a real one) with the configured cost (never the stored hash's, which would
   * tell an old account from an unknown one) and the time it waited for a slot
   * (`strongroom.bcrypt.wait_ms`): where a slow sign-in queued and where it computed.
   */
  private timed<T>(operation: 'hash' | 'compare', lane: string, task: () => Promise<T>): Promise<T> {
    return inSpan(`bcrypt ${operation}`, { 'strongroom.bcrypt.cost': this.cost }, (span) => {
      const queued = performance.now();
      return this.gate.run(lane, () => {
        span.setAttribute('strongroom.bcrypt.wait_ms', Math.round((performance.now() - queued) * 100) / 100);
        return task();
      });
    }, SpanKind.INTERNAL);
  }
}
