/**
 * LDAP sign-in (issue 11): the LDAP configuration singleton (SPEC "LDAP configuration"; its
 * `bind_password` always encrypted, ENCRYPTED_COLUMNS.ldapBindPassword) and the identity
 * provider links (SPEC UserIdentityProvider) that just-in-time provisioning writes, shared with
 * SAML. A subject is unique per provider type and issuer, so two parallel first sign-ins of one
 * directory user cannot both create an account.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE ldap_config (
      singleton_key text PRIMARY KEY CHECK (singleton_key = 'SINGLETON'),
      uri text NOT NULL,
      bind_dn text NOT NULL,
      bind_password_enc text NOT NULL,
      base_dn text NOT NULL,
      user_filter text NOT NULL,
      attr_mail text NOT NULL,
      attr_name text NOT NULL,
      group_member_attr text NOT NULL,
      start_tls boolean NOT NULL DEFAULT false,
      ca_cert text,
      group_roles jsonb NOT NULL DEFAULT '{}'::jsonb,
      updated_at timestamptz NOT NULL,
      updated_by uuid
    );

    CREATE TABLE user_identity_providers (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      idp_type text NOT NULL CHECK (idp_type IN ('LDAP', 'SAML')),
      idp_subject text NOT NULL,
      idp_issuer text NOT NULL DEFAULT '',
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL,
      UNIQUE (idp_type, idp_issuer, idp_subject)
    );
    CREATE INDEX user_identity_providers_user ON user_identity_providers (user_id);
  `);
}
