/**
 * The directory side of LDAP sign-in (SPEC "LDAP login" steps 2 to 5): service bind, search for
 * the user with the escaped username, read mail, name and groups, bind as the found DN.
 *
 * Two steps, each on a pooled connection (src/ldap/pool.ts) held for that step only: `find`
 * (the search, on a connection bound as the service account) and `verify` (a bind as the DN
 * found). The sign-in reserves its attempt between them, on the directory account the search
 * named, so every spelling the directory resolves to one entry counts against that one account
 * (src/ldap/strategy.ts).
 *
 * Outcomes: `{kind:'ok'}`; `{kind:'invalid'}` for an unknown, ambiguous or wrong-password user
 * alike, so the caller cannot tell them apart; `DirectoryUnavailableError` when the directory
 * cannot be used at all (unreachable, slow, TLS, bad service credentials), which is an operator's
 * problem and must not count as a failed attempt against the user.
 */
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { InvalidCredentialsError, ResultCodeError, type Client } from 'ldapts';
import { LDAP_POOL_SIZE } from '../platform/config-ldap.js';
import { inSpan } from '../platform/observability/tracing.js';
import { userFilter } from './filter.js';
import { ConnectionClosedError, DirectoryPool, watchedClient, type DirectoryConnection, type Identity, type Sockets } from './pool.js';
import type { LdapSettings } from './settings.js';

/** The directory's part of the settings (src/ldap/settings.ts, fields documented there), with the CA and the time limit. */
export type LdapDirectoryConfig = Omit<LdapSettings, 'groupRoles' | 'groupsBaseDn' | 'caCert' | 'startTls'> & {
  /** Upgrade an ldap:// connection with StartTLS before the first bind. Not with ldaps://. */
  startTls?: boolean;
  /** PEM CA certificate(s) to trust instead of the system store. Verification is always on. */
  ca?: Buffer | string;
  /**
   * Limit for the TCP/TLS connect, for each operation (each bind, search, StartTLS), and for
   * all the directory work of one sign-in together (its `DirectoryBudget`), waiting for a
   * pooled connection included.
   */
  timeoutMs: number;
  /** Connections kept open to the directory at most (LDAP_POOL_SIZE); default `LDAP_POOL_SIZE.default`. */
  poolSize?: number;
};

/**
 * What is left of one sign-in's `timeoutMs` for the directory's work: the search's connection
 * and the bind's draw on one budget, so a directory that answers every operation just inside
 * the limit still ends the sign-in within it. Time spent between them (reserving the attempt,
 * waiting for a slot) is not the directory's and is not drawn.
 */
export class DirectoryBudget {
  constructor(public leftMs: number) {}
}

/** What the search found of a user. */
export interface DirectoryEntry {
  dn: string;
  mail?: string;
  name?: string;
  groups: string[];
}

export type LdapAuthResult = ({ kind: 'ok' } & DirectoryEntry) | { kind: 'invalid' };

export type DirectoryUnavailableReason =
  | 'unreachable' // connection refused, no route, unknown host
  | 'timeout' // connect or an operation exceeded timeoutMs (e.g. a hung server)
  | 'tls' // handshake or certificate verification failed, StartTLS refused
  | 'service-credentials' // the service account's bind was rejected: configuration problem
  | 'connection-lost' // the server closed or reset the connection mid-operation
  | 'directory-error'; // any other LDAP result (bad base DN, unwilling to perform, ...)

export class DirectoryUnavailableError extends Error {
  readonly code = 'LDAP_UNAVAILABLE';
  constructor(readonly reason: DirectoryUnavailableReason, message: string, options?: { cause?: unknown }) {
    super(`LDAP directory unavailable (${reason}): ${message}`, options);
    this.name = 'DirectoryUnavailableError';
  }
}

const INVALID: LdapAuthResult = Object.freeze({ kind: 'invalid' });

export class LdapDirectory {
  private readonly url: URL;
  /** The directory's address for spans: never a DN, a filter or a value. */
  private readonly server: { 'server.address': string; 'server.port': number };
  private readonly filter: (username: string) => string;
  private readonly attributes: string[];
  private readonly pool: DirectoryPool;

