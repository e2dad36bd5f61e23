/**
 * A test client of the real-time channel over a real socket (the `ws` package), with the
 * server's own frame crypto (src/realtime/envelope.ts): it sends the auth message (with a random
 * `connection_id`), opens every
 * server frame (checking the numbering), and seals its own frames; tests can also send anything raw.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import type { App } from '../../src/platform/http/app.js';
import { openFrame, parseFrame, sealFrame, type Frame } from '../../src/realtime/envelope.js';

export interface Opened {
  seq: number;
  type: string;
  body: Record<string, unknown>;
}

export interface Closed {
  code: number;
  reason: string;
}

/** The app listening on loopback (port 0); its ws:// URL of the channel. */
export async function listenForSockets(app: App): Promise<string> {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
  return `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/ws`;
}

export class TestSocket {
  readonly ws: WebSocket;
  readonly closed: Promise<Closed>;
  /** Raw text frames received, in order, not yet taken. */
  private readonly inbox: string[] = [];
  private waiter: (() => void) | undefined;
  private received = 0;
  sent = 0;
  key: Buffer | undefined;
  /** This socket's `connection_id` (16 random bytes, base64url), bound into every frame's additional data. */
  connectionId = randomBytes(16).toString('base64url');

  private constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data) => {
      this.inbox.push(String(data));
      this.waiter?.();
    });
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      this.waiter?.();
    }));
    this.ws.on('error', () => undefined); // a refused socket shows as its close
  }

  static async open(url: string): Promise<TestSocket> {
    const s = new TestSocket(url);
    await new Promise<void>((resolve, reject) => {
      s.ws.once('open', () => resolve());
      s.ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    return s;
  }

  /** Opens, authenticates, and reads the `ready` frame under `key`. */
  static async ready(url: string, token: string, key: Buffer, fingerprint?: string): Promise<{ socket: TestSocket; ready: Record<string, unknown> }> {
    const socket = await TestSocket.open(url);
    socket.key = key;
    socket.auth(token, fingerprint);
    const first = await socket.next();
    if (first.type !== 'ready') throw new Error(`expected ready, got ${first.type}`);
    return { socket, ready: first.body };
  }

  auth(token: string, fingerprint?: string): void {
    this.ws.send(JSON.stringify({
      type: 'auth', access_token: token, connection_id: this.connectionId, ...(fingerprint === undefined ? {} : { device_fingerprint: fingerprint }),
    }));
  }

  /** The next raw frame (or null once the socket closed without one). */
  async nextRaw(): Promise<string | null> {
    for (;;) {
      const raw = this.inbox.shift();
      if (raw !== undefined) return raw;
      if (this.ws.readyState === WebSocket.CLOSED) return null;
      await new Promise<void>((resolve) => { this.waiter = resolve; });
    }
  }

  /** The next server frame, opened with the session key; its number must be the next one. */
  async next(): Promise<Opened> {
    const raw = await this.nextRaw();
    if (raw === null) throw new Error(`socket closed: ${JSON.stringify(await this.closed)}`);
    const frame = parseFrame(raw);
    if (frame.seq !== this.received + 1) throw new Error(`frame ${frame.seq} after ${this.received}`);
    const body = openFrame(this.key!, 's2c', this.connectionId, frame, this.received);
    this.received = frame.seq;
    return { seq: frame.seq, type: frame.type, body };
  }

  /** The next `event` frame's body (skipping nothing: anything else fails). */
  async event(): Promise<{ id: number; type: string; data: Record<string, unknown>; created_at: string }> {
    const f = await this.next();
    if (f.type !== 'event') throw new Error(`expected an event, got ${f.type}`);
    return f.body as never;
  }

  /** Seals and sends a client frame with the next sequence number (or `seq`). */
  send(type: string, body: unknown, seq = this.sent + 1): Frame {
    this.sent = Math.max(this.sent, seq);
    const frame = sealFrame(this.key!, 'c2s', this.connectionId, seq, type, body);
    this.ws.send(JSON.stringify(frame));
    return frame;
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  close(): void {
    this.ws.close();
  }
}
