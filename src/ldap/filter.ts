/**
 * LDAP search filters built from an operator's template and an untrusted username.
 *
 * The username only ever enters a filter through `escapeFilterValue`, never concatenated raw:
 * otherwise `*` matches everyone and `*)(uid=*))(|(uid=*` rewrites the filter.
 */
import { FilterParser } from 'ldapts';

export const USERNAME_PLACEHOLDER = '{username}';

/**
 * RFC 4515 section 3 escaping of an assertion value: `*`, `(`, `)`, `\` and NUL become `\2a`,
 * `\28`, `\29`, `\5c`, `\00`. Everything else, including non-ASCII, is left as UTF-8, which the
 * grammar allows (UTF1SUBSET / UTFMB). Escaping non-ASCII bytes as `\XX` would be allowed too, but
 * ldapts decodes each `\XX` into one UTF-16 code unit (String.fromCharCode) rather than one byte,
 * so `ü` sent as `\c3\bc` would reach the server as `Ã¼` and never match.
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export class UserFilterTemplateError extends Error {
  override readonly name = 'UserFilterTemplateError';
}

/**
 * Checks a `user_filter` template at configuration time (SPEC: a template without `{username}` is
 * an invalid configuration): the placeholder must be present, parentheses balanced around one
 * top-level filter, and the template with a hostile value in it must still parse (a placeholder in
 * an attribute-name position does not).
 */
export function validateUserFilterTemplate(template: string): void {
  if (!template.includes(USERNAME_PLACEHOLDER)) throw new UserFilterTemplateError(`user filter must contain ${USERNAME_PLACEHOLDER}`);
  const probe = substitute(template, 'probe*()\\\0');
  if (!balanced(probe)) throw new UserFilterTemplateError('user filter must be one parenthesised filter with balanced parentheses');
  try {
    FilterParser.parseString(probe);
  } catch (err) {
    throw new UserFilterTemplateError(`user filter does not parse: ${(err as Error).message}`);
  }
}

/** The template with every `{username}` replaced by the escaped username. */
export function buildUserFilter(template: string, username: string): string {
  return userFilter(template)(username);
}

/** `buildUserFilter` for one template, checked once (a directory client's, for every sign-in). */
export function userFilter(template: string): (username: string) => string {
  validateUserFilterTemplate(template);
  const parts = template.split(USERNAME_PLACEHOLDER);
  return (username) => parts.join(escapeFilterValue(username));
}

function substitute(template: string, username: string): string {
  // split/join, not String.replace: a replacement string would interpret `$&`, `$'` and so on.
  return template.split(USERNAME_PLACEHOLDER).join(escapeFilterValue(username));
}

/** One top-level `( … )` whose parentheses balance; `\XX` escapes are skipped. */
function balanced(filter: string): boolean {
  if (!filter.startsWith('(')) return false;
  let depth = 0;
  for (let i = 0; i < filter.length; i++) {
    const c = filter[i];
    if (c === '\\') {
      i += 2;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
      if (depth < 0 || (depth === 0 && i !== filter.length - 1)) return false;
    }
  }
  return depth === 0;
}
