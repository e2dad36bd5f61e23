/** `strongroom audit ...`: parses the audit retention commands' arguments (the rest of the CLI: args.ts). */
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';

export type AuditCommand =
  | { name: 'audit partitions' }
  | { name: 'audit prune'; dryRun: boolean }
  | { name: 'audit holds' }
  | { name: 'audit hold'; reason: string; from: Date; to: Date; userId: string | null }
  | { name: 'audit release'; holdId: string };

const TOPIC = 'audit';
const SUBCOMMANDS = 'partitions, prune, holds, hold or release';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;
export const HOLD_REASON_MAX = 500;

type Values = Record<string, string | boolean | undefined>;

function parse(sub: string, args: string[], options: Record<string, { type: 'string' | 'boolean' }>): { values: Values; positionals: string[] } | null {
  try {
    const { values, positionals } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, ...options }, strict: true, allowPositionals: true });
    if (values.help) return null;
    return { values: values as Values, positionals };
  } catch (err) {
    throw new UsageError(`audit ${sub}: ${(err as Error).message}`, TOPIC);
  }
}

/** A date (`2025-03-01`, UTC midnight) or an instant with its offset (`2025-03-01T10:00:00Z`). */
function instant(values: Values, name: string): Date {
  const raw = values[name];
  if (typeof raw !== 'string') throw new UsageError(`--${name} is required: a date such as 2025-03-01 (UTC) or an instant such as 2025-03-01T10:00:00Z.`, TOPIC);
  const at = DATE.test(raw) ? new Date(raw.length === 10 ? `${raw}T00:00:00Z` : raw) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--${name} must be a date such as 2025-03-01 (UTC) or an instant such as 2025-03-01T10:00:00Z (got "${raw}").`, TOPIC);
  return at;
}

function hold(values: Values): AuditCommand {
  const reason = typeof values.reason === 'string' ? values.reason.trim() : '';
  if (reason === '') throw new UsageError('--reason is required: the matter the hold is for (a case or request reference).', TOPIC);
  if (reason.length > HOLD_REASON_MAX) throw new UsageError(`--reason must be at most ${HOLD_REASON_MAX} characters.`, TOPIC);
  const [from, to] = [instant(values, 'from'), instant(values, 'to')];
  if (from >= to) throw new UsageError('--from must be before --to.', TOPIC);
  const user = values.user;
  if (user !== undefined && (typeof user !== 'string' || !UUID.test(user))) throw new UsageError(`--user must be the user's uuid (got "${String(user)}").`, TOPIC);
  return { name: 'audit hold', reason, from, to, userId: typeof user === 'string' ? user.toLowerCase() : null };
}

/** `argv`: what follows `audit`. */
export function parseAudit(argv: string[]): AuditCommand | { name: 'help'; topic: 'audit' } {
  const [sub, ...rest] = argv;
  const help = { name: 'help', topic: TOPIC } as const;
  if (sub === undefined) throw new UsageError(`audit needs a subcommand: ${SUBCOMMANDS}.`, TOPIC);
  if (sub === '--help' || sub === '-h' || sub === 'help') return help;
  const options: Record<string, { type: 'string' | 'boolean' }> = sub === 'prune' ? { 'dry-run': { type: 'boolean' } }
    : sub === 'hold' ? { reason: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, user: { type: 'string' } }
      : {};
  if (!['partitions', 'prune', 'holds', 'hold', 'release'].includes(sub)) throw new UsageError(`Unknown audit subcommand "${sub}": use ${SUBCOMMANDS}.`, TOPIC);
  const p = parse(sub, rest, options);
  if (!p) return help;
  if (sub !== 'release' && p.positionals.length > 0) throw new UsageError(`audit ${sub} takes no argument (got ${p.positionals.join(' ')}).`, TOPIC);
  switch (sub) {
    case 'partitions':
    case 'holds':
      return { name: `audit ${sub}` };
    case 'prune':
      return { name: 'audit prune', dryRun: p.values['dry-run'] === true };
    case 'hold':
      return hold(p.values);
    default: {
      const [id, ...extra] = p.positionals;
      if (id === undefined || extra.length > 0 || !UUID.test(id)) throw new UsageError('audit release takes the hold\'s id (a uuid, as audit holds lists it).', TOPIC);
      return { name: 'audit release', holdId: id.toLowerCase() };
    }
  }
}
