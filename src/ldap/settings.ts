/**
 * The LDAP configuration (SPEC "LDAP configuration", a singleton): the database's record when
 * there is one, else the LDAP_* variables (SPEC: the database overrides the environment). Each
 * node caches what it read; a change made on any node is announced on the event bus, so every
 * node reads the new settings before its next LDAP sign-in.
 */
import { readFileSync } from 'node:fs';
import type { LdapEnvSettings } from '../platform/config-ldap.js';
import type { Clock } from '../platform/clock.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { FieldCipher } from '../platform/crypto/field-cipher.js';
import { AnnouncedCache } from '../platform/db/announced-cache.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { normalizeDn } from '../users/dn.js';

const BIND_PASSWORD = ENCRYPTED_COLUMNS.ldapBindPassword.context;

/**
 * The settings in force: the variables' fields, with the CA as PEM (read from LDAP_CA_FILE, or
 * stored); `groupRoles` maps a directory group (its full DN, or the value of its first RDN such
 * as `tellers` for a group under `groupsBaseDn`) to role names (src/ldap/groups.ts).
 */
export type LdapSettings = Omit<LdapEnvSettings, 'caFile'> & {
  /** PEM of the CA(s) to trust instead of the system store; undefined: the system store. */
  caCert: string | undefined;
};

export type LdapSource = 'database' | 'environment';

/** What the bind password is given for: the server, the account, and how the connection is secured. */
export interface LdapEndpoint {
  uri: string;
  bindDn: string;
  startTls: boolean;
  caCert: string | undefined;
}

/**
 * The parts of `next` that differ from `stored` as far as the bind password is concerned: the
 * URI's scheme, host or port, the bind DN (in canonical form), StartTLS, the CA. A change of any
 * would send the stored password somewhere it was not given for.
 */
export function endpointChanges(stored: LdapEndpoint, next: LdapEndpoint): Array<'uri' | 'bind_dn' | 'start_tls' | 'ca_cert'> {
  const server = (uri: string) => {
    try {
      const u = new URL(uri);
      return `${u.protocol}//${u.hostname.toLowerCase()}:${u.port || (u.protocol === 'ldaps:' ? '636' : '389')}`;
    } catch {
      return uri; // not a URI: refused on its own account, and differs from any stored one
    }
  };
  const dn = (text: string) => normalizeDn(text) ?? text;
  const pem = (text: string | undefined) => text?.replace(/\r\n/g, '\n').trim() ?? '';
  return [
    ...(server(stored.uri) !== server(next.uri) ? ['uri' as const] : []),
    ...(dn(stored.bindDn) !== dn(next.bindDn) ? ['bind_dn' as const] : []),
    ...(stored.startTls !== next.startTls ? ['start_tls' as const] : []),
    ...(pem(stored.caCert) !== pem(next.caCert) ? ['ca_cert' as const] : []),
  ];
}

/** What an administrator writes: every setting; `bind_password` may be left out to keep the stored one. */
export type LdapSettingsInput = Omit<LdapSettings, 'bindPassword'> & { bindPassword: string | undefined };

export interface LdapSettingsDeps {
  db: Db;
  clock: Clock;
  bus: EventBus;
  cipher: FieldCipher;
  env: LdapEnvSettings | undefined;
}

export class LdapSettingsStore {
  /** What this node read: null when nothing is configured anywhere. */
  private readonly cache: AnnouncedCache<{ settings: LdapSettings; source: LdapSource } | null>;

  constructor(private readonly deps: LdapSettingsDeps) {
    this.cache = new AnnouncedCache(deps.bus, 'ldap-config.changed', () => this.load());
  }

  /** The settings in force and where they come from, or null when LDAP is not configured. */
  async current(): Promise<{ settings: LdapSettings; source: LdapSource } | null> {
    return this.cache.get();
  }

  private async load(): Promise<{ settings: LdapSettings; source: LdapSource } | null> {
    const row = await this.deps.db.selectFrom('ldap_config').selectAll().where('singleton_key', '=', 'SINGLETON').executeTakeFirst();
    if (row) {
      return {
        source: 'database',
        settings: {
          uri: row.uri, bindDn: row.bind_dn, bindPassword: this.deps.cipher.decrypt(row.bind_password_enc, BIND_PASSWORD), baseDn: row.base_dn,
          userFilter: row.user_filter, attrMail: row.attr_mail, attrName: row.attr_name, groupMemberAttr: row.group_member_attr,
          startTls: row.start_tls, caCert: row.ca_cert ?? undefined,
          groupRoles: (typeof row.group_roles === 'string' ? JSON.parse(row.group_roles) : row.group_roles) as Record<string, string[]>,
          groupsBaseDn: row.groups_base_dn ?? undefined,
        },
      };
    }
    const env = this.deps.env;
    if (!env) return null;
    const { caFile, ...rest } = env;
    return { source: 'environment', settings: { ...rest, caCert: caFile === undefined ? undefined : readFileSync(caFile, 'utf8') } };
  }

  /**
   * Where the stored bind password may be sent (locked until `trx` ends), or undefined when
   * nothing is stored: an update may keep the password only while this stays the same.
   */
  async storedEndpoint(trx: Db): Promise<LdapEndpoint | undefined> {
    const row = await trx.selectFrom('ldap_config').select(['uri', 'bind_dn', 'start_tls', 'ca_cert']).where('singleton_key', '=', 'SINGLETON').forUpdate().executeTakeFirst();
    return row && { uri: row.uri, bindDn: row.bind_dn, startTls: row.start_tls, caCert: row.ca_cert ?? undefined };
  }

  /** Creates or replaces the record in `trx`; without `bindPassword` the stored one stays (there must be one). */
  async save(trx: Db, input: LdapSettingsInput, actor: string | null): Promise<void> {
    const now = new Date(this.deps.clock.now());
    const values = {
      uri: input.uri, bind_dn: input.bindDn, base_dn: input.baseDn, user_filter: input.userFilter, attr_mail: input.attrMail,
      attr_name: input.attrName, group_member_attr: input.groupMemberAttr, start_tls: input.startTls, ca_cert: input.caCert ?? null,
      group_roles: JSON.stringify(input.groupRoles), groups_base_dn: input.groupsBaseDn ?? null, updated_at: now, updated_by: actor,
    };
    if (input.bindPassword === undefined) {
      await trx.updateTable('ldap_config').set(values).where('singleton_key', '=', 'SINGLETON').execute();
      return;
    }
    const bind_password_enc = this.deps.cipher.encrypt(input.bindPassword, BIND_PASSWORD);
    await trx.insertInto('ldap_config').values({ singleton_key: 'SINGLETON', ...values, bind_password_enc })
      .onConflict((oc) => oc.column('singleton_key').doUpdateSet({ ...values, bind_password_enc })).execute();
  }

  /** Tells every node (this one too) to read the settings again. */
  async announce(): Promise<void> {
    await this.deps.bus.publish({ type: 'ldap-config.changed' });
  }
}
