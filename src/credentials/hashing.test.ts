import { describe, expect, it, vi } from 'vitest';
import { bcryptSafe, FairGate, PasswordHasher } from './hashing.js';
import { hasKeyboardWalk } from './policy.js';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher(4);
  const exactly72 = 'Aa1!'.repeat(18);

  it('verifies the right password and refuses a wrong one', async () => {
    const h = await hasher.hash('Vt7#qLm2!xRp9$');
    expect(h).toMatch(/^\$2[aby]\$04\$.{53}$/);
    expect(await hasher.verify('Vt7#qLm2!xRp9$', h)).toBe(true);
    expect(await hasher.verify('Vt7#qLm2!xRp9%', h)).toBe(false);
  });

  it('never lets "first 72 bytes + anything" match: longer inputs are refused outright', async () => {
    const h = await hasher.hash(exactly72);
    expect(await hasher.verify(exactly72, h)).toBe(true);
    expect(await hasher.verify(`${exactly72}X`, h)).toBe(false);
  });

  it('counts bytes, not characters (multi-byte UTF-8)', () => {
    expect(bcryptSafe('é'.repeat(36))).toBe(true); // 72 bytes
    expect(bcryptSafe('é'.repeat(37))).toBe(false);
    expect(bcryptSafe('abc\0def')).toBe(false);
  });

  it('spends a dummy bcrypt comparison when there is no hash to check', async () => {
    const spy = vi.spyOn(hasher, 'dummyVerify');
    expect(await hasher.verify('anything', null)).toBe(false);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('threat: a sign-in flood queues at most maxQueued checks; the rest get 503 SIGNIN_BUSY at once, for known and unknown accounts alike', async () => {
    const small = new PasswordHasher(4, 1, 2);
    const h = await small.hash('Vt7#qLm2!xRp9$');
    const outcomes = await Promise.allSettled([
      small.verify('Vt7#qLm2!xRp9$', h, 'u:1'), // runs
      small.verify('wrong', h, 'u:2'), // queued
      small.verify('wrong', null, 'u:3'), // queued (an unknown account's dummy comparison)
      small.verify('Vt7#qLm2!xRp9$', h, 'u:1'), // refused: two already wait
      small.verify('wrong', null, 'u:4'), // refused, exactly as a known account is
      small.hash('New-password-1!Zq', 'u:5'), // a request's new password: refused too
    ]);
    expect(outcomes.slice(0, 3).map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(outcomes.slice(0, 3).map((o) => (o as PromiseFulfilledResult<boolean>).value)).toEqual([true, false, false]);
    for (const o of outcomes.slice(3)) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toMatchObject({ statusCode: 503, code: 'SIGNIN_BUSY', details: { retry_after_seconds: 2 }, headers: { 'retry-after': '2' } });
    }
    // Work of no request (start-up, jobs) is never refused, and the drained queue admits again.
    const [system] = await Promise.all([small.hash('System-password-1!Zq'), small.verify('x', h, 'u:6'), small.verify('x', h, 'u:7')]);
    expect(system).toMatch(/^\$2[aby]\$04\$/);
    expect(await small.verify('Vt7#qLm2!xRp9$', h, 'u:1')).toBe(true);
  });

  it('refuses to hash what bcrypt cannot hold whole', async () => {
    await expect(hasher.hash(`${exactly72}X`)).rejects.toThrow();
  });
});

describe('hasKeyboardWalk', () => {
  it.each(['qwerty99!', 'Xasdf#1', '9876zz', 'zxcvB', 'poiu'])('finds %s', (p) => expect(hasKeyboardWalk(p)).toBe(true));
  it.each(['Vt7#qLm2!xRp9$', 'qwe', 'a1s2d3f4'])('does not flag %s', (p) => expect(hasKeyboardWalk(p)).toBe(false));
});

describe('FairGate (threat: one caller fills the bcrypt queue, issue 9 section 3)', () => {
  /** Runs tasks through a one-slot gate and records the order in which they start. */
  function harness() {
    const gate = new FairGate(1);
    const order: string[] = [];
    let release!: () => void;
    const blocker = gate.run('blocker', () => new Promise<void>((r) => (release = r)));
    const task = (lane: string, name: string) => gate.run(lane, async () => void order.push(name));
    return { gate, order, blocker, task, release: () => release() };
  }

  it('another account queued behind ten of one caller\'s comparisons runs second, not eleventh', async () => {
    const h = harness();
    const tasks = Array.from({ length: 10 }, (_, i) => h.task('u:attacker', `attacker-${i}`));
    tasks.push(h.task('u:victim', 'victim'));
    expect(h.gate.waiting).toBe(11);
    h.release();
    await Promise.all([h.blocker, ...tasks]);
    expect(h.order.indexOf('victim')).toBe(1);
    expect(h.order.filter((n) => n.startsWith('attacker'))).toEqual(Array.from({ length: 10 }, (_, i) => `attacker-${i}`)); // in order within a lane
  });

  it('serves busy lanes in turn, one task each', async () => {
    const h = harness();
    const tasks = [h.task('a', 'a1'), h.task('a', 'a2'), h.task('a', 'a3'), h.task('b', 'b1'), h.task('b', 'b2'), h.task('c', 'c1')];
    h.release();
    await Promise.all([h.blocker, ...tasks]);
    expect(h.order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('a task that throws hands its slot on', async () => {
    const gate = new FairGate(1);
    await expect(gate.run('x', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run('y', async () => 'ran')).resolves.toBe('ran');
    expect(gate.waiting).toBe(0);
  });
});
