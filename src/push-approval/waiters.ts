/**
 * The long poll of `complete` (docs/push-approval.md): a page that sends `wait_seconds` is held
 * until its request leaves `pending` (approved, denied, expired) or the wait ends, then answered
 * as without waiting. Woken by a signal, never by a timer loop: the bus event
 * `push-approval.settled`, which the node that changed the request hears at once (the bus delivers
 * to its own node before it notifies the others) and every other node through NOTIFY. One timer
 * per held request ends its wait. Bounded per node (`max` held in all, `perRequest` per request):
 * past the bound a page is answered at once, as a poll. A client that goes away, and the server
 * closing, release the hold.
 */
import type { EventBus } from '../platform/db/bus.js';

/** Held requests per node, at most. */
export const MAX_WAITING = 1000;
/** Held requests per push-approval request, at most (a page and a reload). */
export const MAX_WAITING_PER_REQUEST = 2;
/** The most request ids one bus notice carries (a NOTIFY payload stays under 8,000 bytes). */
export const SETTLED_BATCH = 100;

/** Why a hold ended. */
export type WaitEnd = 'settled' | 'timeout' | 'aborted' | 'closing';

export interface Hold {
  /** Resolves when the request was announced settled, the wait ended, the client left or the server is closing. */
  readonly ended: Promise<WaitEnd>;
  /** Ends the wait sooner: after `ms` from now, when that is before its end. */
  limit(ms: number): void;
  /** Lets go of the place (idempotent); the hold ends `aborted` if it had not ended. */
  release(): void;
}

interface Entry {
  end(why: WaitEnd): void;
}

export class Waiters {
  private readonly byRequest = new Map<string, Set<Entry>>();
  private held = 0;
  private closing = false;
  private readonly watchers = new Set<() => void>();
  /** At most this many held on this node (MAX_WAITING; tests lower it). */
  max = MAX_WAITING;
  perRequest = MAX_WAITING_PER_REQUEST;

  constructor(bus: EventBus) {
    bus.subscribe((e) => {
      if (e.type === 'push-approval.settled') this.wake(e.requestIds);
    });
    // Notices may have been lost while the listener was away: every held page looks again.
    bus.onReconnect(() => this.wakeAll('settled'));
  }

  /** Held requests on this node. */
  get size(): number {
    return this.held;
  }

  /** Held requests for one push-approval request on this node. */
  holding(requestId: string): number {
    return this.byRequest.get(requestId)?.size ?? 0;
  }

  /**
   * Takes a place to wait up to `ms` for `requestId`, before the caller reads the request (so a
   * change between the read and the wait is not missed); null when the node or the request has
   * no place left, or the server is closing: the caller answers at once.
   */
  hold(requestId: string, ms: number, signal?: AbortSignal): Hold | null {
    const set = this.byRequest.get(requestId) ?? new Set<Entry>();
    if (this.closing || this.held >= this.max || set.size >= this.perRequest || signal?.aborted) return null;
    let resolve!: (why: WaitEnd) => void;
    const ended = new Promise<WaitEnd>((r) => { resolve = r; });
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const onAbort = (): void => entry.end('aborted');
    const arm = (after: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => entry.end('timeout'), Math.max(0, after));
      timer.unref();
    };
    let endsAt = Date.now() + ms;
    const entry: Entry = {
      end: (why) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        set.delete(entry);
        if (set.size === 0 && this.byRequest.get(requestId) === set) this.byRequest.delete(requestId);
        this.held -= 1;
        resolve(why);
        this.changed();
      },
    };
    set.add(entry);
    this.byRequest.set(requestId, set);
    this.held += 1;
    signal?.addEventListener('abort', onAbort, { once: true });
    arm(ms);
    this.changed();
    return {
      ended,
      limit: (after) => {
        if (done || Date.now() + after >= endsAt) return;
        endsAt = Date.now() + after;
        arm(after);
      },
      release: () => entry.end('aborted'),
    };
  }

  /** The requests left `pending`: their held pages look again. */
  wake(requestIds: readonly string[]): void {
    for (const id of requestIds) for (const entry of [...(this.byRequest.get(id) ?? [])]) entry.end('settled');
  }

  /** Ends every hold (the server is closing: `closing`, and no new one is taken). */
  close(): void {
    this.closing = true;
    this.wakeAll('closing');
  }

  private wakeAll(why: WaitEnd): void {
    for (const set of [...this.byRequest.values()]) for (const entry of [...set]) entry.end(why);
  }

  /** Resolves once `test()` holds (checked now and after every change): for tests, which await a held page instead of sleeping. */
  until(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (!test()) return;
        this.watchers.delete(check);
        resolve();
      };
      this.watchers.add(check);
    });
  }

  private changed(): void {
    for (const w of [...this.watchers]) w();
  }
}

/** Splits request ids into bus notices of at most SETTLED_BATCH. */
export function settledNotices(requestIds: readonly string[]): Array<{ type: 'push-approval.settled'; requestIds: string[] }> {
  const out: Array<{ type: 'push-approval.settled'; requestIds: string[] }> = [];
  for (let i = 0; i < requestIds.length; i += SETTLED_BATCH) out.push({ type: 'push-approval.settled', requestIds: requestIds.slice(i, i + SETTLED_BATCH) });
  return out;
}
