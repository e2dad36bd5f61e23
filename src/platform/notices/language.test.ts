import { describe, expect, it } from 'vitest';
import { NOTICE_LANGUAGES, wordsFor, type NoticeLanguage } from './language.js';

const TABLE = { en: 'Dear', pt: 'Caro(a)', fr: 'Bonjour' };

describe('notice language', () => {
  it('picks the words of the account\'s language', () => {
    expect(NOTICE_LANGUAGES.map((l) => wordsFor(TABLE, l))).toEqual(['Dear', 'Caro(a)', 'Bonjour']);
  });

  it('falls back to English when the account has no language, or one the table does not know', () => {
    expect(wordsFor(TABLE, null)).toBe('Dear');
    expect(wordsFor(TABLE, undefined)).toBe('Dear');
    expect(wordsFor(TABLE, 'de' as NoticeLanguage)).toBe('Dear');
  });
});
