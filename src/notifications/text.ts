/**
 * What a push text may hold: printable Unicode. Refused: control characters (a line break only
 * in a body), bidirectional overrides and isolates (they make "1,500.00" read as something else
 * on the lock screen) and marks (LRM, RLM, ALM), line and paragraph separators, and lone surrogates (not text; PostgreSQL's
 * jsonb refuses them). The patterns are for JSON schemas (Ajv compiles them with the `u` flag);
 * `textProblem` is the same rule for fields checked in code.
 */
const UNSAFE = '\\u061C\\u200E\\u200F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069\\p{Cs}';

/** One line: no control character at all. */
export const LINE_PATTERN = `^[^\\p{Cc}${UNSAFE}]*$`;
/** A body: line breaks allowed, no other control character. */
export const MULTILINE_PATTERN = `^(?:\\n|[^\\p{Cc}${UNSAFE}])*$`;

const LINE = new RegExp(LINE_PATTERN, 'u');
const MULTILINE = new RegExp(MULTILINE_PATTERN, 'u');

/** Why `text` is refused, or undefined. */
export function textProblem(text: string, multiline = false): string | undefined {
  if ((multiline ? MULTILINE : LINE).test(text)) return undefined;
  return multiline
    ? 'must not hold control characters other than line breaks, bidirectional controls, separators or lone surrogates'
    : 'must not hold control characters, bidirectional controls, separators or lone surrogates';
}
