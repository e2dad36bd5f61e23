/**
 * Who the synthetic users of `strongroom bench seed` are: everything about user number `n` (1,
 * 2, ...) follows from `n`, so the bench can sign in as any of them, find them by email or phone
 * and query the audit trail by their uuid without reading the database first. The SQL that
 * writes them (bench-seed-users.ts) and these functions must agree; the PostgreSQL suite checks
 * that they do.
 */
import { createHash } from 'node:crypto';

/**
 * The password of every synthetic user. It is published here on purpose: a seeded database is
 * for measuring, never for people (the command refuses a database that holds anyone else).
 */
export const SEED_PASSWORD = 'Seed-Bench#2026-synthetic';

/** Synthetic usernames are `seed.u<n>`: nothing else in a seeded database may look like one. */
export const SEED_USERNAME_PREFIX = 'seed.u';
/** PostgreSQL regular expression matching exactly the synthetic usernames. */
export const SEED_USERNAME_REGEX = '^seed\\.u[1-9][0-9]*$';
/** What the uuid of user `n` is derived from (md5, shaped as a version 4 uuid). */
export const SEED_UUID_SALT = 'strongroom-bench-seed:';
export const SEED_EMAIL_DOMAIN = 'seed.bench.example';
/** E.164 numbers `+2547` followed by the user number on 8 digits: at most this many users. */
export const SEED_MAX_USERS = 10_000_000;

/** How the users of one seed are shaped, by their number: the same rules in SQL (bench-seed-users.ts). */
export const SEED_SHAPE = {
  /** `n % 10` below this: the user has a phone number (60%). */
  phoneBelow: 6,
  /** `n % 10 == 7`: an active TOTP factor (10%). */
  totpRemainder: 7,
  /** `n % 20 == 9`: an active SMS factor (5%). */
  smsRemainder: 9,
  /** `n % 5 == 0`: one mobile push token (20%); `n % 25 == 0`: a web one too (4%). */
  deviceEvery: 5,
  webDeviceEvery: 25,
  /** `n % 100 == 99`: disabled (1%). */
  disabledRemainder: 99,
} as const;

export interface SeedIdentity {
  n: number;
  uuid: string;
  username: string;
  email: string;
  /** E.164, or null (40% of the users have none). */
  phone: string | null;
  hasSecondFactor: boolean;
  isActive: boolean;
}

/** The uuid of user `n`: md5 of the salt and the number, with the version (4) and variant bits of RFC 9562. */
export function seedUuid(n: number): string {
  const h = createHash('md5').update(`${SEED_UUID_SALT}${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function seedPhone(n: number): string | null {
  return n % 10 < SEED_SHAPE.phoneBelow ? `+2547${String(n).padStart(8, '0')}` : null;
}

export function seedIdentity(n: number): SeedIdentity {
  if (!Number.isInteger(n) || n < 1 || n > SEED_MAX_USERS) throw new RangeError(`no synthetic user number ${n}`);
  return {
    n,
    uuid: seedUuid(n),
    username: `${SEED_USERNAME_PREFIX}${n}`,
    email: `u${n}@${SEED_EMAIL_DOMAIN}`,
    phone: seedPhone(n),
    hasSecondFactor: n % 10 === SEED_SHAPE.totpRemainder || n % 20 === SEED_SHAPE.smsRemainder,
    isActive: n % 100 !== SEED_SHAPE.disabledRemainder,
  };
}

/** Whether user `n` signs in with the seed password alone (active, no second factor), with a phone number. */
export function signsInWithPassword(n: number): boolean {
  const id = seedIdentity(n);
  return id.isActive && !id.hasSecondFactor && id.phone !== null;
}

/**
 * `count` users of a seed of `users` who sign in with the password alone, spread evenly over the
 * whole range (so a bench does not read only the first pages of each index).
 */
export function passwordUsers(users: number, count: number): SeedIdentity[] {
  const found: SeedIdentity[] = [];
  const step = Math.max(1, Math.floor(users / count));
  for (let start = 1; found.length < count && start <= step; start++) {
    for (let n = start; n <= users && found.length < count; n += step) {
      if (signsInWithPassword(n) && !found.some((f) => f.n === n)) found.push(seedIdentity(n));
    }
  }
  if (found.length < count) throw new RangeError(`a seed of ${users} users has fewer than ${count} who sign in with the password alone`);
  return found;
}
