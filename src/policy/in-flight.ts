/**
 * How many password checks one caller may have in flight on this node at once (issue 9,
 * section 3). bcrypt is the scarcest thing a node has: a few comparisons per core per second.
 * The sign-in rate limit counts requests per minute, but a burst within that minute (or a
 * stream of made-up usernames, each its own lockout subject) could still fill the hashing
 * queue in front of everyone else. A caller over its bound is refused at once, 429
 * RATE_LIMITED with Retry-After, before it reserves an attempt or queues any bcrypt.
 *
 * Counted per node in memory: the queue it protects is the node's own.
 */
import { CommonErrors, retryLater } from '../platform/errors.js';

/** The in-flight key of a client network (hashed, src/policy/network.ts). */
export const ipInFlightKey = (networkHash: string): string => `ip:${networkHash}`;

export class InFlightLimit {
  private readonly counts = new Map<string, number>();

  /** `max`: checks one key may have in flight (SIGNIN_MAX_IN_FLIGHT_PER_IP). */
  constructor(readonly max: number) {}

  /**
   * Enters one check for every key (the client address; the account too where it is known),
   * or throws 429 RATE_LIMITED without entering any. Returns the function that leaves.
   */
  enter(keys: readonly string[]): () => void {
    if (keys.some((k) => (this.counts.get(k) ?? 0) >= this.max)) throw retryLater(CommonErrors.RATE_LIMITED, 1);
    for (const k of keys) this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      for (const k of keys) {
        const n = (this.counts.get(k) ?? 1) - 1;
        if (n <= 0) this.counts.delete(k);
        else this.counts.set(k, n);
      }
    };
  }

  /** Keys with a check in flight (for tests and metrics). */
  get size(): number {
    return this.counts.size;
  }
}
