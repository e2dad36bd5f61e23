/** The answers of the routes the settings screens read (src/settings/routes.ts, src/ldap/routes.ts, src/saml/config-routes.ts). */

export interface LdapView {
  configured: boolean;
  source: 'database' | 'environment' | null;
  uri: string | null;
  bind_dn: string | null;
  base_dn: string | null;
  user_filter: string | null;
  attr_mail: string | null;
  attr_name: string | null;
  group_member_attr: string | null;
  start_tls: boolean;
  ca_cert: string | null;
  group_roles: Record<string, string[]>;
  groups_base_dn: string | null;
  bind_password_set: boolean;
}

export type LdapTestStep = 'connect' | 'tls' | 'bind' | 'search' | 'groups';
export type LdapTestReason =
  | 'unreachable' | 'timeout' | 'tls_failed' | 'no_tls' | 'credentials_refused' | 'directory_error'
  | 'user_not_found' | 'user_ambiguous' | 'no_username' | 'not_read' | 'earlier_step_failed';

export interface LdapTestResult {
  ok: boolean;
  source: 'database' | 'environment';
  uri: string;
  steps: Array<{ step: LdapTestStep; outcome: 'passed' | 'failed' | 'skipped'; reason: LdapTestReason | null; detail: string }>;
  user: { dn: string; mail: string | null; name: string | null; groups: string[]; roles: string[] } | null;
}

export interface SamlView {
  configured: boolean;
  source: 'database' | 'environment' | null;
  saml_enabled: boolean;
  sp_entity_id: string | null;
  acs_url: string | null;
  slo_url: string | null;
  idp_entity_id: string | null;
  idp_sso_url: string | null;
  idp_slo_url: string | null;
  nameid_format: string | null;
  allowed_relay_origins: string[];
  allow_idp_initiated: boolean;
  clock_skew_sec: number;
  attribute_map: Record<string, string[]>;
  group_roles: Record<string, string[]>;
  idp_certificates: Array<{ subject: string; not_after: string; sha256: string }>;
  /** The IdP certificates as PEM: only when read with `?include_certificate=true`. */
  idp_x509cert?: string;
}

export interface RateLimit {
  limit: number;
  window_sec: number;
  variable: string;
  source: 'default' | 'configured';
}

export interface RateGroup {
  group: string;
  per_client: RateLimit | null;
  per_account: RateLimit | null;
  routes: Array<{ method: string; url: string }>;
}

// The keys' answer as the server defines it (a type-only import: nothing of the server is bundled).
export type { KeyInfo, KeyKind, KeyStatus } from '../../../../../src/settings/keys.js';
