/** `strongroom gdpr ...`: parses the data-subject rights commands' arguments (the rest of the CLI: args.ts). */
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';

export type GdprCommand =
  | { name: 'gdpr ledger export'; since: Date | null }
  | { name: 'gdpr ledger reapply'; file: string };

const TOPIC = 'gdpr';
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

function options(sub: string, args: string[], spec: Record<string, { type: 'string' }>): Record<string, string | boolean | undefined> | null {
  try {
    const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, ...spec }, strict: true, allowPositionals: false });
    return values.help ? null : values;
  } catch (err) {
    throw new UsageError(`gdpr ledger ${sub}: ${(err as Error).message}`, TOPIC);
  }
}

/** `argv`: what follows `gdpr`. */
export function parseGdpr(argv: string[]): GdprCommand | { name: 'help'; topic: 'gdpr' } {
  const help = { name: 'help', topic: TOPIC } as const;
  const [group, sub, ...rest] = argv;
  if (group === undefined) throw new UsageError('gdpr needs a subcommand: ledger export or ledger reapply.', TOPIC);
  if (group === '--help' || group === '-h' || group === 'help') return help;
  if (group !== 'ledger') throw new UsageError(`Unknown gdpr subcommand "${group}": use ledger export or ledger reapply.`, TOPIC);
  if (sub === undefined) throw new UsageError('gdpr ledger needs a subcommand: export or reapply.', TOPIC);
  if (sub === '--help' || sub === '-h' || sub === 'help') return help;
  if (sub === 'export') {
    const v = options(sub, rest, { since: { type: 'string' } });
    if (!v) return help;
    if (v.since === undefined) return { name: 'gdpr ledger export', since: null };
    const raw = String(v.since);
    const at = DATE.test(raw) ? new Date(raw.length === 10 ? `${raw}T00:00:00Z` : raw) : new Date(NaN);
    if (Number.isNaN(at.getTime())) throw new UsageError(`--since must be a date such as 2026-03-01 (UTC) or an instant such as 2026-03-01T10:00:00Z (got "${raw}").`, TOPIC);
    return { name: 'gdpr ledger export', since: at };
  }
  if (sub === 'reapply') {
    const v = options(sub, rest, { file: { type: 'string' } });
    if (!v) return help;
    const file = typeof v.file === 'string' ? v.file.trim() : '';
    if (file === '') throw new UsageError('--file is required: the ledger file (JSON lines, as gdpr ledger export writes it), or - for standard input.', TOPIC);
    return { name: 'gdpr ledger reapply', file };
  }
  throw new UsageError(`Unknown gdpr ledger subcommand "${sub}": use export or reapply.`, TOPIC);
}
