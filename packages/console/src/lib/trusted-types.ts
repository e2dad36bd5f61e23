/**
 * The pages require Trusted Types (`require-trusted-types-for 'script'`): no string reaches an
 * HTML sink such as innerHTML. One library writes one: React Aria's live announcer empties its
 * regions with `innerHTML = ''`. The only policy the pages' CSP admits, `default`, lets exactly
 * that through (an empty string carries no markup) and refuses anything else, which the browser
 * then blocks and reports as a violation.
 */
interface TrustedTypesFactory {
  createPolicy(name: string, rules: { createHTML(input: string): string }): unknown;
}

export function installTrustedTypesPolicy(): void {
  const factory = (globalThis as { trustedTypes?: TrustedTypesFactory }).trustedTypes;
  if (!factory) return; // a browser without Trusted Types enforces nothing either
  factory.createPolicy('default', {
    createHTML(input) {
      if (input === '') return input;
      throw new TypeError('Refused: markup written as a string (the pages build their DOM with React).');
    },
  });
}
