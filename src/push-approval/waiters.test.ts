import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalBus } from '../platform/db/bus.js';
import { SETTLED_BATCH, settledNotices, Waiters } from './waiters.js';

describe('the long poll\'s waiters', () => {
  let bus: LocalBus;
  let waiters: Waiters;
  beforeEach(() => {
    vi.useFakeTimers();
    bus = new LocalBus();
    waiters = new Waiters(bus);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a hold ends when the bus says its request settled, and frees its place', async () => {
    const hold = waiters.hold('r-1', 25_000)!;
    const other = waiters.hold('r-2', 25_000)!;
    expect(waiters.size).toBe(2);
    await bus.publish({ type: 'push-approval.settled', requestIds: ['r-1'] });
    expect(await hold.ended).toBe('settled');
    expect(waiters.size).toBe(1);
    expect(waiters.holding('r-1')).toBe(0);
    other.release();
    expect(await other.ended).toBe('aborted');
    expect(waiters.size).toBe(0);
  });

  it('a hold ends when its wait is over, or sooner when limited', async () => {
    const hold = waiters.hold('r-1', 25_000)!;
    const limited = waiters.hold('r-2', 25_000)!;
    limited.limit(3_000);
    limited.limit(10_000); // never later than it was
    vi.advanceTimersByTime(3_000);
    expect(await limited.ended).toBe('timeout');
    expect(waiters.holding('r-1')).toBe(1);
    vi.advanceTimersByTime(22_000);
    expect(await hold.ended).toBe('timeout');
    expect(waiters.size).toBe(0);
  });

  it('a client that goes away releases its hold', async () => {
    const gone = new AbortController();
    const hold = waiters.hold('r-1', 25_000, gone.signal)!;
    gone.abort();
    expect(await hold.ended).toBe('aborted');
    expect(waiters.size).toBe(0);
    expect(waiters.hold('r-1', 25_000, gone.signal)).toBeNull(); // gone already: answered at once
  });

  it('threat: held requests are bounded per node and per request; past the bound the caller answers at once', () => {
    waiters.max = 3;
    waiters.perRequest = 2;
    expect(waiters.hold('r-1', 25_000)).not.toBeNull();
    expect(waiters.hold('r-1', 25_000)).not.toBeNull();
    expect(waiters.hold('r-1', 25_000)).toBeNull();
    expect(waiters.hold('r-2', 25_000)).not.toBeNull();
    expect(waiters.hold('r-3', 25_000)).toBeNull();
    expect(waiters.size).toBe(3);
  });

  it('closing ends every hold and takes no new one; a bus reconnect wakes every hold (notices may have been lost)', async () => {
    const a = waiters.hold('r-1', 25_000)!;
    const reconnect: Array<() => void> = [];
    const b2 = new LocalBus();
    b2.onReconnect = (h) => reconnect.push(h);
    const w2 = new Waiters(b2);
    const b = w2.hold('r-2', 25_000)!;
    reconnect.forEach((h) => h());
    expect(await b.ended).toBe('settled');
    waiters.close();
    expect(await a.ended).toBe('closing');
    expect(waiters.hold('r-1', 25_000)).toBeNull();
  });

  it('until() resolves once a page is held, without sleeping', async () => {
    const held = waiters.until(() => waiters.holding('r-9') === 1);
    waiters.hold('r-9', 25_000);
    await held;
    expect(waiters.holding('r-9')).toBe(1);
  });

  it('settled notices carry at most SETTLED_BATCH ids each', () => {
    const ids = Array.from({ length: SETTLED_BATCH * 2 + 1 }, (_, i) => `r-${i}`);
    const notices = settledNotices(ids);
    expect(notices.map((n) => n.requestIds.length)).toEqual([SETTLED_BATCH, SETTLED_BATCH, 1]);
    expect(notices.flatMap((n) => n.requestIds)).toEqual(ids);
    expect(JSON.stringify(notices[0]).length).toBeLessThan(7_000);
  });
});
