/**
 * Directory sign-in (SPEC "LDAP login", issue 11) as a strategy of the one sign-in pipeline, so
 * rate limits, lockout, access policy, second factors, tokens, sessions and audit apply as for
 * every other method. The strategy asks the directory (src/ldap/directory.ts) and provisions
 * the account (src/ldap/provision.ts); a directory that cannot be used is the operator's
 * problem, answered 401 LDAP_UNAVAILABLE and never counted against the user (an error thrown
 * under a reserved attempt gives the attempt back: src/policy/lockout.ts).
 */
import type { Logger } from 'pino';
import type { AuditContext } from '../audit/service.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Authenticated, SignInStrategy, Subject } from '../signin/strategy.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { DirectoryUnavailableError, LdapDirectory } from './directory.js';
import { LdapErrors } from './errors.js';
import type { LdapProvisioning } from './provision.js';
import type { LdapSettings, LdapSettingsStore } from './settings.js';

export interface LdapInput {
  username: string;
  password: string;
  /** Who is asking, for the provisioning's audit rows. */
  audit: AuditContext;
}

export interface LdapStrategyDeps {
  settings: LdapSettingsStore;
  provisioning: LdapProvisioning;
  attempts: LoginAttempts;
  log: Logger;
  metrics: Metrics;
  timeoutMs: number;
}

export class LdapStrategy implements SignInStrategy<LdapInput> {
  readonly name = 'ldap' as const;
  /** The directory client of the settings it was built for: rebuilt when the settings change. */
  private directory: { for: LdapSettings; client: LdapDirectory } | undefined;
  private readonly unavailable;

  constructor(private readonly deps: LdapStrategyDeps) {
    this.unavailable = deps.metrics.counter('strongroom_ldap_unavailable_total', 'LDAP sign-ins answered 401 LDAP_UNAVAILABLE: the directory was unreachable, slow, refused TLS or the service account');
  }

  /**
   * The lockout counts the name as typed, apart from local passwords (`ldap:` prefix): the
   * account may not exist yet, and a directory password is another secret than a local one.
   */
  async subject(input: LdapInput): Promise<Subject> {
    return { key: this.deps.attempts.subjectKey(undefined, `ldap:${input.username}`), identifier: input.username, user: undefined };
  }

  async authenticate(input: LdapInput): Promise<Authenticated | null> {
    const current = await this.deps.settings.current();
    if (!current) throw LdapErrors.LDAP_NOT_CONFIGURED();
    const { settings } = current;
    let client: LdapDirectory;
    try {
      client = this.client(settings);
    } catch (err) {
      // Only LDAP_* variables can get here (a stored configuration was validated): say so loudly.
      this.deps.log.error({ err: (err as Error).message, source: current.source }, 'LDAP configuration is not usable: directory sign-in answers 401 LDAP_UNAVAILABLE until it is fixed');
      throw LdapErrors.LDAP_UNAVAILABLE({}, { cause: err });
    }
    let result;
    try {
      result = await client.authenticate(input.username, input.password);
    } catch (err) {
      if (!(err instanceof DirectoryUnavailableError)) throw err;
      this.unavailable.inc();
      // For operators: why, and where (never the bind password or the user's).
      this.deps.log.warn({ reason: err.reason, uri: settings.uri, err: err.message }, 'LDAP directory unavailable: sign-in answered 401 LDAP_UNAVAILABLE, not counted against the user');
      throw LdapErrors.LDAP_UNAVAILABLE({}, { cause: err });
    }
    if (result.kind === 'invalid') return null;
    const user = await this.deps.provisioning.userFor(
      { dn: result.dn, username: input.username.trim(), mail: result.mail, name: result.name, groups: result.groups },
      settings.groupRoles, input.audit,
    );
    return { user };
  }

  private client(settings: LdapSettings): LdapDirectory {
    if (this.directory?.for !== settings) {
      const client = new LdapDirectory({
        uri: settings.uri, bindDn: settings.bindDn, bindPassword: settings.bindPassword, baseDn: settings.baseDn,
        userFilter: settings.userFilter, attrMail: settings.attrMail, attrName: settings.attrName, groupMemberAttr: settings.groupMemberAttr,
        startTls: settings.startTls, ca: settings.caCert, timeoutMs: this.deps.timeoutMs,
      });
      this.directory = { for: settings, client };
    }
    return this.directory.client;
  }
}
