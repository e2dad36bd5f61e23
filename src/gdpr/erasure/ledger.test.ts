import { describe, expect, it } from 'vitest';
import { LedgerLineError, parseLedger, parseLedgerLine } from './ledger.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const line = (o: Record<string, unknown>) => JSON.stringify(o);
const good = { user_id: ID, requested_at: '2026-03-01T10:00:00.000Z', erased_at: '2026-03-31T10:00:00.000Z' };

/** The reason a line is refused with, asserting the line number. */
function refused(text: string, n = 7): string {
  try {
    parseLedgerLine(text, n);
  } catch (err) {
    expect(err).toBeInstanceOf(LedgerLineError);
    expect((err as LedgerLineError).line).toBe(n);
    return (err as LedgerLineError).reason;
  }
  throw new Error(`accepted: ${text}`);
}

describe('parseLedgerLine (one line of the erasure ledger)', () => {
  it('reads an entry as the export writes it; normalises the uuid to lower case and instants to UTC; ignores keys it does not know; a blank line is nothing', () => {
    expect(parseLedgerLine(line(good), 1)).toEqual(good);
    expect(parseLedgerLine(`  ${line({ ...good, user_id: ID.toUpperCase(), requested_at: '2026-03-01T12:00:00+02:00', later_field: 1 })}\r`, 1))
      .toEqual({ ...good, requested_at: '2026-03-01T10:00:00.000Z' });
    expect(parseLedgerLine('', 1)).toBeNull();
    expect(parseLedgerLine('   \r', 1)).toBeNull();
  });

  it('refuses, naming the line, what is not an entry: not JSON, not an object, a missing or malformed uuid or instant, a request after its erasure', () => {
    expect(refused('{"user_id": ')).toBe('not JSON');
    expect(refused('[1,2]')).toBe('not a JSON object');
    expect(refused('null')).toBe('not a JSON object');
    expect(refused(line({ ...good, user_id: undefined }))).toMatch(/"user_id" must be an account's uuid \(got nothing\)/);
    expect(refused(line({ ...good, user_id: 'amina.otieno' }))).toMatch(/"user_id" must be an account's uuid \(got "amina.otieno"\)/);
    expect(refused(line({ ...good, user_id: 42 }))).toMatch(/"user_id"/);
    expect(refused(line({ ...good, requested_at: '2026-03-01' }))).toMatch(/"requested_at" must be an instant/);
    expect(refused(line({ ...good, erased_at: '2026-02-30T10:00:00Z' }))).toMatch(/"erased_at" must be an instant/);
    expect(refused(line({ ...good, erased_at: 1767225600000 }))).toMatch(/"erased_at" must be an instant/);
    expect(refused(line({ ...good, requested_at: '2026-04-01T00:00:00Z' }))).toBe('"requested_at" is after "erased_at"');
  });
});

describe('parseLedger (a whole file)', () => {
  it('reads every line (a byte-order mark, blank lines and a missing final newline are fine)', () => {
    const other = { ...good, user_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7' };
    expect(parseLedger(`\uFEFF${line(good)}\n\n${line(other)}`)).toEqual([good, other]);
    expect(parseLedger('')).toEqual([]);
  });

  it('stops at the first malformed line and names its number, counting blank lines', () => {
    const text = [line(good), '', line(good), line({ ...good, user_id: 'x' }), 'not json'].join('\n');
    expect(() => parseLedger(text)).toThrow(new LedgerLineError(4, '"user_id" must be an account\'s uuid (got "x")'));
    try {
      parseLedger(text);
    } catch (err) {
      expect((err as LedgerLineError).line).toBe(4);
    }
  });
});
