/**
 * The SAML settings as the form holds them, from the settings in force (POST
 * /api/v1/auth/saml/config?include_certificate=true without a body: the IdP certificates as PEM
 * too), and the body that writes them (the same route with one). The attribute map has no field:
 * it is sent back as read.
 */
import type { SamlRoleKey } from '../../../../../src/platform/config-saml.js';
import { linesOf, orNull } from './settings-form.js';
import type { SamlView } from './types.js';

export const SAML_CONFIG = '/api/v1/auth/saml/config';
export const SAML_PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
/** The group-role map's keys, as the API names them (each grants one role). */
export const SAML_GROUP_KEYS = ['admin', 'staff', 'customers', 'operators', 'agents'] as const satisfies readonly SamlRoleKey[];

export interface SamlDraft {
  enabled: boolean;
  spEntityId: string;
  acsUrl: string;
  sloUrl: string;
  idpEntityId: string;
  idpSsoUrl: string;
  idpSloUrl: string;
  idpCert: string;
  nameIdFormat: string;
  relayOrigins: string;
  idpInitiated: boolean;
  clockSkew: string;
  /** Per role key, the IdP groups that grant it, one per line (a group's name may hold commas). */
  roles: Record<SamlRoleKey, string>;
  attributeMap: Record<string, string[]>;
}

export const SAML_FIELDS = ['saml_enabled', 'sp_entity_id', 'acs_url', 'slo_url', 'idp_entity_id', 'idp_sso_url', 'idp_slo_url', 'idp_x509cert', 'nameid_format', 'allowed_relay_origins', 'allow_idp_initiated', 'clock_skew_sec', 'group_roles'] as const;

/** The form prefilled from the settings in force; a server without them gets the API's defaults and this service's own addresses. */
export function samlDraftOf(v: SamlView | undefined, origin: string): SamlDraft {
  const configured = v?.configured === true;
  return {
    enabled: configured ? v.saml_enabled : true, spEntityId: v?.sp_entity_id ?? '',
    acsUrl: v?.acs_url ?? (configured ? '' : `${origin}/api/v1/auth/saml/acs`), sloUrl: v?.slo_url ?? '',
    idpEntityId: v?.idp_entity_id ?? '', idpSsoUrl: v?.idp_sso_url ?? '', idpSloUrl: v?.idp_slo_url ?? '', idpCert: v?.idp_x509cert ?? '',
    nameIdFormat: v?.nameid_format ?? SAML_PERSISTENT, relayOrigins: (v?.allowed_relay_origins ?? []).join('\n'),
    idpInitiated: v?.allow_idp_initiated ?? false, clockSkew: String(v?.clock_skew_sec ?? 60),
    roles: Object.fromEntries(SAML_GROUP_KEYS.map((k) => [k, (v?.group_roles[k] ?? []).join('\n')])) as Record<SamlRoleKey, string>,
    attributeMap: configured ? v.attribute_map : {},
  };
}

/** A whole number of seconds as a number; anything else as typed, for the API to refuse by its field. */
function secondsOf(text: string): number | string {
  return /^\d{1,6}$/.test(text.trim()) ? Number(text.trim()) : text;
}

/** The body of the write: every setting the form has, the attribute map as read. */
export function samlBodyOf(d: SamlDraft): Record<string, unknown> {
  const groupRoles = Object.fromEntries(SAML_GROUP_KEYS.map((k) => [k, linesOf(d.roles[k])] as const).filter(([, groups]) => groups.length > 0));
  return {
    saml_enabled: d.enabled, sp_entity_id: d.spEntityId.trim(), acs_url: d.acsUrl.trim(), slo_url: orNull(d.sloUrl),
    idp_entity_id: d.idpEntityId.trim(), idp_sso_url: d.idpSsoUrl.trim(), idp_slo_url: orNull(d.idpSloUrl), idp_x509cert: d.idpCert.trim(),
    nameid_format: d.nameIdFormat.trim(), allowed_relay_origins: linesOf(d.relayOrigins), allow_idp_initiated: d.idpInitiated,
    clock_skew_sec: secondsOf(d.clockSkew), ...(Object.keys(d.attributeMap).length > 0 ? { attribute_map: d.attributeMap } : {}), group_roles: groupRoles,
  };
}
