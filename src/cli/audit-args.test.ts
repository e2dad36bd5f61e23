import { describe, expect, it } from 'vitest';
import { parseAudit } from './audit-args.js';
import { UsageError } from './usage.js';

const HOLD = ['hold', '--reason', 'case 2026-114', '--from', '2025-01-01', '--to', '2025-04-01T12:00:00+02:00'];

describe('strongroom audit arguments', () => {
  it('reads a legal hold: UTC midnight for a date, the offset of an instant', () => {
    expect(parseAudit(HOLD)).toEqual({ name: 'audit hold', reason: 'case 2026-114', from: new Date('2025-01-01T00:00:00Z'), to: new Date('2025-04-01T10:00:00Z'), userId: null });
    expect(parseAudit([...HOLD, '--user', '0F8FAD5B-D9CB-469F-A165-70867728950E'])).toMatchObject({ userId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  });

  it.each([
    [['hold', '--from', '2025-01-01', '--to', '2025-02-01'], '--reason is required'],
    [['hold', '--reason', 'x', '--from', '2025-13-45', '--to', '2025-02-01'], '--from must be a date'],
    [['hold', '--reason', 'x', '--from', '01/02/2025', '--to', '2025-02-01'], '--from must be a date'],
    [['hold', '--reason', 'x', '--from', '2025-03-01', '--to', '2025-02-01'], '--from must be before --to'],
    [[...HOLD, '--user', '42'], "--user must be the user's uuid"],
    [['release'], "the hold's id"],
    [['release', 'not-a-uuid'], "the hold's id"],
    [['prune', 'now'], 'takes no argument'],
    [['purge'], 'Unknown audit subcommand'],
    [[], 'needs a subcommand'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseAudit(argv)).toThrow(UsageError);
    expect(() => parseAudit(argv)).toThrow(message);
  });

  it('reads the other subcommands', () => {
    expect(parseAudit(['prune', '--dry-run'])).toEqual({ name: 'audit prune', dryRun: true });
    expect(parseAudit(['prune'])).toEqual({ name: 'audit prune', dryRun: false });
    expect(parseAudit(['holds'])).toEqual({ name: 'audit holds' });
    expect(parseAudit(['partitions'])).toEqual({ name: 'audit partitions' });
    expect(parseAudit(['release', '0f8fad5b-d9cb-469f-a165-70867728950e'])).toEqual({ name: 'audit release', holdId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
    expect(parseAudit(['hold', '--help'])).toEqual({ name: 'help', topic: 'audit' });
  });
});
