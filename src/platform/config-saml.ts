/**
 * The SAML settings (SPEC "SAML configuration"): their shape, their checks (shared by the
 * SAML_* variables and `POST /api/v1/auth/saml/config`), and the variables themselves, read
 * while the database holds no SAML configuration. `SAML_CONFIG_FILE` names a JSON file with the
 * configuration route's fields; each SAML_* variable set overrides its field. Read by config.ts,
 * the only module that reads the environment.
 */
import { X509Certificate } from 'node:crypto';

export const NAMEID_FORMATS = {
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  emailAddress: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
} as const;

/** Which assertion attributes carry what (names or OIDs, the first present wins). */
export interface SamlAttributeMap {
  email: string[];
  name: string[];
  groups: string[];
  phone: string[];
  branch: string[];
  role: string[];
}

/** Friendly names and the common OIDs (eduPerson, inetOrgPerson, ADFS/Entra claim URIs). */
export const DEFAULT_ATTRIBUTE_MAP: SamlAttributeMap = {
  email: ['email', 'mail', 'urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'],
  name: ['displayName', 'name', 'cn', 'urn:oid:2.16.840.1.113730.3.1.241', 'urn:oid:2.5.4.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name'],
  groups: ['groups', 'memberOf', 'isMemberOf', 'urn:oid:1.3.6.1.4.1.5923.1.5.1.1', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'],
  phone: ['phone', 'mobile', 'telephoneNumber', 'urn:oid:0.9.2342.19200300.100.1.41', 'urn:oid:2.5.4.20'],
  branch: ['branch'],
  role: ['role', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role'],
};

/** SPEC's group-role map keys, and the role each grants. */
export const SAML_ROLE_KEYS = { admin: 'admin', staff: 'staff', customers: 'customer', operators: 'operator', agents: 'agent' } as const;
export type SamlRoleKey = keyof typeof SAML_ROLE_KEYS;

export interface SamlSettings {
  enabled: boolean;
  spEntityId: string;
  acsUrl: string;
  /** The SP's single logout service (SPEC `slo_url`). */
  sloUrl: string | null;
  idpEntityId: string;
  idpSsoUrl: string;
  idpSloUrl: string | null;
  /** The IdP's signing certificates as base64 DER (several during a rotation; any one verifies). */
  idpCerts: string[];
  nameIdFormat: string;
  /** Origins a RelayState (where the browser lands) may name; none: RelayState is refused. */
  allowedRelayOrigins: string[];
  /** Accept responses the IdP sends unasked (no InResponseTo). Off by default. */
  allowIdpInitiated: boolean;
  clockSkewSec: number;
  attributeMap: SamlAttributeMap;
  /** SPEC's map: admin, staff, customers, operators, agents, each to the IdP groups that grant it. */
  groupRoles: Partial<Record<SamlRoleKey, string[]>>;
}

export const SAML_DEFAULTS = { nameIdFormat: NAMEID_FORMATS.persistent, clockSkewSec: 60 } as const;

export type SamlField = 'sp_entity_id' | 'acs_url' | 'slo_url' | 'idp_entity_id' | 'idp_sso_url' | 'idp_slo_url' | 'idp_x509cert' | 'nameid_format' | 'allowed_relay_origins' | 'clock_skew_sec';

/** A certificate given as PEM or as base64 DER, as base64 DER; undefined when it does not parse. */
export function certificateBody(text: string): string | undefined {
  const body = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) return undefined;
  try {
    new X509Certificate(Buffer.from(body, 'base64'));
    return body;
  } catch {
    return undefined;
  }
}

/** Several PEM certificates in one text (or one base64 body), each as base64 DER; undefined when one does not parse. */
export function certificateBodies(text: string): string[] | undefined {
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [text];
  const bodies = pems.map(certificateBody);
  return bodies.every((b): b is string => b !== undefined) && bodies.length > 0 ? bodies : undefined;
}

/** A certificate's base64 DER body as PEM. */
export function certificatePem(body: string): string {
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

/** Whether `text` holds a C0 control character or DEL (none belongs in an entity id or in XML 1.0). */
export function hasControl(text: string): boolean {
  return [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

function urlProblem(value: string | null, production: boolean): string | undefined {
  if (value === null) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https:// URL';
  if (url.protocol === 'http:' && production) return 'must be https:// in production (a SAML response carries the sign-in)';
  if (url.username !== '' || url.hash !== '') return 'must not carry credentials or a fragment';
  return undefined;
}

/** What is wrong with `s`, by field; empty when nothing is. */
export function samlSettingsProblems(s: SamlSettings, production: boolean): Array<{ field: SamlField; message: string }> {
  const problems: Array<{ field: SamlField; message: string }> = [];
  const add = (field: SamlField, message: string | undefined): void => {
    if (message !== undefined) problems.push({ field, message });
  };
  add('sp_entity_id', s.spEntityId.trim() === '' ? 'is required' : hasControl(s.spEntityId) ? 'must not hold control characters' : undefined);
  add('idp_entity_id', s.idpEntityId.trim() === '' ? 'is required' : hasControl(s.idpEntityId) ? 'must not hold control characters' : undefined);
  add('acs_url', urlProblem(s.acsUrl, production));
  add('slo_url', urlProblem(s.sloUrl, production));
  add('idp_sso_url', urlProblem(s.idpSsoUrl, production));
  add('idp_slo_url', urlProblem(s.idpSloUrl, production));
  if (s.idpCerts.length === 0) add('idp_x509cert', 'is required: the certificate the identity provider signs with');
  if (!/^urn:oasis:names:tc:SAML:(1\.1|2\.0):nameid-format:[A-Za-z]+$/.test(s.nameIdFormat)) add('nameid_format', `must be a SAML NameID format URN such as ${NAMEID_FORMATS.persistent}`);
  for (const origin of s.allowedRelayOrigins) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || url.origin !== origin || (url.protocol === 'http:' && production)) add('allowed_relay_origins', `"${origin}" is not an origin (scheme://host[:port], https in production)`);
  }
  if (!Number.isInteger(s.clockSkewSec) || s.clockSkewSec < 0 || s.clockSkewSec > 600) add('clock_skew_sec', 'must be a whole number of seconds from 0 to 600');
  return problems;
}

type Opt = (name: string) => string | undefined;

/** The route's field names, as SAML_CONFIG_FILE holds them. */
interface SamlFile {
  saml_enabled?: boolean;
  sp_entity_id?: string;
  acs_url?: string;
  slo_url?: string | null;
  idp_entity_id?: string;
  idp_sso_url?: string;
  idp_slo_url?: string | null;
  idp_x509cert?: string;
  nameid_format?: string;
  allowed_relay_origins?: string[];
  allow_idp_initiated?: boolean;
  clock_skew_sec?: number;
  attribute_map?: Partial<SamlAttributeMap>;
  group_roles?: Partial<Record<SamlRoleKey, string[]>>;
}

/**
 * The settings from SAML_CONFIG_FILE and the SAML_* variables, or undefined when neither names
 * an identity provider; problems name the variable or the file.
 */
export function readSamlEnv(opt: Opt, readFile: (path: string) => string, problems: string[], production: boolean): SamlSettings | undefined {
  let file: SamlFile = {};
  const path = opt('SAML_CONFIG_FILE');
  if (path !== undefined) {
    try {
      const parsed = JSON.parse(readFile(path)) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
      file = parsed as SamlFile;
    } catch (err) {
      problems.push(`SAML_CONFIG_FILE ${path} cannot be used: ${(err as Error).message}`);
      return undefined;
    }
  }
  const idpEntityId = opt('SAML_IDP_ENTITY_ID') ?? file.idp_entity_id;
  if (idpEntityId === undefined && opt('SAML_IDP_SSO_URL') === undefined && file.idp_sso_url === undefined) return undefined;
  const enabledRaw = opt('SAML_ENABLED');
  if (enabledRaw !== undefined && !['0', '1', 'true', 'false'].includes(enabledRaw.toLowerCase())) problems.push(`SAML_ENABLED must be 1 or 0 (got "${enabledRaw}")`);
  const certText = opt('SAML_IDP_X509CERT') ?? file.idp_x509cert ?? '';
  const idpCerts = certText === '' ? [] : certificateBodies(certText);
  if (idpCerts === undefined) problems.push('SAML_IDP_X509CERT (or idp_x509cert in SAML_CONFIG_FILE) is not a certificate: give the PEM, or its base64 body');
  const settings: SamlSettings = {
    enabled: enabledRaw === undefined ? file.saml_enabled ?? true : ['1', 'true'].includes(enabledRaw.toLowerCase()),
    spEntityId: opt('SAML_SP_ENTITY_ID') ?? file.sp_entity_id ?? '',
    acsUrl: opt('SAML_ACS_URL') ?? file.acs_url ?? '',
    sloUrl: opt('SAML_SLS_URL') ?? file.slo_url ?? null,
    idpEntityId: idpEntityId ?? '',
    idpSsoUrl: opt('SAML_IDP_SSO_URL') ?? file.idp_sso_url ?? '',
    idpSloUrl: opt('SAML_IDP_SLO_URL') ?? file.idp_slo_url ?? null,
    idpCerts: idpCerts ?? [],
    nameIdFormat: opt('SAML_NAMEID_FORMAT') ?? file.nameid_format ?? SAML_DEFAULTS.nameIdFormat,
    allowedRelayOrigins: (opt('SAML_ALLOWED_RELAY_ORIGINS')?.split(',').map((o) => o.trim()).filter((o) => o !== '')) ?? file.allowed_relay_origins ?? [],
    allowIdpInitiated: file.allow_idp_initiated ?? false,
    clockSkewSec: file.clock_skew_sec ?? SAML_DEFAULTS.clockSkewSec,
    attributeMap: { ...DEFAULT_ATTRIBUTE_MAP, ...file.attribute_map },
    groupRoles: file.group_roles ?? {},
  };
  const variable: Record<SamlField, string> = {
    sp_entity_id: 'SAML_SP_ENTITY_ID', acs_url: 'SAML_ACS_URL', slo_url: 'SAML_SLS_URL', idp_entity_id: 'SAML_IDP_ENTITY_ID', idp_sso_url: 'SAML_IDP_SSO_URL',
    idp_slo_url: 'SAML_IDP_SLO_URL', idp_x509cert: 'SAML_IDP_X509CERT', nameid_format: 'SAML_NAMEID_FORMAT', allowed_relay_origins: 'SAML_ALLOWED_RELAY_ORIGINS', clock_skew_sec: 'clock_skew_sec in SAML_CONFIG_FILE',
  };
  for (const p of samlSettingsProblems(settings, production)) {
    if (p.field === 'idp_x509cert' && idpCerts === undefined) continue; // said above
    problems.push(`${variable[p.field]} ${p.message}`);
  }
  return settings;
}
