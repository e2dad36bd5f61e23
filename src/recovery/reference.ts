/**
 * A workflow's branch reference: what the person reads aloud to an operator at a branch desk.
 * Eight characters of an alphabet without look-alikes (no 0/O, 1/I/L), random (40 bits), stored
 * with the workflow. It is not a secret and moves nothing on its own: an operator who has checked
 * an identity document decides, and the workflow still needs its other proofs. Read back
 * case-insensitively, with spaces and dashes ignored (`K7QM-4XPD`).
 */
import { randomInt } from 'node:crypto';

export const REFERENCE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const REFERENCE_LENGTH = 8;

export function newReference(): string {
  return Array.from({ length: REFERENCE_LENGTH }, () => REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)]).join('');
}

/** The reference as stored, from what an operator typed; undefined when it cannot be one (then it names no workflow). */
export function normalizeReference(typed: string): string | undefined {
  const r = typed.replace(/[\s-]/g, '').toUpperCase();
  return r.length === REFERENCE_LENGTH && [...r].every((c) => REFERENCE_ALPHABET.includes(c)) ? r : undefined;
}
