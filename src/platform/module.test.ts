import { describe, expect, it } from 'vitest';
import { Composition, type Module } from './module.js';

const counter = (deps: { start: number }): Module<{ counter: { next(): number } }> => {
  let n = deps.start;
  return { name: 'counter', provides: { counter: { next: () => ++n } } };
};
const doubler = (deps: { counter: { next(): number } }): Module<{ doubled: () => number }> => ({
  name: 'doubler',
  provides: { doubled: () => deps.counter.next() * 2 },
});

describe('Composition', () => {
  it('builds each module from what the platform and earlier modules provide, in order', () => {
    const c = Composition.from({ start: 10 }).use(counter).use(doubler);
    expect(c.modules.map((m) => m.name)).toEqual(['counter', 'doubler']);
    expect(c.deps.doubled()).toBe(22);
    expect(c.deps.counter.next()).toBe(12);
    expect(c.deps.start).toBe(10);
  });

  it('a module whose dependencies are not provided yet does not compile', () => {
    // @ts-expect-error: `counter` is not provided before `doubler` (the order is checked by tsc).
    const c = Composition.from({ start: 1 }).use(doubler);
    expect(() => c.deps.doubled()).toThrow(TypeError); // what would happen at run time
  });

  it('refuses a second provider of the same name, naming both modules', () => {
    const again = (): Module<{ counter: number }> => ({ name: 'other-counter', provides: { counter: 1 } });
    expect(() => Composition.from({ start: 1 }).use(counter).use(again)).toThrow('Module "other-counter" provides "counter", which "counter" already provides.');
    const shadow = (): Module<{ start: number }> => ({ name: 'shadow', provides: { start: 2 } });
    expect(() => Composition.from({ start: 1 }).use(shadow)).toThrow('which "platform" already provides');
  });

  it('refuses two modules of one name and two body envelopes', () => {
    const empty = (name: string) => (): Module => ({ name, provides: {} });
    expect(() => Composition.from({}).use(empty('a')).use(empty('a'))).toThrow('Two modules are named "a".');
    const envelope = { requestDecorator: 'x', enforce: async () => undefined, decrypt: async () => undefined, seal: (_q: unknown, _r: unknown, p: string | Buffer) => p };
    const wraps = (name: string) => (): Module => ({ name, provides: {}, envelope });
    expect(() => Composition.from({}).use(wraps('one')).use(wraps('two'))).toThrow('Module "two" supplies a body envelope; only one module may.');
  });
});
