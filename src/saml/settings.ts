/**
 * The SAML configuration (SPEC "SAML configuration", a singleton): the database's record when
 * there is one, else SAML_CONFIG_FILE and the SAML_* variables (SPEC: the database overrides the
 * environment). Each node caches what it read; a change made on any node is announced on the
 * event bus, so every node reads the new settings before its next SAML request.
 */
import type { Clock } from '../platform/clock.js';
import { DEFAULT_ATTRIBUTE_MAP, type SamlAttributeMap, type SamlSettings } from '../platform/config-saml.js';
import { AnnouncedCache } from '../platform/db/announced-cache.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';

export type SamlSource = 'database' | 'environment';

export interface SamlSettingsDeps {
  db: Db;
  clock: Clock;
  bus: EventBus;
  env: SamlSettings | undefined;
}

/** A jsonb column as PostgreSQL (object) or PGlite (text) hands it over. */
function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

export class SamlSettingsStore {
  /** What this node read: null when nothing is configured anywhere. */
  private readonly cache: AnnouncedCache<{ settings: SamlSettings; source: SamlSource } | null>;

  constructor(private readonly deps: SamlSettingsDeps) {
    this.cache = new AnnouncedCache(deps.bus, 'saml-config.changed', () => this.load());
  }

  /** The settings in force and where they come from, or null when SAML is not configured. */
  async current(): Promise<{ settings: SamlSettings; source: SamlSource } | null> {
    return this.cache.get();
  }

  private async load(): Promise<{ settings: SamlSettings; source: SamlSource } | null> {
    const row = await this.deps.db.selectFrom('saml_config').selectAll().where('singleton_key', '=', 'SINGLETON').executeTakeFirst();
    if (!row) return this.deps.env ? { source: 'environment', settings: this.deps.env } : null;
    return {
      source: 'database',
      settings: {
        enabled: row.saml_enabled, spEntityId: row.sp_entity_id, acsUrl: row.acs_url, sloUrl: row.slo_url,
        idpEntityId: row.idp_entity_id, idpSsoUrl: row.idp_sso_url, idpSloUrl: row.idp_slo_url,
        idpCerts: row.idp_x509cert.split('\n').filter((c) => c !== ''), nameIdFormat: row.nameid_format,
        allowedRelayOrigins: json<string[]>(row.allowed_relay_origins), allowIdpInitiated: row.allow_idp_initiated, clockSkewSec: row.clock_skew_sec,
        attributeMap: { ...DEFAULT_ATTRIBUTE_MAP, ...json<Partial<SamlAttributeMap>>(row.attribute_map) },
        groupRoles: json<SamlSettings['groupRoles']>(row.group_roles),
      },
    };
  }

  /** Creates or replaces the record in `trx` (`settings` already checked). */
  async save(trx: Db, s: SamlSettings, actor: string | null): Promise<void> {
    const values = {
      saml_enabled: s.enabled, sp_entity_id: s.spEntityId, acs_url: s.acsUrl, slo_url: s.sloUrl, idp_entity_id: s.idpEntityId,
      idp_sso_url: s.idpSsoUrl, idp_slo_url: s.idpSloUrl, idp_x509cert: s.idpCerts.join('\n'), nameid_format: s.nameIdFormat,
      allowed_relay_origins: JSON.stringify(s.allowedRelayOrigins), allow_idp_initiated: s.allowIdpInitiated, clock_skew_sec: s.clockSkewSec,
      attribute_map: JSON.stringify(s.attributeMap), group_roles: JSON.stringify(s.groupRoles),
      updated_at: new Date(this.deps.clock.now()), updated_by: actor,
    };
    await trx.insertInto('saml_config').values({ singleton_key: 'SINGLETON', ...values })
      .onConflict((oc) => oc.column('singleton_key').doUpdateSet(values)).execute();
  }

  /** Tells every node (this one too) to read the settings again. */
  async announce(): Promise<void> {
    await this.deps.bus.publish({ type: 'saml-config.changed' });
  }
}
