import { afterAll, describe, expect, it } from 'vitest';
import { StrengthChecker } from './strength.js';

describe('StrengthChecker (zxcvbn in a worker thread)', () => {
  const checker = new StrengthChecker(50);
  afterAll(() => checker.close());

  it('finds dictionary words and keyboard walks', async () => {
    const m = await checker.check('Password!qwerty');
    expect(m.some((x) => x.pattern === 'dictionary' && x.length >= 4)).toBe(true);
    const walk = await checker.check('zxcvbnm#7Q');
    expect(walk.some((x) => (x.pattern === 'spatial' || x.pattern === 'dictionary') && x.length >= 4)).toBe(true);
  });

  it('answers parallel checks each with its own result', async () => {
    const [a, b] = await Promise.all([checker.check('Vt7#qLm2!xRp9$'), checker.check('password')]);
    expect(a.every((x) => x.pattern !== 'dictionary')).toBe(true);
    expect(b.some((x) => x.pattern === 'dictionary')).toBe(true);
  });

  it('a check sent while the idle worker is shutting down is answered by a new worker, not failed with it', async () => {
    await checker.check('warm-up');
    const closing = checker.close(); // the idle exit, in progress
    const answered = checker.check('dragon'); // arrives in that window
    await closing;
    expect((await answered).some((x) => x.pattern === 'dictionary')).toBe(true);
  });

  it('starts again after the idle worker has exited', async () => {
    await checker.close();
    expect((await checker.check('dragon')).some((x) => x.pattern === 'dictionary')).toBe(true);
  });
});
