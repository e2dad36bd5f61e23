/**
 * A subscription to the real-time channel (`GET /api/v1/ws`): opens the socket, sends the access
 * token in the first message (with a random `connection_id` for this socket), then opens every
 * frame with the session key (AES-256-GCM, the direction, the socket's `connection_id`, the type
 * and the sequence number as additional data), checks the server's numbering (1, 2,
 * 3... without a gap), and hands each event to the handlers once, in order. When the socket drops
 * it reconnects and resumes after the last event it saw; after 4002 (new session key) and 4003
 * (token expired) it refreshes the tokens first.
 */
import { toBase64 } from './base64.js';
import { aesGcmOpen, aesGcmSeal, fromUtf8, isRecord, randomBytes, utf8 } from './crypto.js';
import type { RealtimeEvent, RealtimeHandlers, RealtimeOptions, RealtimeReady, RealtimeResumed, WebSocketConstructor, WebSocketLike } from './realtime-types.js';

export const REALTIME_PATH = '/api/v1/ws';

/** What the subscription needs of the client: the socket's URL, the session, a refresh. */
export interface RealtimeHost {
  url: string;
  credentials(): Promise<{ accessToken: string; key: CryptoKey; fingerprint: string | undefined } | null>;
  refresh(): Promise<unknown>;
}

/**
 * Codes after which the subscription stops: the client flooded (1008), the session ended, it was
 * refused, replaced by a newer socket of its session, refused for too many sockets of the user
 * (4029), or a frame did not open.
 */
const FINAL = new Set([1008, 4001, 4008, 4029, 4400, 4401]);
const REFRESH_FIRST = new Set([4002, 4003]);
const SEEN_KEPT = 1000;

const aad = (direction: 's2c' | 'c2s', connectionId: string, type: string, seq: number) => utf8(`strongroom-ws|${direction}|${connectionId}|${type}|${seq}`);

