/**
 * Directory sign-in (SPEC "LDAP login", issue 11) as a strategy of the one sign-in pipeline, so
 * rate limits, lockout, access policy, second factors, tokens, sessions and audit apply as for
 * every other method. The strategy asks the directory (src/ldap/directory.ts) and provisions
 * the account (src/ldap/provision.ts); a directory that cannot be used is the operator's
 * problem, answered 401 LDAP_UNAVAILABLE and never counted against the user (an error thrown
 * under a reserved attempt gives the attempt back: src/policy/lockout.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditContext } from '../audit/service.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Authenticated, SignInStrategy, Subject } from '../signin/strategy.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { DirectoryUnavailableError, LdapDirectory, type DirectoryBudget, type DirectoryEntry } from './directory.js';
import { LdapErrors } from './errors.js';
import { subjectOf, type LdapProvisioning, type Linked } from './provision.js';
import type { LdapSettings, LdapSettingsStore } from './settings.js';

export interface LdapInput {
  username: string;
  password: string;
  /** Who is asking, for the provisioning's audit rows. */
  audit: AuditContext;
}

/** The subject, with what the search found (null: no such user), the settings and client it used, and what is left of the sign-in's time for the directory. */
interface LdapSubject extends Subject {
  entry: DirectoryEntry | null;
  settings: LdapSettings;
  client: LdapDirectory;
  budget: DirectoryBudget;
  linked: Linked | undefined;
}

export interface LdapStrategyDeps {
  settings: LdapSettingsStore;
  provisioning: LdapProvisioning;
  attempts: LoginAttempts;
  log: Logger;
  metrics: Metrics;
  timeoutMs: number;
  /** Connections to the directory kept open at most (LDAP_POOL_SIZE). */
  poolSize: number;
}

export class LdapStrategy implements SignInStrategy<LdapInput> {
  readonly name = 'ldap' as const;
  readonly passwordElsewhere = true;
  /** The directory client (and its connections) of the settings it was built for: rebuilt when the directory's settings change. */
  private built: { for: LdapSettings; key: string; client: LdapDirectory } | undefined;
  private readonly unavailable;

  constructor(private readonly deps: LdapStrategyDeps) {
    this.unavailable = deps.metrics.counter('strongroom_ldap_unavailable_total', 'LDAP sign-ins answered 401 LDAP_UNAVAILABLE: the directory was unreachable, slow, refused TLS or the service account');
  }

  /**
   * Finds the directory entry first (service bind and search, before any attempt is reserved: a
   * directory that cannot be used is not the user's failure), so the lockout counts the account
   * the directory resolved, whatever spelling named it: the linked local account when there is
   * one (an administrator's unlock clears it), else the DN. A name the directory does not know
   * is counted by its NFKC form, and locks exactly like a known one.
   */
  async subject(input: LdapInput): Promise<LdapSubject> {
    const { settings, client } = await this.directory();
    const budget = client.budget();
    const entry = await this.ask(settings, () => client.find(input.username, budget));
    const attempts = this.deps.attempts;
    if (!entry) return { key: attempts.subjectKey(undefined, `ldap:${input.username.normalize('NFKC')}`), identifier: input.username, user: undefined, entry: null, settings, client, budget, linked: undefined };
    const linked = await this.deps.provisioning.linked(entry.dn);
    const key = linked ? attempts.userKey(linked.user.id) : attempts.subjectKey(undefined, `ldap:dn:${subjectOf(entry.dn)}`);
    return { key, identifier: input.username, user: linked?.user, entry, settings, client, budget, linked };
  }

  async authenticate(input: LdapInput, subject: Subject): Promise<Authenticated | null> {
    const { entry, settings, client, budget, linked } = subject as LdapSubject;
    if (!entry) {
      // The same work as a wrong password: a bind, to a DN that cannot exist (it names no account
      // to count a failure against), whatever the directory answers.
      await client.verify(`cn=${randomUUID()},${settings.baseDn}`, input.password, budget).catch(() => false);
      return null;
    }
    if (!(await this.ask(settings, () => client.verify(entry.dn, input.password, budget)))) return null;
    return this.deps.provisioning.userFor({ ...entry, username: input.username.trim() }, settings, input.audit, linked);
  }

  /**
   * A signed-in directory user's current password (re-authentication before enrolling a factor,
   * setting a PIN): a bind as their entry. `dn` is the link's (lower-cased; DNs compare without
   * regard to case). A directory that cannot be used is 401 LDAP_UNAVAILABLE, as at sign-in.
   */
  async verifyPassword(dn: string, password: string): Promise<boolean> {
    const { settings, client } = await this.directory();
    return this.ask(settings, () => client.verify(dn, password));
  }

  /** The settings in force and their client; 401 when there are none or they are not usable. */
  private async directory(): Promise<{ settings: LdapSettings; client: LdapDirectory }> {
    const current = await this.deps.settings.current();
    if (!current) throw LdapErrors.LDAP_NOT_CONFIGURED();
    try {
      return { settings: current.settings, client: this.client(current.settings) };
    } catch (err) {
      // Only LDAP_* variables can get here (a stored configuration was validated): say so loudly.
      this.deps.log.error({ err: (err as Error).message, source: current.source }, 'LDAP configuration is not usable: directory sign-in answers 401 LDAP_UNAVAILABLE until it is fixed');
      throw LdapErrors.LDAP_UNAVAILABLE({}, { cause: err });
    }
  }

  /** A directory call; a directory that cannot be used is 401 LDAP_UNAVAILABLE, logged and counted for operators. */
  private async ask<T>(settings: LdapSettings, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof DirectoryUnavailableError)) throw err;
      this.unavailable.inc();
      // For operators: why, and where (never the bind password or the user's).
      this.deps.log.warn({ reason: err.reason, uri: settings.uri, err: err.message }, 'LDAP directory unavailable: sign-in answered 401 LDAP_UNAVAILABLE, not counted against the user');
      throw LdapErrors.LDAP_UNAVAILABLE({}, { cause: err });
    }
  }

  /**
   * The client of `settings`. Settings read again with the same directory fields (another node's
   * change of the group map, a bus reconnect) keep the pool; others replace it, and the old one
   * closes its connections as the sign-ins under way on it finish.
   */
  private client(settings: LdapSettings): LdapDirectory {
    if (this.built?.for === settings) return this.built.client;
    const key = directoryKey(settings);
    if (this.built?.key !== key) {
      const client = new LdapDirectory({ ...settings, ca: settings.caCert, timeoutMs: this.deps.timeoutMs, poolSize: this.deps.poolSize });
      void this.built?.client.close();
      this.built = { for: settings, key, client };
    } else {
      this.built = { ...this.built, for: settings };
    }
    return this.built.client;
  }

  /** Closes the directory connections (shutdown). */
  async close(): Promise<void> {
    const built = this.built;
    this.built = undefined;
    await built?.client.close();
  }
}

/** The settings the directory client is built from (not the group map, which the provisioning reads). */
function directoryKey(s: LdapSettings): string {
  return JSON.stringify([s.uri, s.bindDn, s.bindPassword, s.baseDn, s.userFilter, s.attrMail, s.attrName, s.groupMemberAttr, s.startTls, s.caCert ?? null]);
}
