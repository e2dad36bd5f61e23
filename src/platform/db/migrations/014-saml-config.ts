/**
 * SAML sign-in (issue 12), first part: the SAML configuration singleton (SPEC "SAML
 * configuration", with what a bank's IdP needs besides: certificates for rotation, the SLO URL
 * of the IdP, the RelayState origins, the attribute and group-role maps, the clock skew).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE saml_config (
      singleton_key text PRIMARY KEY CHECK (singleton_key = 'SINGLETON'),
      saml_enabled boolean NOT NULL,
      sp_entity_id text NOT NULL,
      acs_url text NOT NULL,
      slo_url text,
      idp_entity_id text NOT NULL,
      idp_sso_url text NOT NULL,
      idp_slo_url text,
      idp_x509cert text NOT NULL,
      nameid_format text NOT NULL,
      allowed_relay_origins jsonb NOT NULL DEFAULT '[]'::jsonb,
      allow_idp_initiated boolean NOT NULL DEFAULT false,
      clock_skew_sec integer NOT NULL CHECK (clock_skew_sec BETWEEN 0 AND 600),
      attribute_map jsonb NOT NULL,
      group_roles jsonb NOT NULL DEFAULT '{}'::jsonb,
      updated_at timestamptz NOT NULL,
      updated_by uuid
    );
  `);
}