  constructor(private readonly config: LdapDirectoryConfig) {
    this.url = new URL(config.uri);
    this.server = { 'server.address': this.url.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': Number(this.url.port || (this.url.protocol === 'ldaps:' ? 636 : 389)) };
    if (this.url.protocol !== 'ldap:' && this.url.protocol !== 'ldaps:') throw new TypeError(`LDAP uri must be ldap:// or ldaps://, not ${this.url.protocol}`);
    if (config.startTls && this.url.protocol === 'ldaps:') throw new TypeError('StartTLS is for ldap:// URIs; ldaps:// is already TLS');
    if (!(config.timeoutMs > 0)) throw new TypeError('LDAP timeoutMs must be positive');
    this.filter = userFilter(config.userFilter);
    this.attributes = [...new Set([config.attrMail, config.attrName, config.groupMemberAttr].filter((a) => a !== ''))];
    this.pool = new DirectoryPool({ size: config.poolSize ?? LDAP_POOL_SIZE.default, service: config, open: (signal) => this.open(signal) });
  }

  /** The service account's search for `username`: the one entry it names, or null (none, or several). */
  async find(username: string, budget = this.budget()): Promise<DirectoryEntry | null> {
    // An empty username or one with a lone surrogate (no UTF-8 form; it would be sent as U+FFFD)
    // cannot name anyone.
    if (username === '' || /\p{Cs}/u.test(username)) return null;
    const { config } = this;
    const filter = this.filter(username);
    return this.leased(budget, 'service', async (conn) => {
      if (conn.identity !== 'service') await this.step('service-bind', () => conn.asService());
      const { searchEntries } = await this.step('search', () => conn.search(config.baseDn, {
        scope: 'sub',
        filter,
        attributes: this.attributes,
        // Two is enough to know "more than one"; the server stops there (sizeLimitExceeded).
        sizeLimit: 2,
        timeLimit: Math.max(1, Math.ceil(config.timeoutMs / 1000)),
      }));
      const entry = searchEntries.length === 1 ? searchEntries[0] : undefined;
      if (!entry) return null;
      const groups = config.groupMemberAttr === '' ? [] : values(entry, config.groupMemberAttr);
      const [mail] = values(entry, config.attrMail);
      const [name] = values(entry, config.attrName);
      return { dn: entry.dn, ...(mail ? { mail } : {}), ...(name ? { name } : {}), groups };
    });
  }

  /** Binds as `dn` with `password`: true when the directory accepts it. */
  async verify(dn: string, password: string, budget = this.budget()): Promise<boolean> {
    // A simple bind with a DN and an empty password is an "unauthenticated bind" (RFC 4513 5.1.2)
    // that servers such as Active Directory answer with success. Only the empty string is that;
    // a password of spaces is a password and goes to the directory.
    if (password === '') return false;
    return this.leased(budget, 'unknown', async (conn) => {
      try {
        await this.traced('user-bind', () => conn.bindUser(dn, password));
        return true;
      } catch (err) {
        // 49 covers wrong password, and locked or expired accounts on most servers. Anything else
        // (confidentiality required, unwilling to perform, ...) is the directory's, not the user's.
        if (err instanceof InvalidCredentialsError) return false;
        throw unavailable('user-bind', err);
      }
    });
  }

  /** find, then verify: the entry when the password is its own. */
  async authenticate(username: string, password: string): Promise<LdapAuthResult> {
    if (password === '') return INVALID;
    const budget = this.budget();
    const entry = await this.find(username, budget);
    if (!entry) return INVALID;
    return (await this.verify(entry.dn, password, budget)) ? { kind: 'ok', ...entry } : INVALID;
  }

  /** A new sign-in's budget: `timeoutMs` for all its directory work. */
  budget(): DirectoryBudget {
    return new DirectoryBudget(this.config.timeoutMs);
  }

  /** Closes the idle connections now and the busy ones when their operation ends (shutdown, or settings replaced). */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** Open connections to the directory, busy or idle. */
  get connections(): number {
    return this.pool.connections;
  }

  /**
   * `work` on a pooled connection (preferably one in identity `prefer`), within what is left of
   * `budget`. The connection goes back to the pool when `work` ends cleanly, and is closed when
   * it fails or the time runs out (its state is then unknown). A connection that had sat in the
   * pool and turns out dropped (a directory restart) costs one more try, on a new connection.
   */
  private async leased<T>(budget: DirectoryBudget, prefer: Identity, work: (conn: DirectoryConnection) => Promise<T>): Promise<T> {
    const { timeoutMs } = this.config;
    if (budget.leftMs <= 0) throw new DirectoryUnavailableError('timeout', `the sign-in's ${timeoutMs} ms for the directory ran out`);
    const began = performance.now();
    const expiry = new AbortController();
    let held: DirectoryConnection | undefined;
    const run = async (): Promise<T> => {
      for (let retry = false; ; retry = true) {
        const conn = await this.pool.acquire(prefer, expiry.signal, retry);
        held = conn;
        try {
          expiry.signal.throwIfAborted();
          return await work(conn);
        } catch (err) {
          if (held === conn) this.pool.discard(conn);
          held = undefined;
          const dropped = err instanceof DirectoryUnavailableError && err.reason === 'connection-lost';
          if (retry || !dropped || conn.uses === 0 || expiry.signal.aborted) throw err;
        } finally {
          if (held === conn) this.pool.release(conn);
          held = undefined;
        }
      }
    };
    try {
      return await withTimeout(run(), budget.leftMs, () => {
        expiry.abort(new DirectoryUnavailableError('timeout', `the directory took longer than the sign-in's ${timeoutMs} ms in all`));
        // Ends the operation under way too (its answer would come on a closed socket).
        if (held) this.pool.discard(held);
        held = undefined;
        return expiry.signal.reason as Error;
      });
    } finally {
      budget.leftMs -= performance.now() - began;
    }
  }

  /** A new client (TLS as configured, StartTLS done); closed again if `signal` aborts first. */
  private async open(signal: AbortSignal): Promise<{ client: Client; sockets: Sockets }> {
    const { config } = this;
    const hostname = this.url.hostname.replace(/^\[(.*)\]$/, '$1');
    const tlsOptions: ConnectionOptions = {
      rejectUnauthorized: true,
      ...(config.ca === undefined ? {} : { ca: config.ca }),
      // SNI must be a name, never an address (RFC 6066).
      ...(isIP(hostname) ? {} : { servername: hostname }),
    };
    const opened = watchedClient({
      url: config.uri,
      connectTimeout: config.timeoutMs,
      timeout: config.timeoutMs,
      // ldapts switches to TLS-from-the-start whenever tlsOptions are given, so only for ldaps://.
      ...(this.url.protocol === 'ldaps:' ? { tlsOptions } : {}),
    });
    const { client } = opened;
    if (!config.startTls) return opened;
    // unbind() destroys the socket, which also ends a handshake the directory never answers.
    const abandon = (): void => void client.unbind().catch(() => undefined);
    signal.addEventListener('abort', abandon, { once: true });
    try {
      await this.step('tls', () => withTimeout(client.startTLS({ ...tlsOptions, host: hostname }), config.timeoutMs, () => new Error(`StartTLS handshake timed out after ${config.timeoutMs} ms`)));
      signal.throwIfAborted();
      return opened;
    } catch (err) {
      abandon();
      throw err;
    } finally {
      signal.removeEventListener('abort', abandon);
    }
  }

  /** One directory operation, as an LDAP_UNAVAILABLE of its phase when it fails. */
  private async step<T>(phase: Phase, run: () => Promise<T>): Promise<T> {
    try {
      return await this.traced(phase, run);
    } catch (err) {
      throw unavailable(phase, err);
    }
  }

  /** One directory operation in a span of its own (the first one connects too): the server and the phase, never a DN, a filter or a value. */
  private traced<T>(phase: Phase, run: () => Promise<T>): Promise<T> {
    return inSpan(`LDAP ${phase}`, { ...this.server, 'strongroom.ldap.phase': phase }, run);
  }
}

type Phase = 'tls' | 'service-bind' | 'search' | 'user-bind';

function unavailable(phase: Phase, err: unknown): DirectoryUnavailableError {
  if (err instanceof DirectoryUnavailableError) return err;
  if (err instanceof ConnectionClosedError) return new DirectoryUnavailableError('connection-lost', `${phase}: ${err.message}`, { cause: err });
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as NodeJS.ErrnoException).code;
  const detail = `${phase}: ${e.message || e.name}`;
  let reason: DirectoryUnavailableReason = 'directory-error';
  if (phase === 'service-bind' && err instanceof InvalidCredentialsError) reason = 'service-credentials';
  else if (err instanceof ResultCodeError) reason = phase === 'tls' ? 'tls' : 'directory-error';
  else if (/timed? ?out/i.test(e.message)) reason = 'timeout';
  else if (typeof code === 'string' && /^(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EADDRNOTAVAIL)$/.test(code)) reason = 'unreachable';
  // Includes Node's "socket disconnected before secure TLS connection was established" (ECONNRESET),
  // what ldaps:// to a plain LDAP port looks like.
  else if ((typeof code === 'string' && /CERT|SSL|TLS|UNABLE_TO|SELF_SIGNED|HOSTNAME/.test(code)) || /\bTLS\b|\bSSL\b/.test(e.message) || phase === 'tls') reason = 'tls';
  else if (code === 'ECONNRESET' || code === 'EPIPE' || /closed|socket/i.test(e.message)) reason = 'connection-lost';
  return new DirectoryUnavailableError(reason, detail, { cause: err });
}

/** `work`, or `expired()` after `ms` (ldapts has no limit on the StartTLS handshake, nor on a sign-in's operations together). */
export async function withTimeout<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expired()), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    // The loser settles later (when its connection is closed); keep it quiet.
    work.catch(() => undefined);
  }
}

/** Attribute values as strings; names compared case-insensitively, as LDAP does. */
function values(entry: Record<string, unknown>, attribute: string): string[] {
  const key = Object.keys(entry).find((k) => k !== 'dn' && k.toLowerCase() === attribute.toLowerCase());
  const raw = key === undefined ? [] : entry[key];
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v))).filter((v) => v !== '');
}
