/**
 * Pooled directory connections (docs/decisions.md "LDAP connection pool"): at most `size` open
 * connections to the directory, each used by one operation at a time and kept open between
 * sign-ins, so a sign-in costs its search and its bind rather than two connections (TCP, TLS or
 * StartTLS, a service bind, an unbind, each time).
 *
 * The security boundary is who the directory takes a connection for. A connection records it
 * (`DirectoryConnection.identity`): `service` only once the service account's bind succeeded on
 * that very socket, and `unknown` from the moment any other bind is sent (a user's, whether it
 * succeeds or not, which leaves the connection the user's or anonymous). A search is refused on
 * a connection that is not `service`: one a user signed in on is bound as the service account
 * again before it searches for anyone, never used in that user's identity.
 *
 * ldapts opens a new connection by itself when an operation finds the old one closed (unbound,
 * and without StartTLS): an operation on a connection that has closed is refused instead, as
 * `connection-lost`, and the connection is dropped. A connection the directory closed while it
 * sat idle (a restart, an idle limit) is seen closed and replaced when it is next taken; one
 * that fails on its first use after idling gets the caller one more try on a new connection
 * (src/ldap/directory.ts).
 */
import net from 'node:net';
import tls from 'node:tls';
import { Client, type ClientOptions, type SearchOptions, type SearchResult } from 'ldapts';

/** Idle connections are closed after this long unused, before a firewall or the directory drops them silently. */
export const IDLE_CLOSE_MS = 60_000;

export type Identity = 'service' | 'unknown';

/** The service account a pool binds as. */
export interface ServiceAccount {
  bindDn: string;
  bindPassword: string;
}

export class ConnectionClosedError extends Error {
  override readonly name = 'ConnectionClosedError';
  constructor() {
    super('the connection closed between operations');
  }
}

/**
 * The sockets a client opened, and whether one has ended. ldapts listens for the end of the
 * socket it opened first, so after StartTLS (whose TLS socket replaces it) it neither sees the
 * directory close the connection nor fails the operations waiting on it: they would wait for
 * their time limit. This sees it on every socket.
 */
export class Sockets {
  private ended = false;
  /** What each operation under way does when a socket ends. */
  private readonly onEnd = new Set<(err: Error) => void>();

  get closed(): boolean {
    return this.ended;
  }

  watch<S extends net.Socket>(socket: S): S {
    const ended = (): void => {
      this.ended = true;
      for (const fail of this.onEnd) fail(new ConnectionClosedError());
      this.onEnd.clear();
    };
    socket.once('end', ended).once('close', ended);
    return socket;
  }

  /** `operation`, or a ConnectionClosedError as soon as a socket ends under it. */
  until<T>(operation: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.ended) reject(new ConnectionClosedError());
      this.onEnd.add(reject);
      operation.then(resolve, reject).finally(() => this.onEnd.delete(reject));
    });
  }
}

/** An ldapts client whose sockets are watched (above). */
export function watchedClient(options: ClientOptions): { client: Client; sockets: Sockets } {
  const sockets = new Sockets();
  const connect = net.connect as (...args: unknown[]) => net.Socket;
  const secure = tls.connect as (...args: unknown[]) => tls.TLSSocket;
  const client = new Client({
    ...options,
    createConnection: ((...args: unknown[]) => sockets.watch(connect(...args))) as typeof net.connect,
    createSecureConnection: ((...args: unknown[]) => sockets.watch(secure(...args))) as typeof tls.connect,
  });
  return { client, sockets };
}

/** One connection, leased to one caller at a time. */
export class DirectoryConnection {
  /** Who the directory takes this connection for (above). */
  private who: Identity = 'unknown';
  /** Whether a socket was ever opened (ldapts connects plain and ldaps:// connections on the first operation). */
  private opened: boolean;
  /** How many leases it served before the current one: a failure on a reused connection may be the directory having dropped it. */
  uses = 0;
  state: 'busy' | 'idle' | 'gone' = 'busy';
  idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly client: Client, private readonly sockets: Sockets, private readonly service: ServiceAccount) {
    this.opened = client.isConnected;
  }

  get identity(): Identity {
    return this.who;
  }

  /** Open, or never opened yet (the first operation opens it). */
  get usable(): boolean {
    return !this.opened || (this.client.isConnected && !this.sockets.closed);
  }

  /** Binds as the service account unless it already is: `service` only when the bind succeeds. */
  async asService(): Promise<void> {
    if (this.who === 'service') return;
    await this.bind(this.service.bindDn, this.service.bindPassword);
    this.who = 'service';
  }

  /** Binds as someone else: `unknown` from the moment it is sent, whatever the answer. */
  bindUser(dn: string, password: string): Promise<void> {
    return this.bind(dn, password);
  }

  /** A search in the service account's identity; refused on a connection that is not in it. */
  search(baseDn: string, options: SearchOptions): Promise<SearchResult> {
    if (this.who !== 'service') throw new Error('a directory search on a connection not bound as the service account');
    return this.untilClosed(this.open().search(baseDn, options));
  }

  /** Closes the socket (an unbind when it is still open). */
  close(): Promise<void> {
    this.state = 'gone';
    this.who = 'unknown';
    clearTimeout(this.idleTimer);
    return this.client.unbind().catch(() => undefined);
  }

  private bind(dn: string, password: string): Promise<void> {
    const client = this.open();
    this.who = 'unknown';
    // ldapts sends the request synchronously within this call, on the socket checked just above
    // (or, on a connection's first operation, connects first: then its own error says why it failed).
    const sent = client.bind(dn, password);
    if (!this.opened) {
      this.opened = true;
      return sent;
    }
    return this.untilClosed(sent);
  }

  /** `operation`, or a ConnectionClosedError as soon as the connection ends under it. */
  private untilClosed<T>(operation: Promise<T>): Promise<T> {
    return this.sockets.until(operation);
  }

  /** The client, when its socket is the one this connection opened (checked right before each call, where no close event can slip in). */
  private open(): Client {
    if (!this.usable) {
      this.who = 'unknown';
      throw new ConnectionClosedError();
    }
    return this.client;
  }
}

