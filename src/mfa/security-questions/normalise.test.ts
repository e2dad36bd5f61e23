import { describe, expect, it } from 'vitest';
import { answerLength, normaliseAnswer } from './normalise.js';

describe('normaliseAnswer', () => {
  it('trims, case-folds and collapses internal whitespace runs', () => {
    expect(normaliseAnswer('  Nairobi   West ')).toBe('nairobi west');
    expect(normaliseAnswer('nairobi west')).toBe('nairobi west');
    expect(normaliseAnswer('\tNAIROBI\n\nWEST\r\n')).toBe('nairobi west');
  });

  it('treats no-break, ideographic and other Unicode spaces as whitespace', () => {
    expect(normaliseAnswer('Nairobi\u00a0West')).toBe('nairobi west');
    expect(normaliseAnswer('Nairobi\u3000\u2003West')).toBe('nairobi west');
  });

  it('applies NFKC: full-width letters, ligatures and decomposed accents', () => {
    expect(normaliseAnswer('ＮＡＩＲＯＢＩ')).toBe('nairobi');
    expect(normaliseAnswer('\ufb01sh')).toBe('fish'); // "ﬁ" ligature
    expect(normaliseAnswer('Cafe\u0301')).toBe(normaliseAnswer('CAF\u00c9'));
    expect(normaliseAnswer('Cafe\u0301')).toBe('caf\u00e9');
  });

  it('folds case beyond ASCII (German sharp s, Greek final sigma, Cyrillic)', () => {
    expect(normaliseAnswer('Straße')).toBe(normaliseAnswer('STRASSE'));
    expect(normaliseAnswer('ΟΔΥΣΣΕΥΣ')).toBe(normaliseAnswer('οδυσσευς'));
    expect(normaliseAnswer('МОСКВА')).toBe('москва');
  });

  it('drops invisible default-ignorable characters (zero-width space, soft hyphen)', () => {
    expect(normaliseAnswer('Nai\u200brobi')).toBe('nairobi');
    expect(normaliseAnswer('Nai\u00adrobi')).toBe('nairobi');
  });

  it('keeps different answers different', () => {
    expect(normaliseAnswer('Nairobi West')).not.toBe(normaliseAnswer('NairobiWest'));
    expect(normaliseAnswer('café')).not.toBe(normaliseAnswer('cafe'));
  });

  it('is idempotent', () => {
    for (const s of ['  Nairobi   West ', 'Straße', 'ＮＡＩＲＯＢＩ', 'Cafe\u0301', 'İstanbul']) {
      expect(normaliseAnswer(normaliseAnswer(s))).toBe(normaliseAnswer(s));
    }
  });
});

describe('answerLength', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(answerLength(normaliseAnswer(' a '))).toBe(1);
    expect(answerLength('\u{1f431}\u{1f436}')).toBe(2);
    expect(answerLength(normaliseAnswer('   '))).toBe(0);
  });
});
