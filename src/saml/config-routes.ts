/**
 * SPEC "SAML" routes of the operator and the IdP: `POST /api/v1/auth/saml/config` (read with no
 * body, write with one; permission config.manage, ruling 10) and the SP metadata (`GET` public,
 * `POST` for encrypted clients). Signing in: src/saml/signin-routes.ts.
 */
import { X509Certificate } from 'node:crypto';
import Type, { type Static } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import { certificateBodies, certificatePem, DEFAULT_ATTRIBUTE_MAP, NAMEID_FORMATS, SAML_DEFAULTS, SAML_ROLE_KEYS, samlSettingsProblems, type SamlSettings } from '../platform/config-saml.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { acceptForms } from '../platform/http/form.js';
import { configBody, errors, NO_NUL } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { SamlErrors } from './errors.js';
import { METADATA_CONTENT_TYPE, spMetadata } from './metadata.js';
import type { SamlSettingsStore } from './settings.js';
import type { SamlSpKeys } from './sp-keys.js';

export interface SamlConfigRouteDeps {
  db: Db;
  samlSettings: SamlSettingsStore;
  samlSpKeys: SamlSpKeys;
  guard: Guard;
  users: UserStore;
  audit: AuditLog;
  log: Logger;
  production: boolean;
}

const tags = ['SAML'];

const Url = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description, examples: [example] });
const Names = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL }), { maxItems: 20, description });

const AttributeMap = Type.Object({
  email: Type.Optional(Names('Attributes holding the email, first present wins.')),
  name: Type.Optional(Names('Attributes holding the display name.')),
  groups: Type.Optional(Names('Attributes listing the user\'s groups.')),
  phone: Type.Optional(Names('Attributes holding a phone number.')),
  branch: Type.Optional(Names('Attributes holding the branch code (`branch`).')),
  role: Type.Optional(Names('Attributes holding roles (`role`), read like groups.')),
}, { additionalProperties: false, description: 'Which assertion attributes (names or `urn:oid:` OIDs) carry what; a field left out keeps its defaults (friendly names and the common OIDs and claim URIs).' });

const GroupRoles = Type.Object(Object.fromEntries(Object.keys(SAML_ROLE_KEYS).map((k) => [k, Type.Optional(Names(`IdP groups (or role values) that grant \`${SAML_ROLE_KEYS[k as keyof typeof SAML_ROLE_KEYS]}\`.`))])), {
  additionalProperties: false,
  description: 'The group-role map: its keys are admin, staff, customers, operators and agents; each lists the IdP groups that grant that role.',
  examples: [{ staff: ['Tellers', 'Branch Managers'], admin: ['Strongroom Admins'] }],
});

const ConfigBody = Type.Object({
  saml_enabled: Type.Optional(Type.Boolean({ description: 'Enables SAML sign-in (default true).' })),
  sp_entity_id: Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL, description: 'This service\'s entity id, as the IdP knows it.', examples: ['https://auth.bank.example/saml'] }),
  acs_url: Url('The assertion consumer service: `https://<this service>/api/v1/auth/saml/acs`.', 'https://auth.bank.example/api/v1/auth/saml/acs'),
  slo_url: Type.Optional(Type.Union([Url('This service\'s single logout service: `https://<this service>/api/v1/auth/saml/sls`.', 'https://auth.bank.example/api/v1/auth/saml/sls'), Type.Null()])),
  idp_entity_id: Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL, description: 'The identity provider\'s entity id (the Issuer of its responses).', examples: ['https://idp.bank.example/adfs/services/trust'] }),
  idp_sso_url: Url('The IdP\'s single sign-on service (HTTP-Redirect binding).', 'https://idp.bank.example/adfs/ls/'),
  idp_slo_url: Type.Optional(Type.Union([Url('The IdP\'s single logout service, for sign-outs started here.', 'https://idp.bank.example/adfs/ls/?wa=wsignout1.0'), Type.Null()])),
  idp_x509cert: Type.String({ minLength: 1, maxLength: 65_536, description: 'The IdP\'s signing certificate, PEM or base64; several PEM blocks during a rotation (any one verifies).' }),
  nameid_format: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: `The NameID format asked for (default persistent: \`${NAMEID_FORMATS.persistent}\`).`, examples: [NAMEID_FORMATS.persistent] })),
  allowed_relay_origins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 50, description: 'Origins a `relay_state` may send the browser back to (no open redirect).', examples: [['https://app.bank.example']] })),
  allow_idp_initiated: Type.Optional(Type.Boolean({ description: 'Accept responses the IdP sends without a request from here (default false).' })),
  clock_skew_sec: Type.Optional(Type.Integer({ minimum: 0, maximum: 600, description: `Tolerance on NotBefore and NotOnOrAfter (default ${SAML_DEFAULTS.clockSkewSec}).` })),
  attribute_map: Type.Optional(AttributeMap),
  group_roles: Type.Optional(GroupRoles),
}, { additionalProperties: false });
type ConfigInput = Static<typeof ConfigBody>;

