/**
 * Text messages in the GSM-7 default alphabet (3GPP TS 23.038), one segment each.
 *
 * Why GSM-7: a message written only in it travels as one segment of 160 characters (septets) and
 * displays on every handset, however old. A single character outside it (`ã`, `ç`, `ô`, a curly
 * apostrophe) switches the whole message to UCS-2, whose segments hold 70 characters (67 once a
 * message is split): a 120-character notice then goes out as two segments, which gateways bill one
 * by one and some handsets show late, out of order or not at all. So every notice's SMS goes through
 * `smsText`, which removes such accents (Portuguese and French stay readable without them; `é`, `è`
 * and `à` are in the alphabet and stay), and the notices' tests assert that each one, rendered
 * with the longest username, fits in `SMS_SEGMENT_SEPTETS`.
 */

/** The default alphabet, one septet each. */
const GSM7 = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** The extension table: two septets each (an escape, then the character). */
const GSM7_EXTENSION = '^{}\\[~]|€\f';

/** The septets of one GSM-7 segment with no user data header. */
export const SMS_SEGMENT_SEPTETS = 160;

const isGsm7 = (ch: string): boolean => GSM7.includes(ch) || GSM7_EXTENSION.includes(ch);

/** The text in the GSM-7 alphabet: a letter outside it loses its accent (`ã` to `a`), anything else becomes `?`. */
export function toGsm7(text: string): string {
  return [...text].map((ch) => {
    if (isGsm7(ch)) return ch;
    const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
    return base !== '' && [...base].every(isGsm7) ? base : '?';
  }).join('');
}

/** The length of a GSM-7 text in septets, what the segment limit counts: an extension character counts two. */
export function gsm7Length(text: string): number {
  return [...text].reduce((n, ch) => n + (GSM7_EXTENSION.includes(ch) ? 2 : 1), 0);
}

/** Whether a GSM-7 text fits in one segment. */
export function fitsOneSegment(text: string): boolean {
  return gsm7Length(text) <= SMS_SEGMENT_SEPTETS;
}

/**
 * The form in which a text message is sent: GSM-7. It does not cut a long text (a cut warning is
 * worse than two segments); each notice is written to fit, and its tests check it does.
 */
export function smsText(text: string): string {
  return toGsm7(text);
}
