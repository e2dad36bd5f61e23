import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { UsageError } from './usage.js';

describe('strongroom passwords arguments', () => {
  it('import-breached: --file required; --min-count 1 and a rate of 1 in 1,000 by default', () => {
    expect(parseCommand(['passwords', 'import-breached', '--file', 'pwned.txt'])).toEqual({ name: 'passwords import-breached', file: 'pwned.txt', output: null, minCount: 1, falsePositiveRate: 0.001 });
    expect(parseCommand(['passwords', 'import-breached', '--file', 'p.txt', '--output', 'b.filter', '--min-count', '10', '--false-positive-rate', '0.0005']))
      .toEqual({ name: 'passwords import-breached', file: 'p.txt', output: 'b.filter', minCount: 10, falsePositiveRate: 0.0005 });
    expect(parseCommand(['passwords', 'import-breached', '--help'])).toEqual({ name: 'help', topic: 'passwords' });
    expect(parseCommand(['help', 'passwords'])).toEqual({ name: 'help', topic: 'passwords' });
  });

  it('refuses a missing --file, a bad count or rate, and unknown subcommands, as usage errors', () => {
    for (const [argv, message] of [
      [['passwords', 'import-breached'], /--file is required/],
      [['passwords', 'import-breached', '--file', 'p', '--min-count', '0'], /--min-count must be a whole number of 1 or more/],
      [['passwords', 'import-breached', '--file', 'p', '--min-count', '2.5'], /--min-count must be a whole number/],
      [['passwords', 'import-breached', '--file', 'p', '--false-positive-rate', '0.2'], /--false-positive-rate must be a fraction from 0.0001 to 0.05/],
      [['passwords', 'import-breached', '--file', 'p', '--false-positive-rate', '1/1000'], /--false-positive-rate must be a fraction/],
      [['passwords'], /passwords needs a subcommand: import-breached or check-breached/],
      [['passwords', 'crack'], /Unknown passwords subcommand "crack"/],
    ] as const) {
      expect(() => parseCommand([...argv]), argv.join(' ')).toThrow(message);
    }
  });

  it('check-breached never takes the password as an argument', () => {
    expect(parseCommand(['passwords', 'check-breached'])).toEqual({ name: 'passwords check-breached', filter: null });
    expect(parseCommand(['passwords', 'check-breached', '--filter', 'b.filter'])).toEqual({ name: 'passwords check-breached', filter: 'b.filter' });
    expect(() => parseCommand(['passwords', 'check-breached', 'P@ssw0rd'])).toThrow(UsageError);
    expect(() => parseCommand(['passwords', 'check-breached', '--password', 'P@ssw0rd'])).toThrow(UsageError);
  });
});