const ConfigView = Type.Object({
  configured: Type.Boolean({ description: 'Whether SAML is configured (stored or in the variables).' }),
  source: Type.Union([Type.Literal('database'), Type.Literal('environment'), Type.Null()], { description: 'Where the settings in force come from: the stored record wins over SAML_CONFIG_FILE and the SAML_* variables.' }),
  saml_enabled: Type.Boolean(),
  sp_entity_id: Type.Union([Type.String(), Type.Null()]),
  acs_url: Type.Union([Type.String(), Type.Null()]),
  slo_url: Type.Union([Type.String(), Type.Null()]),
  idp_entity_id: Type.Union([Type.String(), Type.Null()]),
  idp_sso_url: Type.Union([Type.String(), Type.Null()]),
  idp_slo_url: Type.Union([Type.String(), Type.Null()]),
  nameid_format: Type.Union([Type.String(), Type.Null()]),
  allowed_relay_origins: Type.Array(Type.String()),
  allow_idp_initiated: Type.Boolean(),
  clock_skew_sec: Type.Integer(),
  attribute_map: Type.Record(Type.String(), Type.Array(Type.String())),
  group_roles: Type.Record(Type.String(), Type.Array(Type.String())),
  idp_certificates: Type.Array(Type.Object({ subject: Type.String(), not_after: Type.String({ format: 'date-time' }), sha256: Type.String() }), { description: 'What identifies each IdP certificate (never the certificate itself unless asked for).' }),
  idp_x509cert: Type.Optional(Type.String({ description: 'The IdP certificates as PEM: only with `?include_certificate=true`.' })),
}, { examples: [{ configured: true, source: 'database', saml_enabled: true, sp_entity_id: 'https://auth.bank.example/saml', acs_url: 'https://auth.bank.example/api/v1/auth/saml/acs', slo_url: 'https://auth.bank.example/api/v1/auth/saml/sls', idp_entity_id: 'https://idp.bank.example', idp_sso_url: 'https://idp.bank.example/sso', idp_slo_url: null, nameid_format: NAMEID_FORMATS.persistent, allowed_relay_origins: ['https://app.bank.example'], allow_idp_initiated: false, clock_skew_sec: 60, attribute_map: { email: ['email'] }, group_roles: { staff: ['Tellers'] }, idp_certificates: [{ subject: 'CN=idp.bank.example', not_after: '2027-06-30T23:59:59.000Z', sha256: 'AB:CD:…' }] }] });

