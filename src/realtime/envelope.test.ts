import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FrameError, frameAad, openFrame, parseFrame, sealFrame, type Frame } from './envelope.js';

const key = randomBytes(32);
const cid = randomBytes(16).toString('base64url');
const roundTrip = (f: Frame): Frame => parseFrame(JSON.stringify(f));
const flip = (b64: string): string => {
  const b = Buffer.from(b64, 'base64');
  b[0] = b[0]! ^ 1;
  return b.toString('base64');
};

describe('real-time frames', () => {
  it('seal and open with a fresh 12-byte nonce and a 16-byte tag', () => {
    const a = sealFrame(key, 'c2s', cid, 1, 'resume', { after: 7 });
    const b = sealFrame(key, 'c2s', cid, 1, 'resume', { after: 7 });
    expect(Buffer.from(a.nonce, 'base64')).toHaveLength(12);
    expect(Buffer.from(a.tag, 'base64')).toHaveLength(16);
    expect(a.nonce).not.toBe(b.nonce);
    expect(openFrame(key, 'c2s', cid, roundTrip(a), 0)).toEqual({ after: 7 });
  });

  it('binds the type, the sequence number and the direction as additional data', () => {
    expect(frameAad('s2c', 'AAAAAAAAAAAAAAAAAAAAAA', 'event', 3).toString()).toBe('strongroom-ws|s2c|AAAAAAAAAAAAAAAAAAAAAA|event|3');
    const f = sealFrame(key, 'c2s', cid, 2, 'ping', {});
    expect(() => openFrame(key, 'c2s', cid, { ...f, type: 'ack' }, 0)).toThrow(FrameError);
    expect(() => openFrame(key, 'c2s', cid, { ...f, seq: 3 }, 0)).toThrow(FrameError);
    expect(() => openFrame(key, 's2c', cid, f, 0)).toThrow(FrameError); // a server frame reflected back, or the reverse
    expect(openFrame(key, 'c2s', cid, f, 0)).toEqual({});
  });

  it('frames replayed across sockets: a frame of one socket does not open on another socket of the same session', () => {
    const other = randomBytes(16).toString('base64url');
    const c2s = sealFrame(key, 'c2s', cid, 1, 'resume', { after: 0 });
    const s2c = sealFrame(key, 's2c', cid, 1, 'event', { id: 1 });
    expect(() => openFrame(key, 'c2s', other, c2s, 0)).toThrow(FrameError);
    expect(() => openFrame(key, 's2c', other, s2c, 0)).toThrow(FrameError);
    expect(openFrame(key, 'c2s', cid, c2s, 0)).toEqual({ after: 0 });
  });

  it('refuses a tampered ciphertext, tag or nonce, and another key', () => {
    const f = sealFrame(key, 's2c', cid, 1, 'event', { id: 1, type: 'security.alert', data: {} });
    for (const bad of [{ ...f, ciphertext: flip(f.ciphertext) }, { ...f, tag: flip(f.tag) }, { ...f, nonce: flip(f.nonce) }]) {
      expect(() => openFrame(key, 's2c', cid, bad, 0)).toThrow(FrameError);
    }
    expect(() => openFrame(randomBytes(32), 's2c', cid, f, 0)).toThrow(FrameError);
  });

  it('refuses a replayed or reordered sequence number', () => {
    const f = sealFrame(key, 'c2s', cid, 5, 'ping', {});
    expect(openFrame(key, 'c2s', cid, f, 4)).toEqual({});
    expect(() => openFrame(key, 'c2s', cid, f, 5)).toThrow(FrameError);
    expect(() => openFrame(key, 'c2s', cid, f, 9)).toThrow(FrameError);
  });

  it('refuses malformed frames before any decryption', () => {
    const f = sealFrame(key, 'c2s', cid, 1, 'ping', {});
    for (const raw of ['', 'null', '[]', '{"seq":1}', JSON.stringify({ ...f, seq: 0 }), JSON.stringify({ ...f, seq: 1.5 }), JSON.stringify({ ...f, type: 'Ping!' }),
      JSON.stringify({ ...f, extra: 1 }), '{"__proto__":{"x":1},"seq":1,"type":"ping","nonce":"","ciphertext":"","tag":""}', 'x'.repeat(20_000)]) {
      expect(() => parseFrame(raw), raw.slice(0, 40)).toThrow(FrameError);
    }
  });

  it('refuses a body that is not a JSON object', () => {
    const f = sealFrame(key, 'c2s', cid, 1, 'ping', [1, 2]);
    expect(() => openFrame(key, 'c2s', cid, f, 0)).toThrow(FrameError);
  });
});
