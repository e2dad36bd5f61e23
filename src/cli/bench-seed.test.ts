import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { passwordUsers, SEED_PASSWORD, seedIdentity, seedUuid, signsInWithPassword } from './bench-seed-identity.js';
import { DEFAULT_PLAN, type SeedMarker } from './bench-seed-marker.js';
import { seedDecision, type SeedFacts } from './bench-seed.js';
import { UsageError, usage } from './usage.js';

describe('parseCommand: bench seed', () => {
  it('takes the database name and the defaults of a million users', () => {
    expect(parseCommand(['bench', 'seed', '--database', 'strongroom_scale'])).toEqual({
      name: 'bench seed', database: 'strongroom_scale',
      plan: { users: 1_000_000, sessions: 1_000_000, activeSessions: 100_000, audit: 10_000_000, months: 13 },
    });
  });

  it('takes every count, grouped or not', () => {
    const cmd = parseCommand(['bench', 'seed', '--database=b', '--users', '20_000', '--sessions', '2,000', '--active-sessions', '200', '--audit', '40000', '--months', '3']);
    expect(cmd).toEqual({ name: 'bench seed', database: 'b', plan: { users: 20_000, sessions: 2_000, activeSessions: 200, audit: 40_000, months: 3 } });
  });

  it('requires --database: the operator names what is filled', () => {
    expect(() => parseCommand(['bench', 'seed'])).toThrow(/--database is required/);
    expect(() => parseCommand(['bench', 'seed', '--database', ''])).toThrow(UsageError);
    expect(() => parseCommand(['bench', 'seed', '--database', 'x; DROP TABLE users'])).toThrow(/database name/);
  });

  it.each([
    [['--users', '0']], [['--users', '10000001']], [['--users', '1.5']], [['--users', '1_00']], [['--audit', '-1']], [['--months', '0']], [['--months', '121']],
    [['--sessions', '10', '--active-sessions', '11']], [['--force']], [['extra']],
  ])('refuses %j', (extra) => {
    expect(() => parseCommand(['bench', 'seed', '--database', 'b', ...extra])).toThrow(UsageError);
  });

  it('bench without seed, or with another subcommand, is a usage error; help shows the topic', () => {
    expect(() => parseCommand(['bench'])).toThrow(/subcommand: seed/);
    expect(() => parseCommand(['bench', 'run'])).toThrow(/Unknown bench subcommand/);
    expect(parseCommand(['bench', '--help'])).toEqual({ name: 'help', topic: 'bench' });
    expect(parseCommand(['bench', 'seed', '--help'])).toEqual({ name: 'help', topic: 'bench' });
    expect(parseCommand(['help', 'bench'])).toEqual({ name: 'help', topic: 'bench' });
  });

  it('the usage lists the command, and its help the published password and every refusal', () => {
    expect(usage()).toContain('bench seed --database NAME');
    const help = usage('bench');
    for (const s of [SEED_PASSWORD, '--active-sessions', 'NODE_ENV=production', 'DATABASE_URL', 'did not make']) expect(help).toContain(s);
  });
});

describe('synthetic users', () => {
  it('user n has a stable uuid of version 4 and its own username, email and phone', () => {
    expect(seedUuid(1)).toBe(seedUuid(1));
    expect(seedUuid(1)).not.toBe(seedUuid(2));
    expect(seedUuid(123)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(seedIdentity(42)).toMatchObject({ username: 'seed.u42', email: 'u42@seed.bench.example', phone: '+254700000042' });
    expect(seedIdentity(47).phone).toBeNull();
    expect(seedIdentity(1_000_000).phone).toBe('+254701000000');
    expect(seedIdentity(17).hasSecondFactor).toBe(true);
    expect(seedIdentity(99).isActive).toBe(false);
  });

  it('the users picked for sign-in are distinct, spread over the range, and sign in with the password alone', () => {
    const picked = passwordUsers(1_000_000, 64);
    expect(new Set(picked.map((u) => u.n)).size).toBe(64);
    expect(picked.every((u) => signsInWithPassword(u.n) && u.phone !== null && !u.hasSecondFactor && u.isActive)).toBe(true);
    expect(Math.max(...picked.map((u) => u.n))).toBeGreaterThan(900_000);
    expect(passwordUsers(10, 6).map((u) => u.n).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 10]);
    expect(() => passwordUsers(10, 7)).toThrow(RangeError);
  });
});

describe('seedDecision: the seed never reaches a database people use', () => {
  const marker = (over: Partial<SeedMarker> = {}): SeedMarker => ({
    plan: DEFAULT_PLAN, keyId: 'k1', anchor: new Date(), startedAt: new Date(), finishedAt: null, batchSize: { users: 10, audit: 10 }, batches: { users: [0], audit: [] },
    done: { users: 10, audit: 0 }, seconds: {}, ...over,
  });
  const facts = (over: Partial<SeedFacts> = {}): SeedFacts => ({
    env: 'development', databaseName: 'bench', given: 'bench', foreignUsers: 0, marker: null, plan: DEFAULT_PLAN, keyId: 'k1', ...over,
  });
  const reason = (f: SeedFacts): string => {
    const d = seedDecision(f);
    return d.kind === 'refuse' ? d.reason : `not refused: ${d.kind}`;
  };

  it('an empty database named by the operator is seeded, and a seed of the same sizes and key continued', () => {
    expect(seedDecision(facts())).toEqual({ kind: 'seed' });
    expect(seedDecision(facts({ marker: marker() }))).toEqual({ kind: 'seed' });
  });

  it('a finished seed of the same sizes and key is left as it is, its administrator added since or not', () => {
    expect(seedDecision(facts({ marker: marker({ finishedAt: new Date() }), foreignUsers: 1 }))).toEqual({ kind: 'finished' });
  });

  it('refuses production, whatever else holds', () => {
    expect(reason(facts({ env: 'production' }))).toMatch(/NODE_ENV=production/);
    expect(reason(facts({ env: 'production', marker: marker({ finishedAt: new Date() }) }))).toMatch(/NODE_ENV=production/);
  });

  it('refuses a database other than the one named', () => {
    expect(reason(facts({ databaseName: 'strongroom' }))).toMatch(/opens the database "strongroom", not "bench"/);
  });

  it('refuses to write to a database holding a user the seed did not make', () => {
    expect(reason(facts({ foreignUsers: 1 }))).toMatch(/holds 1 user the seed did not make/);
    expect(reason(facts({ foreignUsers: 3, marker: marker() }))).toMatch(/holds 3 users the seed did not make/);
  });

  it('refuses a seed of another field key or other sizes', () => {
    expect(reason(facts({ marker: marker({ keyId: 'k0', finishedAt: new Date() }) }))).toMatch(/another field key/);
    expect(reason(facts({ marker: marker({ plan: { ...DEFAULT_PLAN, users: 20_000 } }) }))).toMatch(/holds a seed of 20,000 users/);
  });
});
