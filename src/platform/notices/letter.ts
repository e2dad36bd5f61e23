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

/** The name a letter greets: the account holder's full name, or their username when it has none. */
export function addressee(r: { fullName: string | null; username: string }): string {
  return r.fullName?.trim() || r.username;
}