interface Waiter {
  /** A connection handed over by `release`, or null: capacity is free, open a new one. */
  wake(conn: DirectoryConnection | null): void;
  prefer: Identity;
}

export interface PoolOptions {
  size: number;
  service: ServiceAccount;
  /**
   * A new client, connected and upgraded with StartTLS when the settings say so (or left to
   * connect on its first operation). When `signal` aborts (the caller's time ran out), it gives
   * up and closes what it opened. `watchedClient` makes the client.
   */
  open(signal: AbortSignal): Promise<{ client: Client; sockets: Sockets }>;
  idleCloseMs?: number;
}

/**
 * At most `size` connections, busy or idle; callers beyond that wait for one (their sign-in's
 * time limit still runs). After `close` (shutdown, or settings replaced) nothing is kept: idle
 * connections close at once, busy ones when released, and a late caller still gets a
 * connection of its own, closed after use, so a sign-in that began on the old settings ends on them.
 */
export class DirectoryPool {
  private readonly idle: DirectoryConnection[] = [];
  private readonly waiters: Waiter[] = [];
  /** Connections counted against `size`: busy, idle, or being opened. */
  private count = 0;
  private closed = false;

  constructor(private readonly opts: PoolOptions) {
    if (!Number.isInteger(opts.size) || opts.size < 1) throw new TypeError('LDAP pool size must be a positive integer');
  }

  /**
   * A connection for one operation: an idle one in identity `prefer` if there is one, else any
   * idle one, else a new one. `fresh`: not one that sat idle (a retry after a dropped connection).
   */
  async acquire(prefer: Identity, signal: AbortSignal, fresh = false): Promise<DirectoryConnection> {
    signal.throwIfAborted();
    const idle = fresh ? this.evictOneIdle() : this.takeIdle(prefer);
    if (idle) return idle;
    if (this.closed || this.count < this.opts.size) return this.create(signal);
    const handed = await this.wait(prefer, signal);
    return handed ?? this.create(signal);
  }

  /** Back to the pool after a clean operation (or closed, when the pool is closed or the socket is). */
  release(conn: DirectoryConnection): void {
    if (conn.state !== 'busy') return;
    conn.uses++;
    if (this.closed || !conn.usable) {
      this.discard(conn);
      return;
    }
    if (this.waiters.length > 0) {
      // To the first caller that wants it in the identity it has (a search, or a user's bind), else the first.
      const i = Math.max(0, this.waiters.findIndex((w) => w.prefer === conn.identity));
      this.waiters.splice(i, 1)[0]!.wake(conn);
      return;
    }
    conn.state = 'idle';
    conn.idleTimer = setTimeout(() => this.evict(conn), this.opts.idleCloseMs ?? IDLE_CLOSE_MS).unref();
    this.idle.push(conn);
  }

  /** Closes a connection whose state is not known (an operation failed or was cut short on it). */
  discard(conn: DirectoryConnection): void {
    if (conn.state === 'gone') return;
    if (conn.state === 'idle') this.idle.splice(this.idle.indexOf(conn), 1);
    void conn.close();
    this.count--;
    this.waiters.shift()?.wake(null);
  }

  /** Closes the idle connections now and every other one when it is released. */
  async close(): Promise<void> {
    this.closed = true;
    const idle = this.idle.splice(0);
    this.count -= idle.length;
    await Promise.all(idle.map((c) => c.close()));
    for (const w of this.waiters.splice(0)) w.wake(null);
  }

  /** Open connections (busy, idle, or being opened). */
  get connections(): number {
    return this.count;
  }

  private takeIdle(prefer: Identity): DirectoryConnection | undefined {
    // Closed by the directory while idle: dropped here, before anyone uses them.
    for (const c of this.idle.filter((x) => !x.usable)) this.evict(c);
    // The most recently used first: it is the likeliest to be alive, and the rest can idle out.
    let i = this.idle.length - 1;
    while (i >= 0 && this.idle[i]!.identity !== prefer) i--;
    if (i < 0) i = this.idle.length - 1;
    if (i < 0) return undefined;
    const [conn] = this.idle.splice(i, 1) as [DirectoryConnection];
    clearTimeout(conn.idleTimer);
    conn.state = 'busy';
    return conn;
  }

  /** Makes room for a new connection by closing the oldest idle one, when the pool is full. */
  private evictOneIdle(): undefined {
    if (this.count >= this.opts.size && this.idle.length > 0) this.evict(this.idle[0]!);
    return undefined;
  }

  private evict(conn: DirectoryConnection): void {
    if (conn.state === 'idle') this.discard(conn);
  }

  private async create(signal: AbortSignal): Promise<DirectoryConnection> {
    this.count++;
    try {
      const { client, sockets } = await this.opts.open(signal);
      return new DirectoryConnection(client, sockets, this.opts.service);
    } catch (err) {
      this.count--;
      this.waiters.shift()?.wake(null);
      throw err;
    }
  }

  private wait(prefer: Identity, signal: AbortSignal): Promise<DirectoryConnection | null> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        prefer,
        wake: (conn) => {
          signal.removeEventListener('abort', onAbort);
          resolve(conn);
        },
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }
}
