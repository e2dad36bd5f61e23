/**
 * A small, strict DER reader: just what the attestation checks need (X.509 extensions, Android's
 * key description, Apple's nonce). Definite lengths only, minimal length encodings, no trailing
 * bytes where a whole value is expected. Anything else throws `DerError`; callers turn it into
 * their own failure.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

export const CLASS_UNIVERSAL = 0;
export const CLASS_CONTEXT = 2;

export const TAG_BOOLEAN = 1;
export const TAG_INTEGER = 2;
export const TAG_OCTET_STRING = 4;
export const TAG_OID = 6;
export const TAG_ENUMERATED = 10;
export const TAG_SEQUENCE = 16;
export const TAG_SET = 17;
export const TAG_UTC_TIME = 23;
export const TAG_GENERALIZED_TIME = 24;

/** One TLV: its class, whether constructed, its tag number, and its content bytes. */
export interface DerNode {
  readonly cls: number;
  readonly constructed: boolean;
  readonly tag: number;
  readonly content: Buffer;
  /** The whole TLV (header and content). */
  readonly raw: Buffer;
}

function readTag(buf: Buffer, at: number): { cls: number; constructed: boolean; tag: number; next: number } {
  const first = buf[at];
  if (first === undefined) throw new DerError('truncated: no tag');
  const cls = first >> 6;
  const constructed = (first & 0x20) !== 0;
  let tag = first & 0x1f;
  let next = at + 1;
  if (tag === 0x1f) { // high tag number: base-128 digits, at most 3 (tags up to 2^21)
    tag = 0;
    for (let i = 0; ; i++) {
      const b = buf[next++];
      if (b === undefined || i >= 3 || (i === 0 && b === 0x80)) throw new DerError('bad high tag number');
      tag = (tag << 7) | (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    if (tag < 0x1f) throw new DerError('high tag form for a low tag number');
  }
  return { cls, constructed, tag, next };
}

function readLength(buf: Buffer, at: number): { length: number; next: number } {
  const first = buf[at];
  if (first === undefined) throw new DerError('truncated: no length');
  if (first < 0x80) return { length: first, next: at + 1 };
  const count = first & 0x7f;
  if (count === 0) throw new DerError('indefinite length');
  if (count > 4) throw new DerError('length too large');
  let length = 0;
  for (let i = 0; i < count; i++) {
    const b = buf[at + 1 + i];
    if (b === undefined) throw new DerError('truncated length');
    if (i === 0 && b === 0) throw new DerError('non-minimal length');
    length = length * 256 + b;
  }
  if (length < 0x80) throw new DerError('non-minimal length');
  return { length, next: at + 1 + count };
}

/** The TLV starting at `at` in `buf` (which may hold more after it). */
export function readNode(buf: Buffer, at = 0): DerNode {
  const t = readTag(buf, at);
  const l = readLength(buf, t.next);
  const end = l.next + l.length;
  if (end > buf.length) throw new DerError('truncated content');
  return { cls: t.cls, constructed: t.constructed, tag: t.tag, content: buf.subarray(l.next, end), raw: buf.subarray(at, end) };
}

/** `buf` as exactly one TLV (nothing after it). */
export function parseDer(buf: Buffer): DerNode {
  const node = readNode(buf, 0);
  if (node.raw.length !== buf.length) throw new DerError('trailing bytes');
  return node;
}

/** The elements of a constructed node, in order. */
export function childrenOf(node: DerNode): DerNode[] {
  if (!node.constructed) throw new DerError('not constructed');
  const out: DerNode[] = [];
  for (let at = 0; at < node.content.length;) {
    const child = readNode(node.content, at);
    out.push(child);
    at += child.raw.length;
  }
  return out;
}

/** `node` checked to be the universal type `tag` (constructed for SEQUENCE and SET). */
export function expectUniversal(node: DerNode | undefined, tag: number): DerNode {
  if (!node || node.cls !== CLASS_UNIVERSAL || node.tag !== tag) throw new DerError(`expected universal tag ${tag}`);
  if (node.constructed !== (tag === TAG_SEQUENCE || tag === TAG_SET)) throw new DerError(`bad constructed bit for tag ${tag}`);
  return node;
}

/** The elements of a SEQUENCE (or SET, with `tag`). */
export function sequenceOf(node: DerNode | undefined, tag = TAG_SEQUENCE): DerNode[] {
  return childrenOf(expectUniversal(node, tag));
}

/** A non-negative INTEGER or ENUMERATED that fits in a JavaScript number exactly. */
export function smallUint(node: DerNode | undefined, tag = TAG_INTEGER): number {
  const { content } = expectUniversal(node, tag);
  if (content.length === 0 || content.length > 7) throw new DerError('integer size');
  if ((content[0]! & 0x80) !== 0) throw new DerError('negative integer');
  if (content.length > 1 && content[0] === 0 && (content[1]! & 0x80) === 0) throw new DerError('non-minimal integer');
  let v = 0;
  for (const b of content) v = v * 256 + b;
  if (!Number.isSafeInteger(v)) throw new DerError('integer too large');
  return v;
}

export function octets(node: DerNode | undefined): Buffer {
  return expectUniversal(node, TAG_OCTET_STRING).content;
}

export function boolean(node: DerNode | undefined): boolean {
  const { content } = expectUniversal(node, TAG_BOOLEAN);
  if (content.length !== 1 || (content[0] !== 0 && content[0] !== 0xff)) throw new DerError('bad boolean');
  return content[0] === 0xff;
}

/** An OBJECT IDENTIFIER in dotted form ("1.3.6.1.4.1.11129.2.1.17"). */
export function oid(node: DerNode | undefined): string {
  const { content } = expectUniversal(node, TAG_OID);
  if (content.length === 0 || content.length > 64) throw new DerError('oid size');
  const arcs: number[] = [];
  let v = 0;
  for (let i = 0; i < content.length; i++) {
    const b = content[i]!;
    if (v === 0 && b === 0x80) throw new DerError('non-minimal oid arc');
    v = v * 128 + (b & 0x7f);
    if (v > Number.MAX_SAFE_INTEGER / 128) throw new DerError('oid arc too large');
    if ((b & 0x80) === 0) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else arcs.push(v);
      v = 0;
    } else if (i === content.length - 1) throw new DerError('truncated oid');
  }
  return arcs.join('.');
}

const UTC = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/;
const GENERALIZED = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/;

/** A UTCTime or GeneralizedTime (RFC 5280 forms: seconds, `Z`), in milliseconds since the epoch. */
export function time(node: DerNode | undefined): number {
  if (!node || node.cls !== CLASS_UNIVERSAL || node.constructed) throw new DerError('expected a time');
  const text = node.content.toString('latin1');
  const m = node.tag === TAG_UTC_TIME ? UTC.exec(text) : node.tag === TAG_GENERALIZED_TIME ? GENERALIZED.exec(text) : null;
  if (!m) throw new DerError('bad time');
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const year = node.tag === TAG_UTC_TIME ? (y < 50 ? 2000 + y : 1900 + y) : y;
  const ms = Date.UTC(year, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw new DerError('bad time');
  return ms;
}
