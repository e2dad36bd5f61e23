/**
 * Placeholders in braces (SPEC: "message (placeholders in braces)"): `{amount}`. A placeholder is
 * a name of letters, digits and underscores; any other brace in a template is refused when it is
 * saved, so a sent message can never carry a brace. Rendering is one pass: a value holding
 * `{code}` is text, never expanded again.
 */

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;

/** The placeholders of a text, each once, in order of first use. */
export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** The placeholders a template uses, in its subject or its message, each once. */
export function templatePlaceholders(t: { subject: string; message: string }): string[] {
  return [...new Set([...placeholdersOf(t.subject), ...placeholdersOf(t.message)])];
}

/** Why a template text is unusable, or undefined: a brace that opens or closes no placeholder. */
export function braceProblem(text: string): string | undefined {
  const rest = text.replace(PLACEHOLDER, '');
  const at = rest.search(/[{}]/);
  if (at === -1) return undefined;
  return 'has a brace that is not part of a placeholder such as {amount} (letters, digits and underscores)';
}

/** The text with each placeholder replaced by its value; the caller has checked none is missing. */
export function fill(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name) ? values[name]! : whole));
}
