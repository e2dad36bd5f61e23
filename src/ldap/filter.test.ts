import { AndFilter, EqualityFilter, type Filter, FilterParser, OrFilter } from 'ldapts';
import { describe, expect, it } from 'vitest';
import { buildUserFilter, escapeFilterValue, UserFilterTemplateError, validateUserFilterTemplate } from './filter.js';

const HOSTILE = [
  '*',
  '*)(uid=*',
  '*)(uid=*))(|(uid=*',
  'admin)(|(objectClass=*)',
  'alice)(&)',
  '\\',
  '\\2a',
  'a\\29b',
  '\0',
  'alice\0',
  '(',
  ')',
  '()',
  '$&$`$\'$$',
  '{username}',
  'ev*l(us)er\\x',
  'jürgen',
  '日本語',
  '😀*',
  ' ',
];

/** What the server would receive: the filter as ldapts encodes it. */
function parsed(filter: string): Filter {
  return FilterParser.parseString(filter);
}

describe('escapeFilterValue (RFC 4515 section 3)', () => {
  it('escapes exactly the five reserved characters as lower-case \\XX', () => {
    expect(escapeFilterValue('*')).toBe('\\2a');
    expect(escapeFilterValue('(')).toBe('\\28');
    expect(escapeFilterValue(')')).toBe('\\29');
    expect(escapeFilterValue('\\')).toBe('\\5c');
    expect(escapeFilterValue('\0')).toBe('\\00');
    expect(escapeFilterValue('*)(uid=*))(|(uid=*')).toBe('\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a');
  });

  it('leaves ordinary and non-ASCII characters as they are (UTF-8 is allowed in a value)', () => {
    expect(escapeFilterValue('alice.o-brien_2@bank.test')).toBe('alice.o-brien_2@bank.test');
    expect(escapeFilterValue('jürgen 日本 😀')).toBe('jürgen 日本 😀');
    expect(escapeFilterValue('=&|!~<>:')).toBe('=&|!~<>:');
  });

  it('escapes an already-escaped-looking value again, so it stays literal', () => {
    expect(escapeFilterValue('\\2a')).toBe('\\5c2a');
  });
});

describe('buildUserFilter', () => {
  it('replaces the placeholder with the escaped username', () => {
    expect(buildUserFilter('(uid={username})', 'alice')).toBe('(uid=alice)');
    expect(buildUserFilter('(&(objectClass=inetOrgPerson)(uid={username}))', 'a*')).toBe('(&(objectClass=inetOrgPerson)(uid=a\\2a))');
  });

  it('replaces every occurrence, and `$` patterns in the username stay literal', () => {
    expect(buildUserFilter('(|(uid={username})(mail={username}))', '$&')).toBe('(|(uid=$&)(mail=$&))');
  });

  it.each(HOSTILE)('hostile username %j stays one equality assertion with that exact value', (username) => {
    const filter = parsed(buildUserFilter('(uid={username})', username));
    expect(filter).toBeInstanceOf(EqualityFilter);
    expect(filter).toMatchObject({ attribute: 'uid', value: username });
  });

  it.each(HOSTILE)('hostile username %j cannot change the structure of a compound template', (username) => {
    const filter = parsed(buildUserFilter('(&(objectClass=person)(|(uid={username})(mail={username})))', username));
    expect(filter).toBeInstanceOf(AndFilter);
    const [klass, either] = (filter as AndFilter).filters;
    expect(klass).toMatchObject({ attribute: 'objectClass', value: 'person' });
    expect(either).toBeInstanceOf(OrFilter);
    expect((either as OrFilter).filters).toEqual([
      expect.objectContaining({ attribute: 'uid', value: username }),
      expect.objectContaining({ attribute: 'mail', value: username }),
    ]);
  });

  it('round-trips random strings over a hostile alphabet', () => {
    const alphabet = ['*', '(', ')', '\\', '\0', 'a', '=', '|', '&', '!', 'ü', '2', 'f', ' '];
    for (let n = 0; n < 500; n++) {
      const username = Array.from({ length: 1 + (n % 12) }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
      expect(parsed(buildUserFilter('(uid={username})', username))).toMatchObject({ attribute: 'uid', value: username });
    }
  });
});

describe('validateUserFilterTemplate', () => {
  it.each([
    '(uid={username})',
    '(&(objectClass=inetOrgPerson)(uid={username}))',
    '(|(uid={username})(mail={username}))',
    '(&(uid={username})(!(nsAccountLock=TRUE)))',
    '(cn=*{username}*)',
    '(uid=\\28x\\29{username})',
  ])('accepts %s', (template) => {
    expect(() => validateUserFilterTemplate(template)).not.toThrow();
  });

  it.each([
    ['no placeholder', '(uid=alice)'],
    ['a misspelt placeholder', '(uid={user})'],
    ['empty', ''],
    ['no parentheses', 'uid={username}'],
    ['unbalanced, open', '(&(uid={username})'],
    ['unbalanced, close', '(uid={username}))'],
    ['two top-level filters', '(uid={username})(cn=x)'],
    ['placeholder as an attribute name', '({username}=x)'],
  ])('refuses %s', (_label, template) => {
    expect(() => validateUserFilterTemplate(template)).toThrow(UserFilterTemplateError);
  });

  it('buildUserFilter refuses a template without the placeholder rather than searching with it', () => {
    expect(() => buildUserFilter('(objectClass=*)', 'alice')).toThrow(/\{username\}/);
  });
});
