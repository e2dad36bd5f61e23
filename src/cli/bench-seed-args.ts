/** `strongroom bench seed ...`: parses the seeding command's arguments (the rest of the CLI: args.ts). */
import { parseArgs } from 'node:util';
import { SEED_MAX_USERS } from './bench-seed-identity.js';
import { DEFAULT_PLAN, type SeedPlan } from './bench-seed-marker.js';
import { UsageError } from './usage.js';

export interface BenchSeedCommand {
  name: 'bench seed';
  /** The database the operator names: it must be the one DATABASE_URL opens. */
  database: string;
  plan: SeedPlan;
}

const TOPIC = 'bench';

/** PostgreSQL's unquoted identifiers, at most 63 bytes: what a database name given here may be. */
const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/;

const COUNTS: Array<{ option: string; key: keyof SeedPlan; min: number; max: number }> = [
  { option: 'users', key: 'users', min: 1, max: SEED_MAX_USERS },
  { option: 'sessions', key: 'sessions', min: 0, max: 100_000_000 },
  { option: 'active-sessions', key: 'activeSessions', min: 0, max: 100_000_000 },
  { option: 'audit', key: 'audit', min: 0, max: 1_000_000_000 },
  { option: 'months', key: 'months', min: 1, max: 120 },
];

/** A count: digits, optionally grouped by `_` or `,` (1_000_000, 1,000,000). */
function count(raw: string, c: (typeof COUNTS)[number]): number {
  const digits = raw.trim().replace(/[_,](?=\d{3}(?:[_,]|$))/g, '');
  const n = /^[0-9]+$/.test(digits) ? Number(digits) : NaN;
  if (!Number.isSafeInteger(n) || n < c.min || n > c.max) {
    throw new UsageError(`--${c.option} must be a whole number from ${c.min.toLocaleString('en-US')} to ${c.max.toLocaleString('en-US')} (got "${raw}").`, TOPIC);
  }
  return n;
}

function parseSeed(args: string[]): BenchSeedCommand | null {
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(COUNTS.map((c) => [c.option, { type: 'string' as const }]));
    ({ values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, database: { type: 'string' }, ...options }, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message, TOPIC);
  }
  if (values.help) return null;
  const database = typeof values.database === 'string' ? values.database.trim() : '';
  if (database === '') throw new UsageError('--database is required: the name of the database DATABASE_URL opens, as a confirmation that it is the one to fill.', TOPIC);
  if (!DATABASE_NAME.test(database)) throw new UsageError(`--database must be a database name (got "${database}").`, TOPIC);
  const plan: SeedPlan = { ...DEFAULT_PLAN };
  for (const c of COUNTS) {
    const raw = values[c.option];
    if (typeof raw === 'string') plan[c.key] = count(raw, c);
  }
  if (plan.activeSessions > plan.sessions) throw new UsageError(`--active-sessions (${plan.activeSessions}) cannot exceed --sessions (${plan.sessions}).`, TOPIC);
  return { name: 'bench seed', database, plan };
}

/** `bench <sub> ...`; null asks for the help of `bench`. */
export function parseBench(argv: string[]): BenchSeedCommand | null {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError('bench needs a subcommand: seed.', TOPIC);
  if (sub === '--help' || sub === '-h' || sub === 'help') return null;
  if (sub !== 'seed') throw new UsageError(`Unknown bench subcommand "${sub}": use seed.`, TOPIC);
  return parseSeed(rest);
}