/** A fresh `connection_id`: 16 random bytes, base64url without padding. */
export function newConnectionId(): string {
  return toBase64(randomBytes(16)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class RealtimeSubscription {
  /** The newest event id seen: pass it as `resumeAfter` to a later subscription. */
  lastEventId: number;
  /** Resolves at the first `ready` (rejects if the first socket is refused). */
  readonly ready: Promise<RealtimeReady>;
  private ws: WebSocketLike | undefined;
  private key: CryptoKey | undefined;
  private connectionId = '';
  private received = 0;
  private sent = 0;
  private stopped = false;
  private attempt = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly seen = new Set<number>();
  private readonly Ws: WebSocketConstructor;
  private settleReady!: { resolve(r: RealtimeReady): void; reject(e: unknown): void; done: boolean };

  constructor(private readonly host: RealtimeHost, private readonly handlers: RealtimeHandlers, private readonly options: RealtimeOptions = {}) {
    const Ws = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Ws) throw new TypeError('realtime: no WebSocket class; on Node 20 pass options.WebSocket (the `ws` package)');
    this.Ws = Ws;
    this.lastEventId = options.resumeAfter ?? 0;
    this.ready = new Promise<RealtimeReady>((resolve, reject) => {
      this.settleReady = { resolve, reject, done: false };
    });
    this.ready.catch(() => undefined); // a caller that never awaits it must not see an unhandled rejection
    void this.connect();
  }

  /** Closes the socket for good. */
  close(): void {
    this.stopped = true;
    this.ws?.close(1000, 'closed by the client');
  }

  private async connect(): Promise<void> {
    let creds: Awaited<ReturnType<RealtimeHost['credentials']>>;
    try {
      creds = await this.host.credentials();
    } catch (err) {
      creds = null;
      this.handlers.onError?.(err);
    }
    if (this.stopped) return;
    if (!creds) {
      this.stopped = true;
      return this.fail(new Error('realtime: sign in first (no session, or no session key: the client must encrypt)'));
    }
    this.key = creds.key;
    const connectionId = newConnectionId();
    this.connectionId = connectionId;
    this.received = 0;
    this.sent = 0;
    this.chain = Promise.resolve();
    const ws = new this.Ws(this.host.url);
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', access_token: creds.accessToken, connection_id: connectionId, ...(creds.fingerprint ? { device_fingerprint: creds.fingerprint } : {}) }));
    ws.onmessage = (ev) => {
      this.chain = this.chain.then(() => this.onFrame(ws, ev.data)).catch((err: unknown) => {
        this.handlers.onError?.(err);
        ws.close(4400, 'bad frame');
      });
    };
    ws.onerror = (ev) => this.handlers.onError?.(ev);
    ws.onclose = (ev) => void this.chain.then(() => this.onClose(ws, ev.code, ev.reason));
  }

  private async onFrame(ws: WebSocketLike, data: unknown): Promise<void> {
    if (ws !== this.ws || typeof data !== 'string') throw new Error('realtime: a frame that is not text');
    const f: unknown = JSON.parse(data);
    if (!isRecord(f) || typeof f.seq !== 'number' || typeof f.type !== 'string' || typeof f.nonce !== 'string' || typeof f.ciphertext !== 'string' || typeof f.tag !== 'string') {
      throw new Error('realtime: a frame not in the documented envelope');
    }
    if (f.seq !== this.received + 1) throw new Error(`realtime: frame ${f.seq} after ${this.received} (replayed, lost or reordered)`);
    const body: unknown = JSON.parse(fromUtf8(await aesGcmOpen(this.key!, f.nonce, f.ciphertext, f.tag, aad('s2c', this.connectionId, f.type, f.seq))));
    this.received = f.seq;
    if (!isRecord(body)) throw new Error('realtime: a frame whose body is not an object');
    if (f.type === 'ready') await this.onReady(body as unknown as RealtimeReady);
    else if (f.type === 'event') this.onEvent(body as unknown as RealtimeEvent);
    else if (f.type === 'resumed') this.handlers.onResumed?.(body as unknown as RealtimeResumed);
  }

  private async onReady(ready: RealtimeReady): Promise<void> {
    this.attempt = 0;
    if (this.lastEventId > 0 && this.lastEventId < ready.latest_event_id) await this.send('resume', { after: this.lastEventId });
    else if (this.lastEventId === 0) this.lastEventId = ready.latest_event_id;
    this.handlers.onReady?.(ready);
    if (!this.settleReady.done) {
      this.settleReady.done = true;
      this.settleReady.resolve(ready);
    }
  }

  private onEvent(e: RealtimeEvent): void {
    if (this.seen.has(e.id)) return;
    this.seen.add(e.id);
    if (this.seen.size > SEEN_KEPT) this.seen.delete(this.seen.values().next().value!);
    if (e.id > this.lastEventId) this.lastEventId = e.id;
    this.handlers.onEvent?.(e);
    const typed = this.handlers.on?.[e.type] as ((data: unknown, event: RealtimeEvent) => void) | undefined;
    typed?.(e.data, e);
  }

  /** Sends a sealed client frame (`ping`, `ack`, `resume`). */
  async send(type: 'ping' | 'ack' | 'resume', body: Record<string, unknown>): Promise<void> {
    const ws = this.ws;
    if (!ws || !this.key) return;
    this.sent += 1;
    const seq = this.sent;
    const s = await aesGcmSeal(this.key, utf8(JSON.stringify(body)), aad('c2s', this.connectionId, type, seq));
    ws.send(JSON.stringify({ seq, type, nonce: s.iv, ciphertext: s.ciphertext, tag: s.tag }));
  }

  private async onClose(ws: WebSocketLike, code: number, reason: string): Promise<void> {
    if (ws !== this.ws) return;
    const willReconnect = !this.stopped && (this.options.reconnect ?? true) && !FINAL.has(code) && code !== 1000;
    this.handlers.onClose?.({ code, reason, willReconnect });
    if (!willReconnect) {
      this.stopped = true;
      if (!this.settleReady.done) this.fail(Object.assign(new Error(`realtime: closed ${code} ${reason}`), { code, reason }));
      return;
    }
    if (REFRESH_FIRST.has(code)) {
      try {
        await this.host.refresh();
      } catch (err) {
        this.stopped = true;
        return this.fail(err);
      }
      return this.connect();
    }
    const delay = Math.min(1000 * 2 ** this.attempt, this.options.maxBackoffMs ?? 30_000) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    setTimeout(() => void this.connect(), delay);
  }

  private fail(err: unknown): void {
    this.handlers.onError?.(err);
    if (!this.settleReady.done) {
      this.settleReady.done = true;
      this.settleReady.reject(err);
    }
  }
}
