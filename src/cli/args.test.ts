import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { UsageError, usage } from './usage.js';

describe('parseCommand: key rotation commands', () => {
  it('rotate-field-key takes --batch-size and --check, and answers to reencrypt too', () => {
    expect(parseCommand(['rotate-field-key'])).toEqual({ name: 'rotate-field-key', batchSize: 200, checkOnly: false });
    expect(parseCommand(['reencrypt', '--batch-size', '50', '--check'])).toEqual({ name: 'rotate-field-key', batchSize: 50, checkOnly: true });
    expect(parseCommand(['help', 'reencrypt'])).toEqual({ name: 'help', topic: 'rotate-field-key' });
    expect(parseCommand(['rotate-field-key', '--help'])).toEqual({ name: 'help', topic: 'rotate-field-key' });
  });

  it.each([['0'], ['-3'], ['1.5'], ['10001'], ['many']])('rotate-field-key refuses --batch-size %s', (n) => {
    expect(() => parseCommand(['rotate-field-key', '--batch-size', n])).toThrow(UsageError);
  });

  it('rotate-transport-key takes --revoke-previous and nothing else', () => {
    expect(parseCommand(['rotate-transport-key'])).toEqual({ name: 'rotate-transport-key', revokePrevious: false });
    expect(parseCommand(['rotate-transport-key', '--revoke-previous'])).toEqual({ name: 'rotate-transport-key', revokePrevious: true });
    expect(() => parseCommand(['rotate-transport-key', '--force'])).toThrow(UsageError);
  });

  it('the usage names both commands and the previous-keys variable', () => {
    for (const s of ['rotate-field-key', 'reencrypt', 'rotate-transport-key', 'FIELD_ENCRYPTION_KEYS_PREVIOUS']) expect(usage()).toContain(s);
    expect(usage('rotate-field-key')).toContain('--check');
    expect(usage('rotate-transport-key')).toContain('--revoke-previous');
  });
});
