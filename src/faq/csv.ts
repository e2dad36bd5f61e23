/**
 * CSV for the FAQ import and export (RFC 4180: comma-separated, fields with commas, quotes or line
 * breaks in double quotes, a quote inside doubled; CRLF or LF between records).
 *
 * Export guards against formula injection (OWASP "CSV Injection"): a field that starts with `=`,
 * `+`, `-`, `@`, a tab or a carriage return is prefixed with `'`, so a spreadsheet shows it as
 * text; so is one that starts with `'`. Import removes one such prefix again, so an export
 * imports back unchanged, whatever the text.
 */

/** What export prefixes with a `'`: a formula's first character, or a `'` itself (so the import, which removes one, gives it back). */
const GUARDED = /^[=+\-@\t\r']/;

export class CsvError extends Error {
  constructor(readonly row: number, message: string) {
    super(message);
  }
}

/** Records of fields; an empty trailing line is not a record. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text; // a spreadsheet's byte-order mark
  const endField = (): void => {
    row.push(field.startsWith("'") && GUARDED.test(field.slice(1)) ? field.slice(1) : field);
    field = '';
  };
  while (i < src.length) {
    const c = src[i]!;
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        if (i < src.length && src[i] !== ',' && src[i] !== '\n' && src[i] !== '\r') throw new CsvError(rows.length, 'a closing quote must end the field');
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== '') throw new CsvError(rows.length, 'a quote may only open a field');
      quoted = true;
    } else if (c === ',') endField();
    else if (c === '\n' || c === '\r') {
      endField();
      rows.push(row);
      row = [];
      if (c === '\r' && src[i + 1] === '\n') i++;
    } else field += c;
    i++;
  }
  if (quoted) throw new CsvError(rows.length, 'a quoted field is not closed');
  if (field !== '' || row.length > 0) {
    endField();
    rows.push(row);
  }
  return rows;
}

function cell(value: string | number | boolean): string {
  let s = String(value);
  if (typeof value === 'string' && GUARDED.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** A header and records, CRLF-separated (RFC 4180). */
export function toCsv(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | boolean>>): string {
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}
