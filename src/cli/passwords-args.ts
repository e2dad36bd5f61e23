/** `strongroom passwords ...`: parses the breach corpus commands' arguments (the rest of the CLI: args.ts). */
import { parseArgs } from 'node:util';
import { MAX_TARGET_RATE, MIN_TARGET_RATE } from '../credentials/breached/filter.js';
import { UsageError } from './usage.js';

export type PasswordsCommand =
  | { name: 'passwords import-breached'; file: string; output: string | null; minCount: number; falsePositiveRate: number }
  | { name: 'passwords check-breached'; filter: string | null };

const TOPIC = 'passwords';
const SUBCOMMANDS = 'import-breached or check-breached';
export const DEFAULT_FALSE_POSITIVE_RATE = 0.001;

type Values = Record<string, string | boolean | undefined>;

function parse(sub: string, args: string[], options: Record<string, { type: 'string' | 'boolean' }>): Values | null {
  try {
    // No positionals: a password typed after the command would land in shell history and process lists.
    const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, ...options }, strict: true, allowPositionals: false });
    return values.help ? null : (values as Values);
  } catch (err) {
    throw new UsageError(`passwords ${sub}: ${(err as Error).message}`, TOPIC);
  }
}

function path(values: Values, name: string, required: boolean): string | null {
  const raw = values[name];
  if (raw === undefined && !required) return null;
  if (typeof raw !== 'string' || raw.trim() === '') throw new UsageError(`--${name} ${raw === undefined ? 'is required' : 'must not be empty'}: a file path.`, TOPIC);
  return raw;
}

function minCount(values: Values): number {
  const raw = values['min-count'];
  if (raw === undefined) return 1;
  const n = typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(n >= 1)) throw new UsageError(`--min-count must be a whole number of 1 or more (got "${String(raw)}"): entries seen fewer times than this are left out.`, TOPIC);
  return n;
}

function rate(values: Values): number {
  const raw = values['false-positive-rate'];
  if (raw === undefined) return DEFAULT_FALSE_POSITIVE_RATE;
  const r = typeof raw === 'string' && /^(0?\.[0-9]+|[0-9]+e-[0-9]+)$/i.test(raw.trim()) ? Number(raw) : NaN;
  if (!(r >= MIN_TARGET_RATE && r <= MAX_TARGET_RATE)) {
    throw new UsageError(`--false-positive-rate must be a fraction from ${MIN_TARGET_RATE} to ${MAX_TARGET_RATE}, such as 0.001 for 1 in 1,000 (got "${String(raw)}").`, TOPIC);
  }
  return r;
}

/** `argv`: what follows `passwords`. */
export function parsePasswords(argv: string[]): PasswordsCommand | { name: 'help'; topic: 'passwords' } {
  const [sub, ...rest] = argv;
  const help = { name: 'help', topic: TOPIC } as const;
  if (sub === undefined) throw new UsageError(`passwords needs a subcommand: ${SUBCOMMANDS}.`, TOPIC);
  if (sub === '--help' || sub === '-h' || sub === 'help') return help;
  if (sub === 'import-breached') {
    const v = parse(sub, rest, { file: { type: 'string' }, output: { type: 'string' }, 'min-count': { type: 'string' }, 'false-positive-rate': { type: 'string' } });
    if (!v) return help;
    return { name: 'passwords import-breached', file: path(v, 'file', true)!, output: path(v, 'output', false), minCount: minCount(v), falsePositiveRate: rate(v) };
  }
  if (sub === 'check-breached') {
    const v = parse(sub, rest, { filter: { type: 'string' } });
    return v ? { name: 'passwords check-breached', filter: path(v, 'filter', false) } : help;
  }
  throw new UsageError(`Unknown passwords subcommand "${sub}": use ${SUBCOMMANDS}.`, TOPIC);
}
