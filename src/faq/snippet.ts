/**
 * The snippet of a search hit: the passage of the answer with the most matched words, HTML-escaped,
 * each matched word in `<mark>`, so that a help page may insert it as HTML whatever the answer says.
 *
 * Made here rather than by PostgreSQL's `ts_headline`, which parses every answer again with the
 * full-text parser (about 0.1 ms an answer: a fifth of the search's budget for ten hits). A word
 * matches when it starts with a lexeme of the query: English Snowball stems are the start of the
 * words they come from ("transfer" of "transfers", "block" of "blocking"), which is what the
 * search matched on.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** The lexemes of a tsquery's text form (`'lost' & 'card'`, `'card' & !'atm'`): negated ones excluded. */
export function queryLexemes(tsquery: string): string[] {
  const out = new Set<string>();
  // A negated group (`!( 'lost' <-> 'card' )`, an excluded phrase) goes first, innermost out.
  let text = tsquery;
  for (let before = ''; before !== text;) {
    before = text;
    text = text.replace(/!\s*\([^()]*\)/g, '');
  }
  for (const m of text.matchAll(/(!?)\s*'((?:[^']|'')*)'(?::\*?[A-D]*)?/g)) {
    if (m[1] !== '!') out.add(m[2]!.replaceAll("''", "'"));
  }
  return [...out];
}

function matches(word: string, lexemes: readonly string[]): boolean {
  const w = word.toLowerCase();
  return lexemes.some((l) => (l.length < 3 ? w === l : w.startsWith(l)));
}

/** At most `maxWords` words of `text` around the most matches; ` … ` where it was cut. */
export function snippet(text: string, lexemes: readonly string[], maxWords = 30): string {
  const words = [...text.matchAll(WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length, hit: matches(m[0], lexemes) }));
  if (words.length === 0) return escape(text.slice(0, 200));
  // The window of maxWords words with the most hits (the first such): a sliding count.
  let best = 0;
  let bestHits = -1;
  let hits = 0;
  for (let i = 0; i < words.length; i++) {
    if (words[i]!.hit) hits++;
    if (i >= maxWords && words[i - maxWords]!.hit) hits--;
    const from = Math.max(0, i - maxWords + 1);
    if (i >= Math.min(maxWords, words.length) - 1 && hits > bestHits) {
      bestHits = hits;
      best = from;
    }
  }
  const last = Math.min(words.length, best + maxWords) - 1;
  const start = best === 0 ? 0 : words[best]!.start;
  const end = last === words.length - 1 ? text.length : words[last]!.end;
  let html = '';
  let at = start;
  for (let i = best; i <= last; i++) {
    const w = words[i]!;
    html += escape(text.slice(at, w.start));
    html += w.hit ? `<mark>${escape(text.slice(w.start, w.end))}</mark>` : escape(text.slice(w.start, w.end));
    at = w.end;
  }
  html += escape(text.slice(at, end));
  return `${start > 0 ? '… ' : ''}${html.replace(/\s+/g, ' ').trim()}${end < text.length ? ' …' : ''}`;
}
