import { describe, expect, it } from 'vitest';
import { CsvError, parseCsv, toCsv } from './csv.js';

describe('FAQ CSV', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF or LF', () => {
    expect(parseCsv('a,b,c\r\n"x, y","say ""hi""","line 1\nline 2"\n1,,3')).toEqual([['a', 'b', 'c'], ['x, y', 'say "hi"', 'line 1\nline 2'], ['1', '', '3']]);
  });

  it('ignores a byte-order mark and a final line break', () => {
    expect(parseCsv('\uFEFFq,a\n1,2\n')).toEqual([['q', 'a'], ['1', '2']]);
  });

  it('refuses an unclosed quote and text after a closing quote, naming the record', () => {
    expect(() => parseCsv('a\n"open')).toThrow(CsvError);
    expect(() => parseCsv('"a"b')).toThrow('a closing quote must end the field');
  });

  it('threat: formula injection: a cell starting with = + - @ is exported as text, and imports back unchanged', () => {
    const csv = toCsv(['question', 'answer'], [['=HYPERLINK("http://evil.example","Click")', '-1 fee'], ['@SUM(A1)', 'plain']]);
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example"",""Click"")"`);
    expect(csv).toContain("'-1 fee");
    expect(parseCsv(csv)).toEqual([['question', 'answer'], ['=HYPERLINK("http://evil.example","Click")', '-1 fee'], ['@SUM(A1)', 'plain']]);
  });

  it('round-trips quotes, commas and line breaks', () => {
    const rows = [['He said "no", then\r\nleft', 'x']];
    expect(parseCsv(toCsv(['a', 'b'], rows)).slice(1)).toEqual(rows);
  });
});
