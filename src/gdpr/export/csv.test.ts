import { describe, expect, it } from 'vitest';
import { toCsv } from './csv.js';

describe('toCsv', () => {
  it('a header line, CRLF line ends, empty for null, JSON for objects', () => {
    expect(toCsv(['a', 'b', 'c'], [{ a: 1, b: null, c: { x: 1 } }])).toBe('a,b,c\r\n1,,"{""x"":1}"\r\n');
  });

  it('quotes commas, quotes, line breaks and edge spaces (RFC 4180)', () => {
    expect(toCsv(['v'], [{ v: 'a,b' }, { v: 'say "hi"' }, { v: 'two\nlines' }, { v: ' padded' }, { v: 'plain' }]))
      .toBe('v\r\n"a,b"\r\n"say ""hi"""\r\n"two\nlines"\r\n" padded"\r\nplain\r\n');
  });

  it('CSV injection: a text a spreadsheet would run as a formula starts with a single quote; numbers stay numbers', () => {
    expect(toCsv(['v'], [{ v: '=HYPERLINK("http://evil")' }, { v: '+1' }, { v: '-2' }, { v: '@SUM(A1)' }, { v: -3 }]))
      .toBe('v\r\n"\'=HYPERLINK(""http://evil"")"\r\n\'+1\r\n\'-2\r\n\'@SUM(A1)\r\n-3\r\n');
  });
});
