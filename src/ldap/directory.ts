/**
 * The directory side of LDAP sign-in (SPEC "LDAP login" steps 2 to 5): service bind, search for
 * the user with the escaped username, read mail, name and groups, bind as the found DN.
 *
 * Two steps, each on a connection of its own, always closed in `finally`: `find` (service bind
 * and search) and `verify` (bind as the DN found). The sign-in reserves its attempt between
 * them, on the directory account the search named, so every spelling the directory resolves to
 * one entry counts against that one account (src/ldap/strategy.ts).
 *
 * Outcomes: `{kind:'ok'}`; `{kind:'invalid'}` for an unknown, ambiguous or wrong-password user
 * alike, so the caller cannot tell them apart; `DirectoryUnavailableError` when the directory
 * cannot be used at all (unreachable, slow, TLS, bad service credentials), which is an operator's
 * problem and must not count as a failed attempt against the user.
 */
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Client, InvalidCredentialsError, ResultCodeError } from 'ldapts';
import { inSpan } from '../platform/observability/tracing.js';
import { buildUserFilter, validateUserFilterTemplate } from './filter.js';
import type { LdapSettings } from './settings.js';

/** The directory's part of the settings (src/ldap/settings.ts, fields documented there), with the CA and the time limit. */
export type LdapDirectoryConfig = Omit<LdapSettings, 'groupRoles' | 'groupsBaseDn' | 'caCert' | 'startTls'> & {
  /** Upgrade an ldap:// connection with StartTLS before the first bind. Not with ldaps://. */
  startTls?: boolean;
  /** PEM CA certificate(s) to trust instead of the system store. Verification is always on. */
  ca?: Buffer | string;
  /**
   * Limit for the TCP/TLS connect, for each operation (each bind, search, StartTLS), and for
   * all the directory work of one sign-in together (its `DirectoryBudget`).
   */
  timeoutMs: number;
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

  constructor(private readonly config: LdapDirectoryConfig) {
    this.url = new URL(config.uri);
    this.server = { 'server.address': this.url.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': Number(this.url.port || (this.url.protocol === 'ldaps:' ? 636 : 389)) };
    if (this.url.protocol !== 'ldap:' && this.url.protocol !== 'ldaps:') throw new TypeError(`LDAP uri must be ldap:// or ldaps://, not ${this.url.protocol}`);
    if (config.startTls && this.url.protocol === 'ldaps:') throw new TypeError('StartTLS is for ldap:// URIs; ldaps:// is already TLS');
    if (!(config.timeoutMs > 0)) throw new TypeError('LDAP timeoutMs must be positive');
    validateUserFilterTemplate(config.userFilter);
  }

  /** Service bind, then search for `username`: the one entry it names, or null (none, or several). */
  async find(username: string, budget = this.budget()): Promise<DirectoryEntry | null> {
    // An empty username or one with a lone surrogate (no UTF-8 form; it would be sent as U+FFFD)
    // cannot name anyone.
    if (username === '' || /\p{Cs}/u.test(username)) return null;
    const { config } = this;
    return this.connected(budget, async (client) => {
      await this.step('service-bind', () => stillConnected(client, config.startTls === true).bind(config.bindDn, config.bindPassword));
      const attributes = [...new Set([config.attrMail, config.attrName, config.groupMemberAttr].filter((a) => a !== ''))];
      const { searchEntries } = await this.step('search', () => stillBound(client).search(config.baseDn, {
        scope: 'sub',
        filter: buildUserFilter(config.userFilter, username),
        attributes,
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

  /** Binds as `dn` with `password` on a connection of its own: true when the directory accepts it. */
  async verify(dn: string, password: string, budget = this.budget()): Promise<boolean> {
    // A simple bind with a DN and an empty password is an "unauthenticated bind" (RFC 4513 5.1.2)
    // that servers such as Active Directory answer with success. Only the empty string is that;
    // a password of spaces is a password and goes to the directory.
    if (password === '') return false;
    return this.connected(budget, async (client) => {
      try {
        await this.traced('user-bind', () => stillConnected(client, this.config.startTls === true).bind(dn, password));
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

  /** A connection (TLS as configured, StartTLS done) for `work`, within what is left of `budget`, always unbound after it. */
  private async connected<T>(budget: DirectoryBudget, work: (client: Client) => Promise<T>): Promise<T> {
    const { config } = this;
    const left = budget.leftMs;
    if (left <= 0) throw new DirectoryUnavailableError('timeout', `the sign-in's ${config.timeoutMs} ms for the directory ran out`);
    const began = performance.now();
    const hostname = this.url.hostname.replace(/^\[(.*)\]$/, '$1');
    const tlsOptions: ConnectionOptions = {
      rejectUnauthorized: true,
      ...(config.ca === undefined ? {} : { ca: config.ca }),
      // SNI must be a name, never an address (RFC 6066).
      ...(isIP(hostname) ? {} : { servername: hostname }),
    };
    const client = new Client({
      url: config.uri,
      connectTimeout: config.timeoutMs,
      timeout: config.timeoutMs,
      // ldapts switches to TLS-from-the-start whenever tlsOptions are given, so only for ldaps://.
      ...(this.url.protocol === 'ldaps:' ? { tlsOptions } : {}),
    });
    const run = async (): Promise<T> => {
      if (config.startTls) {
        await this.step('tls', () => withTimeout(client.startTLS({ ...tlsOptions, host: hostname }), config.timeoutMs, () => new Error(`StartTLS handshake timed out after ${config.timeoutMs} ms`)));
      }
      return work(client);
    };
    try {
      return await withTimeout(run(), left, () => new DirectoryUnavailableError('timeout', `the directory took longer than the sign-in's ${config.timeoutMs} ms in all`));
    } finally {
      budget.leftMs -= performance.now() - began;
      // unbind() also destroys the socket when the server does not answer or is gone (which
      // also ends an operation the budget cut short).
      await client.unbind().catch(() => undefined);
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

/*
 * ldapts silently reconnects a dropped connection on the next operation, unbound and, for ldap://
 * with StartTLS, in clear text. So a drop between steps must end the attempt: otherwise a bind
 * password could travel unencrypted, or a search run anonymously, find no one and turn an outage
 * into "invalid". Checked synchronously right before the call, where no close event can slip in.
 */
function stillConnected(client: Client, required: boolean): Client {
  if (required && !client.isConnected) throw new DirectoryUnavailableError('connection-lost', 'the connection closed between operations');
  return client;
}

function stillBound(client: Client): Client {
  if (!client.isBound) throw new DirectoryUnavailableError('connection-lost', 'the connection closed after the service bind');
  return client;
}

type Phase = 'tls' | 'service-bind' | 'search' | 'user-bind';

function unavailable(phase: Phase, err: unknown): DirectoryUnavailableError {
  if (err instanceof DirectoryUnavailableError) return err;
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
async function withTimeout<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expired()), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    // The loser settles later (when `finally` in authenticate destroys the socket); keep it quiet.
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
