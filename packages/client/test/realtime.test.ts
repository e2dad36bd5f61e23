/**
 * The SDK's real-time subscription against the server's own frame crypto (src/realtime/envelope.ts),
 * over a scripted socket: it authenticates first, opens every frame, hands each event once, and
 * refuses a frame out of sequence or sealed for another type; its own frames open on the server.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openFrame, parseFrame, sealFrame } from '../../../src/realtime/envelope.js';
import { aesKey } from '../src/crypto.js';
import { RealtimeSubscription } from '../src/realtime.js';
import type { RealtimeEvent, WebSocketConstructor, WebSocketLike } from '../src/realtime-types.js';

class ScriptedSocket implements WebSocketLike {
  static last: ScriptedSocket | undefined;
  readyState = 1;
  readonly sent: string[] = [];
  closedWith: { code?: number; reason?: string } | undefined;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(readonly url: string) {
    ScriptedSocket.last = this;
    queueMicrotask(() => this.onopen?.({}));
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
    this.onclose?.({ code: code ?? 1005, reason: reason ?? '' });
  }
  deliver(frame: unknown): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
/** Every frame delivered so far has been handled (decryption is asynchronous: a tick is not enough). */
const drained = (sub: RealtimeSubscription) => (sub as unknown as { chain: Promise<void> }).chain;

async function subscribe() {
  const raw = randomBytes(32);
  const key = await aesKey(new Uint8Array(raw));
  const events: RealtimeEvent[] = [];
  const errors: unknown[] = [];
  const sub = new RealtimeSubscription({ url: 'ws://test/api/v1/ws', credentials: async () => ({ accessToken: 'tok', key, fingerprint: 'fp' }), refresh: async () => undefined },
    { onEvent: (e) => events.push(e), onError: (e) => errors.push(e) },
    { WebSocket: ScriptedSocket as unknown as WebSocketConstructor, reconnect: false });
  await tick();
  const ws = ScriptedSocket.last!;
  const cid = (JSON.parse(ws.sent[0]!) as { connection_id: string }).connection_id;
  return { raw, cid, sub, ws, events, errors };
}

const ready = { session_id: 's', user_id: 'u', expires_at: '2026-01-15T10:00:00.000Z', latest_event_id: 0, heartbeat_seconds: 30, resume_minutes: 10 };
const event = (id: number) => ({ id, type: 'security.alert', data: { rule: 'r' }, created_at: '2026-01-15T09:00:00.000Z' });

describe('real-time subscription', () => {
  it('sends the token first, opens the server frames in order, and hands each event once', async () => {
    const { raw, cid, sub, ws, events, errors } = await subscribe();
    expect(JSON.parse(ws.sent[0]!)).toEqual({ type: 'auth', access_token: 'tok', connection_id: cid, device_fingerprint: 'fp' });
    expect(cid).toMatch(/^[A-Za-z0-9_-]{22}$/); // 16 random bytes, base64url
    ws.deliver(sealFrame(raw, 's2c', cid, 1, 'ready', ready));
    await sub.ready;
    ws.deliver(sealFrame(raw, 's2c', cid, 2, 'event', event(5)));
    ws.deliver(sealFrame(raw, 's2c', cid, 3, 'event', event(5))); // a duplicate (a resume's): dropped
    ws.deliver(sealFrame(raw, 's2c', cid, 4, 'event', event(6)));
    await drained(sub);
    expect(errors).toEqual([]);
    expect(events.map((e) => e.id)).toEqual([5, 6]);
    expect(sub.lastEventId).toBe(6);
    await sub.send('resume', { after: 4 });
    const frame = parseFrame(ws.sent[1]!);
    expect(frame).toMatchObject({ seq: 1, type: 'resume' });
    expect(openFrame(raw, 'c2s', cid, frame, 0)).toEqual({ after: 4 }); // the server opens it
  });

  it('refuses a gap in the numbering, a frame sealed for another type or for another socket (closes 4400)', async () => {
    const otherSocket = 'AAAAAAAAAAAAAAAAAAAAAA';
    for (const bad of [(raw: Buffer, cid: string) => sealFrame(raw, 's2c', cid, 3, 'event', event(1)), (raw: Buffer, cid: string) => ({ ...sealFrame(raw, 's2c', cid, 2, 'pong', {}), type: 'event' }),
      (raw: Buffer) => sealFrame(raw, 's2c', otherSocket, 2, 'event', event(1))]) { // frames replayed across sockets
      const { raw, cid, sub, ws, events, errors } = await subscribe();
      ws.deliver(sealFrame(raw, 's2c', cid, 1, 'ready', ready));
      await sub.ready;
      ws.deliver(bad(raw, cid));
      await drained(sub);
      expect(ws.closedWith?.code).toBe(4400);
      expect(events).toEqual([]);
      expect(errors.length).toBeGreaterThan(0);
    }
  });
});