export function samlConfigRoutes(s: SamlConfigRouteDeps): FastifyPluginAsync {
  /** The body as settings, or 400 SAML_CONFIG_INVALID naming each field that is wrong. */
  const settingsOf = (b: ConfigInput): SamlSettings => {
    const certs = certificateBodies(b.idp_x509cert);
    const settings: SamlSettings = {
      enabled: b.saml_enabled ?? true, spEntityId: b.sp_entity_id, acsUrl: b.acs_url, sloUrl: b.slo_url ?? null, idpEntityId: b.idp_entity_id,
      idpSsoUrl: b.idp_sso_url, idpSloUrl: b.idp_slo_url ?? null, idpCerts: certs ?? [], nameIdFormat: b.nameid_format ?? SAML_DEFAULTS.nameIdFormat,
      allowedRelayOrigins: b.allowed_relay_origins ?? [], allowIdpInitiated: b.allow_idp_initiated ?? false, clockSkewSec: b.clock_skew_sec ?? SAML_DEFAULTS.clockSkewSec,
      attributeMap: { ...DEFAULT_ATTRIBUTE_MAP, ...b.attribute_map }, groupRoles: b.group_roles ?? {},
    };
    const fields = samlSettingsProblems(settings, s.production).map((p) => (p.field === 'idp_x509cert' && certs === undefined ? { field: p.field, message: 'is not a certificate (PEM, or its base64 body)' } : p));
    if (fields.length > 0) throw SamlErrors.SAML_CONFIG_INVALID({ fields });
    return settings;
  };

  return async (instance) => {
    const app = instance as unknown as App;
    acceptForms(instance);

    const view = async (includeCertificate: boolean) => {
      const current = await s.samlSettings.current();
      const st = current?.settings;
      const certs = (st?.idpCerts ?? []).map((body) => {
        const x = new X509Certificate(Buffer.from(body, 'base64'));
        return { subject: x.subject.replace(/\n/g, ', '), not_after: new Date(x.validTo).toISOString(), sha256: x.fingerprint256 };
      });
      return {
        configured: current !== null, source: current?.source ?? null, saml_enabled: st?.enabled ?? false,
        sp_entity_id: st?.spEntityId ?? null, acs_url: st?.acsUrl ?? null, slo_url: st?.sloUrl ?? null, idp_entity_id: st?.idpEntityId ?? null,
        idp_sso_url: st?.idpSsoUrl ?? null, idp_slo_url: st?.idpSloUrl ?? null, nameid_format: st?.nameIdFormat ?? null,
        allowed_relay_origins: st?.allowedRelayOrigins ?? [], allow_idp_initiated: st?.allowIdpInitiated ?? false, clock_skew_sec: st?.clockSkewSec ?? SAML_DEFAULTS.clockSkewSec,
        attribute_map: { ...(st?.attributeMap ?? DEFAULT_ATTRIBUTE_MAP) } as Record<string, string[]>, group_roles: (st?.groupRoles ?? {}) as Record<string, string[]>, idp_certificates: certs,
        ...(includeCertificate && st ? { idp_x509cert: st.idpCerts.map(certificatePem).join('') } : {}),
      };
    };

    /** The metadata of the settings in force: 404 when there are none, 500 (logged) when it cannot be made. */
    const metadata = async (): Promise<string> => {
      const current = await s.samlSettings.current();
      if (!current) throw SamlErrors.SAML_NOT_CONFIGURED();
      try {
        // The SP's signing certificates when there is a logout service to sign for (made on first need).
        const certs = current.settings.sloUrl === null ? [] : (await s.samlSpKeys.published()).map((k) => k.certPem);
        return spMetadata(current.settings, certs);
      } catch (err) {
        s.log.error({ err: (err as Error).message, source: current.source }, 'SAML metadata could not be generated from the configuration in force');
        throw SamlErrors.SAML_METADATA_ERROR({}, { cause: err });
      }
    };
    const METADATA_ERRORS = '`404 SAML_NOT_CONFIGURED`: no SAML configuration (stored or in the variables). `500 SAML_METADATA_ERROR`: the configuration in force cannot be described (logged).';
    const EXAMPLE = spMetadata({ spEntityId: 'https://auth.bank.example/saml', acsUrl: 'https://auth.bank.example/api/v1/auth/saml/acs', sloUrl: 'https://auth.bank.example/api/v1/auth/saml/sls', nameIdFormat: NAMEID_FORMATS.persistent } as SamlSettings);

    app.get('/api/v1/auth/saml/metadata', {
      schema: {
        tags, summary: 'This service\'s SAML metadata (public, for the identity provider)',
        description: `The service provider's SAML 2.0 metadata as XML (\`${METADATA_CONTENT_TYPE}\`): entity id, the assertion consumer service (HTTP-POST), the single logout service (HTTP-Redirect and HTTP-POST) when \`slo_url\` is set, and the NameID format asked for. Load it into the bank's IdP (by URL or as a file). ${METADATA_ERRORS}`,
        produces: ['application/samlmetadata+xml'],
        response: { 200: { description: 'SAML 2.0 metadata (XML).', content: { 'application/samlmetadata+xml': { schema: { type: 'string', examples: [EXAMPLE] } } } }, ...errors(SamlErrors.SAML_NOT_CONFIGURED, SamlErrors.SAML_METADATA_ERROR) },
      },
    }, async (_request, reply) => {
      const xml = await metadata();
      return reply.type(METADATA_CONTENT_TYPE).header('cache-control', 'public, max-age=300').send(xml);
    });

    app.post('/api/v1/auth/saml/metadata', {
      schema: {
        tags, summary: 'This service\'s SAML metadata, as JSON (for encrypted clients)',
        description: `The same metadata as \`GET /api/v1/auth/saml/metadata\`, inside JSON so that transport encryption can seal it: \`{"metadata": "<xml>", "content_type": "${METADATA_CONTENT_TYPE}"}\`. No body. ${METADATA_ERRORS}`,
        response: { 200: Type.Object({ metadata: Type.String({ description: 'The metadata XML.' }), content_type: Type.Literal(METADATA_CONTENT_TYPE) }, { examples: [{ metadata: EXAMPLE, content_type: METADATA_CONTENT_TYPE }] }), ...errors(SamlErrors.SAML_NOT_CONFIGURED, SamlErrors.SAML_METADATA_ERROR) },
      },
    }, async () => ({ metadata: await metadata(), content_type: METADATA_CONTENT_TYPE }));

    app.post('/api/v1/auth/saml/config', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'Read or write the SAML configuration (permission config.manage)',
        description: [
          'With no body (or `{}`): the configuration in force and where it comes from; the IdP certificates are described (subject, expiry, SHA-256 fingerprint) and returned as PEM only with `?include_certificate=true`. With a body: validates it, creates or replaces the stored configuration (which then wins over SAML_CONFIG_FILE and the SAML_* variables), audits the change (`SAML_CONFIG_CHANGED`) and tells every node; answers `{"status": "success"}`.',
          '',
          '- `400 SAML_CONFIG_INVALID` (`details.fields`): a certificate that does not parse, a URL that is not absolute (or not `https://` in production), a NameID format that is not a SAML URN, an allowed relay origin that is not an origin, an unknown field or a wrong type.',
          '- `401`, `403 PERMISSION_DENIED`: not an administrator with `config.manage`.',
        ].join('\n'),
        querystring: Type.Object({ include_certificate: Type.Optional(Type.Boolean({ description: 'Also return the IdP certificates as PEM (`idp_x509cert`).' })) }, { additionalProperties: false }),
        body: ConfigBody,
        response: { 200: Type.Union([ConfigView, Type.Object({ status: Type.Literal('success') })]), ...errors(SamlErrors.SAML_CONFIG_INVALID) },
      },
      attachValidation: true,
      onRequest: s.guard.requirePermission('config.manage'),
    }, async (request) => {
      const body = configBody<ConfigInput>(request, SamlErrors.SAML_CONFIG_INVALID);
      // A read's body fails the schema first, so the query string is not coerced: read it as given.
      const include: unknown = request.query.include_certificate;
      if (!body) return view(include === true || include === 'true');
      const settings = settingsOf(body);
      const actor = await requestActor(request, s.users);
      await s.db.transaction().execute(async (trx) => {
        const stored = (await trx.selectFrom('saml_config').select('singleton_key').forUpdate().executeTakeFirst()) !== undefined;
        await s.samlSettings.save(trx, settings, actor.uuid);
        await s.audit.record({
          ...requestAuditContext(request), eventType: 'SAML_CONFIG_CHANGED', status: 'SUCCESS', userId: actor.uuid, username: actor.username,
          details: { created: !stored, enabled: settings.enabled, sp_entity_id: settings.spEntityId, idp_entity_id: settings.idpEntityId, idp_certificates: settings.idpCerts.length },
        }, trx);
      });
      await s.samlSettings.announce();
      return { status: 'success' as const };
    });
  };
}
