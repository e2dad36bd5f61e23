import { describe, expect, it } from 'vitest';
import { queryLexemes, snippet } from './snippet.js';

describe('FAQ snippet', () => {
  it('reads the lexemes of a tsquery, leaving out negated ones and unescaping quotes', () => {
    expect(queryLexemes("'lost' & 'card'")).toEqual(['lost', 'card']);
    expect(queryLexemes("'card' & !'atm'")).toEqual(['card']);
    expect(queryLexemes("'stand' <-> 'order' | 'o''brien'")).toEqual(['stand', 'order', "o'brien"]);
    expect(queryLexemes('')).toEqual([]);
    expect(queryLexemes("'card' & !( 'lost' <-> 'card' )")).toEqual(['card']);
    expect(queryLexemes("'card' & !( 'a' & !( 'b' ) )")).toEqual(['card']);
  });

  it('marks the words a stem starts (transfers, blocking), not words that merely contain it', () => {
    expect(snippet('Blocking stops transfers; a reblock does not.', ['block', 'transfer'])).toBe('<mark>Blocking</mark> stops <mark>transfers</mark>; a reblock does not.');
  });

  it('picks the passage with the most matches and says where it was cut', () => {
    const text = `${'Intro words here. '.repeat(20)}To block your card open the app and block the card now. ${'Outro words here. '.repeat(20)}`;
    const s = snippet(text, ['block', 'card'], 12);
    expect(s.startsWith('… ')).toBe(true);
    expect(s.endsWith(' …')).toBe(true);
    expect(s.match(/<mark>/g)).toHaveLength(4);
  });

  it('threat: markup in the answer is escaped; only <mark> is added', () => {
    const s = snippet('Yes <script>alert("x")</script> & <b>card</b>', ['card']);
    expect(s).toBe('Yes &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;<mark>card</mark>&lt;/b&gt;');
    expect(s.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  });

  it('gives the start of the answer when no word matches', () => {
    expect(snippet('one two three four', ['zebra'], 2)).toBe('one two …');
  });
});
