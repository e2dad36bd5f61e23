/**
 * Counting and holding the bcrypt comparisons a test causes, so that tests about concurrency
 * count work done and order events with signals instead of timing.
 */
import { vi } from 'vitest';
import type { PasswordHasher } from '../../src/credentials/hashing.js';

/** A promise and the function that settles it. */
export function signal(): { promise: Promise<void>; fire(): void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

/**
 * Counts the real comparisons `hasher` makes (known and unknown usernames alike) and, when
 * `hold` says so for a password, holds that comparison until `open()`. `reached(n)` resolves
 * once n comparisons have started.
 */
export function watchComparisons(hasher: PasswordHasher, hold: (password: string) => boolean = () => false) {
  const started: string[] = [];
  const waiters: { n: number; fire(): void }[] = [];
  const gate = signal();
  const note = (password: string) => {
    started.push(password);
    for (const w of waiters) if (started.length >= w.n) w.fire();
  };
  const verify = hasher.verify.bind(hasher);
  const dummy = hasher.dummyVerify.bind(hasher);
  vi.spyOn(hasher, 'verify').mockImplementation(async (password, hash, lane) => {
    note(password);
    if (hold(password)) await gate.promise;
    return verify(password, hash, lane);
  });
  vi.spyOn(hasher, 'dummyVerify').mockImplementation(async (password, lane) => {
    note(password);
    if (hold(password)) await gate.promise;
    return dummy(password, lane);
  });
  return {
    started,
    open: gate.fire,
    reached(n: number): Promise<void> {
      const s = signal();
      waiters.push({ n, fire: s.fire });
      if (started.length >= n) s.fire();
      return s.promise;
    },
  };
}

