/**
 * Standard base64 (RFC 4648 section 4, with padding), the encoding of every binary field of the
 * transport wire format. Written here rather than with btoa/atob so it works on bytes directly,
 * the same way in Node and in browsers, and so decoding is strict: anything that is not
 * canonical standard base64 is refused.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;

const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + '=';
  }
  return out;
}

/** Decodes standard base64 with padding; throws a `TypeError` on anything else. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  if (!STRICT.test(text)) throw new TypeError('not standard base64');
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const a = LOOKUP[text.charCodeAt(i)]!;
    const b = LOOKUP[text.charCodeAt(i + 1)]!;
    const c = text[i + 2] === '=' ? 0 : LOOKUP[text.charCodeAt(i + 2)]!;
    const d = text[i + 3] === '=' ? 0 : LOOKUP[text.charCodeAt(i + 3)]!;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  // Canonical form only: the bits a padded final group leaves unused must be zero.
  if (pad > 0 && toBase64(out.subarray(out.length - (3 - pad))) !== text.slice(-4)) throw new TypeError('not canonical base64');
  return out;
}
