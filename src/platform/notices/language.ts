/**
 * The languages a notice to an account holder is written in, and the choice of words for one.
 *
 * Every capability that writes to customers (recovery, breach, erasure and contact-change notices)
 * keeps one table of words per language; `wordsFor` picks the account holder's table, and English
 * when they chose none.
 */

/** A notice's language: the account's `language` column (null there means English). */
export type NoticeLanguage = 'en' | 'pt' | 'fr';

/** Every language a notice exists in, for tests that render each one. */
export const NOTICE_LANGUAGES: readonly NoticeLanguage[] = ['en', 'pt', 'fr'];

/**
 * The words of `table` in `language`; English when the account has no language. A value the
 * type does not know (a row written by a newer version, a hand edit) also gets English rather
 * than an undefined table, so a notice is never lost for want of a translation.
 */
export function wordsFor<W>(table: Readonly<Record<NoticeLanguage, W>>, language: NoticeLanguage | null | undefined): W {
  return table[language ?? 'en'] ?? table.en;
}
