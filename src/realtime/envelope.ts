/**
 * The real-time channel's frames (docs/realtime.md): after the first message (the access token,
 * in clear), every frame either way is `{"seq", "type", "nonce", "ciphertext", "tag"}`, AES-256-GCM
 * under the session's key with a fresh 12-byte nonce and a 16-byte tag, the additional data
 * binding the direction, the socket (the `connection_id` its client chose), the type and the
 * sequence number (`strongroom-ws|s2c|<connection_id>|<type>|<seq>`). A frame moved to the other
 * direction, to another socket of the same session, given another type or another number does not open.
 *
 * Every failure is one `FrameError` without detail: the socket is closed with 4400, never told why.
 */
import secureJson from 'secure-json-parse';
import { aesGcmOpen, aesGcmSeal, TransportDecryptError } from '../transport/crypto.js';

export type Direction = 's2c' | 'c2s';

/** A frame on the wire. */
export interface Frame {
  seq: number;
  type: string;
  nonce: string;
  ciphertext: string;
  tag: string;
}

/** The largest frame a client may send (a `resume`, a `ping`, an `ack` are a few hundred bytes). */
export const MAX_CLIENT_FRAME_BYTES = 16 * 1024;

const TYPE = /^[a-z][a-z0-9_.]{0,63}$/;

export class FrameError extends Error {
  constructor() {
    super('bad frame');
    this.name = 'FrameError';
  }
}

/** A socket's `connection_id` (sent in its `auth` message): at least 16 random bytes, base64url without padding. */
export const CONNECTION_ID = /^[A-Za-z0-9_-]{22,128}$/;

/** The additional data of a frame: direction, socket, type and sequence number. */
export function frameAad(direction: Direction, connectionId: string, type: string, seq: number): Buffer {
  return Buffer.from(`strongroom-ws|${direction}|${connectionId}|${type}|${seq}`, 'utf8');
}

/** Seals `body` (JSON) as frame `seq` of `type` on the socket `connectionId`. */
export function sealFrame(key: Buffer, direction: Direction, connectionId: string, seq: number, type: string, body: unknown): Frame {
  const s = aesGcmSeal(key, JSON.stringify(body), frameAad(direction, connectionId, type, seq));
  return { seq, type, nonce: s.iv, ciphertext: s.ciphertext, tag: s.tag };
}

function parseObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new FrameError();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FrameError();
  return value as Record<string, unknown>;
}

/** The outer JSON of a frame, checked for shape (not yet opened). */
export function parseFrame(raw: string): Frame {
  if (raw.length > MAX_CLIENT_FRAME_BYTES) throw new FrameError();
  const f = parseObject(raw);
  const keys = Object.keys(f);
  if (keys.length !== 5 || !['seq', 'type', 'nonce', 'ciphertext', 'tag'].every((k) => keys.includes(k))) throw new FrameError();
  if (!Number.isSafeInteger(f.seq) || (f.seq as number) < 1) throw new FrameError();
  if (typeof f.type !== 'string' || !TYPE.test(f.type)) throw new FrameError();
  return f as unknown as Frame;
}

/**
 * Opens a frame whose sequence number must be above `lastSeq` (a replayed or reordered frame
 * fails); its body, a JSON object.
 */
export function openFrame(key: Buffer, direction: Direction, connectionId: string, frame: Frame, lastSeq: number): Record<string, unknown> {
  if (frame.seq <= lastSeq) throw new FrameError();
  let plain: Buffer;
  try {
    plain = aesGcmOpen(key, frame.nonce, frame.ciphertext, frame.tag, frameAad(direction, connectionId, frame.type, frame.seq));
  } catch (err) {
    if (err instanceof TransportDecryptError) throw new FrameError();
    throw err;
  }
  return parseObject(plain.toString('utf8'));
}
