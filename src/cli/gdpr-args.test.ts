import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { parseGdpr } from './gdpr-args.js';
import { isHelpTopic, UsageError } from './usage.js';

describe('strongroom gdpr arguments', () => {
  it('reads the ledger commands: --since as UTC midnight or an instant with its offset; --file a path or -', () => {
    expect(parseCommand(['gdpr', 'ledger', 'export'])).toEqual({ name: 'gdpr ledger export', since: null });
    expect(parseGdpr(['ledger', 'export', '--since', '2026-03-01'])).toEqual({ name: 'gdpr ledger export', since: new Date('2026-03-01T00:00:00Z') });
    expect(parseGdpr(['ledger', 'export', '--since', '2026-03-01T12:00:00+02:00'])).toEqual({ name: 'gdpr ledger export', since: new Date('2026-03-01T10:00:00Z') });
    expect(parseGdpr(['ledger', 'reapply', '--file', '/srv/ledger/erasures.jsonl'])).toEqual({ name: 'gdpr ledger reapply', file: '/srv/ledger/erasures.jsonl' });
    expect(parseGdpr(['ledger', 'reapply', '--file', '-'])).toEqual({ name: 'gdpr ledger reapply', file: '-' });
    expect(parseGdpr(['ledger', 'reapply', '--help'])).toEqual({ name: 'help', topic: 'gdpr' });
    expect(parseCommand(['help', 'gdpr'])).toEqual({ name: 'help', topic: 'gdpr' });
    expect(isHelpTopic('gdpr')).toBe(true);
  });

  it.each([
    [[], 'gdpr needs a subcommand'],
    [['erase'], 'Unknown gdpr subcommand "erase"'],
    [['ledger'], 'gdpr ledger needs a subcommand'],
    [['ledger', 'import'], 'Unknown gdpr ledger subcommand "import"'],
    [['ledger', 'export', '--since', '01/03/2026'], '--since must be a date'],
    [['ledger', 'export', '--since', '2026-13-01'], '--since must be a date'],
    [['ledger', 'export', 'extra'], 'gdpr ledger export'],
    [['ledger', 'reapply'], '--file is required'],
    [['ledger', 'reapply', '--file', ' '], '--file is required'],
    [['ledger', 'reapply', '--file', 'a', '--force'], "Unknown option '--force'"],
  ])('refuses %j: %s (exit 64, with the gdpr help)', (argv, message) => {
    const run = () => parseGdpr(argv);
    expect(run).toThrow(UsageError);
    expect(run).toThrow(message);
    try {
      run();
    } catch (err) {
      expect((err as UsageError).topic).toBe('gdpr');
    }
  });
});
