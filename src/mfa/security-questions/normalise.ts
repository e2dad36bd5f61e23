/**
 * Answer normalisation for security questions (SPEC "Second factors": answers are compared
 * case-insensitively after trimming whitespace). Two spellings a person would call the same
 * answer must hash the same, so before bcrypt every answer goes through, in order:
 *
 * 1. Unicode NFKC (UAX #15): full-width letters, ligatures (`ﬁ`) and composed or decomposed
 *    accents (`é` / `e` + U+0301) become one form.
 * 2. Removal of default-ignorable code points (zero-width spaces and joiners, soft hyphens),
 *    which are invisible and arrive with copy and paste.
 * 3. Case folding: upper then lower case, the locale-independent default mappings (Unicode 3.13
 *    "default caseless matching"); `ß` matches `SS` and a final sigma matches `Σ`.
 * 4. Every run of whitespace (tabs, no-break and ideographic spaces too) becomes one space;
 *    leading and trailing whitespace goes.
 */

/** Shortest answer accepted, in code points after normalising. */
export const MIN_ANSWER_LENGTH = 2;

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const WHITESPACE = /\s+/gu;

/** The canonical form of an answer: what is hashed at setup and compared at verification. */
export function normaliseAnswer(raw: string): string {
  const folded = raw.normalize('NFKC').replace(IGNORABLE, '').toUpperCase().toLowerCase();
  // Case mapping can produce sequences that compose again (NFKC is not closed under it).
  return folded.normalize('NFKC').replace(WHITESPACE, ' ').trim();
}

/** Length in code points (what a person counts as characters, near enough for "at least 2"). */
export function answerLength(normalised: string): number {
  return [...normalised].length;
}
