/**
 * Distinguished names as LDAP writes them (RFC 4514), parsed and put in one canonical form so
 * that two spellings of one DN compare equal: attribute types lower-cased, values unescaped
 * (`\,`, `\2C`, UTF-8 in hex pairs), case-folded with insignificant spaces removed (the
 * caseIgnoreMatch of `cn`, `ou`, `dc`, `o`, `uid`; RFC 4518 2.6.1), the values of a
 * multi-valued RDN sorted, spaces around `,` `+` `=` ignored. A value given as `#hex` (BER) is
 * kept as hex: it is compared as written, never decoded.
 *
 * Where the canonical form could be looser than a directory's own matching, two DNs the
 * directory keeps apart would compare equal here, and one could stand in for the other: so no
 * Unicode compatibility folding (NFKC would make a full-width `ｇｒｏｕｐｓ` equal `groups`, which
 * some directories keep apart); stricter only fails closed (a group that matches nothing).
 */

/** One attribute type and value of an RDN, normalised. */
export interface Ava {
  type: string;
  value: string;
  /** The value was written as `#` and hex pairs (BER). */
  ber: boolean;
}

/** A DN, its RDNs from the entry itself up to the root, each RDN's values sorted. */
export type Dn = ReadonlyArray<readonly Ava[]>;

export class DnSyntaxError extends Error {}

const SPECIAL = '"+,;<>\\=#';

/** A value as caseIgnoreMatch compares it: case-folded, runs of spaces one space, none at either end. */
export function foldValue(value: string): string {
  return value.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Parses `text`; throws `DnSyntaxError` saying what is wrong. The empty string is the empty DN. */
export function parseDn(text: string): Dn {
  let i = 0;
  const fail = (what: string): never => {
    throw new DnSyntaxError(`${what} at character ${i + 1}`);
  };
  const skipSpaces = () => {
    while (text[i] === ' ') i++;
  };
  const readType = (): string => {
    const m = /^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)*)/.exec(text.slice(i));
    if (!m) fail('an attribute type is expected');
    i += m![0].length;
    return m![0].toLowerCase();
  };
  const readBer = (): string => {
    const m = /^#((?:[0-9A-Fa-f]{2})+)/.exec(text.slice(i));
    if (!m) fail('# must be followed by hex pairs');
    i += m![0].length;
    return m![1]!.toLowerCase();
  };
  const readString = (): string => {
    const bytes: number[] = [];
    let significantEnd = 0; // bytes up to the last escaped or non-space character
    while (i < text.length && !',+;'.includes(text[i]!)) {
      const c = text[i]!;
      if (c === '\\') {
        const next = text[i + 1];
        if (next !== undefined && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
          bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
          i += 3;
        } else if (next !== undefined && (SPECIAL.includes(next) || next === ' ')) {
          bytes.push(next.charCodeAt(0));
          i += 2;
        } else {
          fail('a backslash must escape a special character or a hex pair');
        }
        significantEnd = bytes.length;
        continue;
      }
      if (c === '"' || c === '<' || c === '>' || c === '\0') fail(`${JSON.stringify(c)} must be escaped`);
      // One code point, two UTF-16 units outside the BMP: a lone surrogate has no UTF-8 form.
      const cp = text.codePointAt(i)!;
      if (cp >= 0xd800 && cp <= 0xdfff) fail('a value is not UTF-8');
      const char = String.fromCodePoint(cp);
      for (const b of Buffer.from(char, 'utf8')) bytes.push(b);
      i += char.length;
      if (c !== ' ') significantEnd = bytes.length;
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes.slice(0, significantEnd)));
    } catch {
      return fail('a value is not UTF-8');
    }
  };

  skipSpaces();
  if (i === text.length) return [];
  const rdns: Ava[][] = [];
  for (;;) {
    const rdn: Ava[] = [];
    for (;;) {
      skipSpaces();
      const type = readType();
      skipSpaces();
      if (text[i] !== '=') fail('= is expected');
      i++;
      skipSpaces();
      const ber = text[i] === '#';
      const raw = ber ? readBer() : readString();
      if (raw === '') fail('a value is expected');
      const value = ber ? raw : foldValue(raw);
      rdn.push({ type, value, ber });
      skipSpaces();
      if (text[i] !== '+') break;
      i++;
    }
    rdns.push(rdn.sort((a, b) => (a.type === b.type ? (a.value < b.value ? -1 : a.value > b.value ? 1 : 0) : a.type < b.type ? -1 : 1)));
    if (i === text.length) return rdns;
    if (text[i] !== ',' && text[i] !== ';') fail(', is expected');
    i++;
  }
}

const escapeValue = (v: string): string => v.replace(/[\\"+,;<>=\0]/g, (c) => `\\${c}`).replace(/^#/, '\\#');

/** The canonical text of a parsed DN. */
export function formatDn(dn: Dn): string {
  return dn.map((rdn) => rdn.map((a) => `${a.type}=${a.ber ? `#${a.value}` : escapeValue(a.value)}`).join('+')).join(',');
}

/** The canonical form of `text`, or null when it is not a DN. */
export function normalizeDn(text: string): string | null {
  try {
    return formatDn(parseDn(text));
  } catch (err) {
    if (err instanceof DnSyntaxError) return null;
    throw err;
  }
}

/** Whether `dn` lies below `base` (at any depth; not `base` itself). */
export function isUnder(dn: Dn, base: Dn): boolean {
  if (dn.length <= base.length) return false;
  const tail = dn.slice(dn.length - base.length);
  return formatDn(tail) === formatDn(base);
}
