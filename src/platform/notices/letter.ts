/**
 * The shape every emailed notice shares: the greeting, a blank line, the paragraphs separated by
 * blank lines, a blank line, and the closing (the sender's signature and "replies are not read").
 * Plain text, so that it reads the same in every mail client and carries nothing to render.
 */

/** A paragraph: one string, or lines kept together without a blank line (a list, a wrapped text). */
export type Paragraph = string | readonly string[];

export interface Letter {
  /** "Dear Amina Otieno," in the notice's language. */
  greeting: string;
  paragraphs: readonly Paragraph[];
  /** One string (it may hold line breaks) or its lines. */
  closing: Paragraph;
}

const lines = (p: Paragraph): string => (typeof p === 'string' ? p : p.join('\n'));

/** The text of a letter. */
export function letterText(l: Letter): string {
  return [l.greeting, ...l.paragraphs.map(lines), lines(l.closing)].join('\n\n');
}

/**
 * What a greeted name may hold: letters and their marks, spaces, apostrophes, hyphens and dots,
 * at most 80 characters. A full name changes with a session alone (no password), so a stolen
 * session could otherwise write "call +44 20 ..." or a link into the bank's own security notices.
 */
const GREETABLE_NAME = /^[\p{L}\p{M}][\p{L}\p{M} '’.-]{0,79}$/u;

/**
 * The name a letter greets: the account holder's full name, or their username when it has none
 * or when it is not a plain name (digits, symbols, links: GREETABLE_NAME).
 */
export function addressee(r: { fullName: string | null; username: string }): string {
  const name = r.fullName?.trim() ?? '';
  return GREETABLE_NAME.test(name) ? name : r.username;
}
