/**
 * SPEC "LDAP" routes: `POST /api/v1/auth/ldap/login` (form-encoded as SPEC shows, or JSON) and
 * `POST /api/v1/auth/ldap/config` (read with no body, write with one; permission config.manage,
 * ruling 10).
 */
import { X509Certificate } from 'node:crypto';
import Type, { type Static } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { auditContext, type AuditLog } from '../audit/service.js';
import { LDAP_DEFAULTS, ldapUriProblems } from '../platform/config-ldap.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { acceptForms } from '../platform/http/form.js';
import { configBody, errors, NO_NUL } from '../platform/http/schemas.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import { bodyField } from '../policy/route-limits.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import type { SignInPipeline } from '../signin/pipeline.js';
import { clientContext, SignInResponseSchema } from '../signin/routes.js';
import { useResponseKey } from '../transport/plugin.js';
import type { UserStore } from '../users/store.js';
import { LdapErrors } from './errors.js';
import { UserFilterTemplateError, validateUserFilterTemplate } from './filter.js';
import { groupRoleProblems } from './groups.js';
import { endpointChanges, type LdapEndpoint, type LdapSettingsStore } from './settings.js';
import type { LdapStrategy } from './strategy.js';
import { IDENTITY_ERRORS_LDAP } from '../signin/error-sets.js';

export interface LdapRouteDeps {
  db: Db;
  pipeline: SignInPipeline;
  ldapStrategy: LdapStrategy;
  ldapSettings: LdapSettingsStore;
  ipHasher: Hasher;
  guard: Guard;
  users: UserStore;
  audit: AuditLog;
  production: boolean;
}

const tags = ['LDAP'];

const LoginBody = Type.Object({
  username: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL, description: 'The directory username (what `user_filter`\'s `{username}` stands for).', examples: ['wanjiru.kamau'] })),
  password: Type.Optional(Type.String({ maxLength: 1024, description: 'The directory password. Never empty: an empty password is an anonymous bind that many directories accept.', examples: ['c0rrect-Battery-staple!'] })),
  method: Type.Optional(Type.Literal('simple', { description: 'The LDAP bind method: `simple` (a bind with the DN and password, over TLS when the configuration says so), the only one; absent means `simple`.' })),
  device_fingerprint: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL, description: 'Binds the tokens to this device, as at `POST /api/v1/auth/login`.' })),
}, { additionalProperties: false, examples: [{ username: 'wanjiru.kamau', password: 'c0rrect-Battery-staple!', method: 'simple' }] });

const Attribute = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: 128, pattern: '^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\\.[0-9]+)+)$', description, examples: [example] });
const Dn = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL, description, examples: [example] });

const ConfigBody = Type.Object({
  uri: Type.String({ minLength: 1, maxLength: 512, description: '`ldaps://host[:port]`, or `ldap://host[:port]` with `start_tls` (plain `ldap://` is refused in production: the bind password would travel in clear).', examples: ['ldaps://ldap.bank.example:636'] }),
  bind_dn: Dn('The service account\'s DN.', 'cn=strongroom,ou=services,dc=bank,dc=example'),
  bind_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'The service account\'s password: stored encrypted, never returned or logged. Required the first time, and whenever the URI\'s scheme, host or port, `bind_dn`, `start_tls` or `ca_cert` change (the stored password is never sent anywhere but where it was given for); left out otherwise, the stored one stays.' })),
  base_dn: Dn('Where users are searched (subtree).', 'ou=people,dc=bank,dc=example'),
  user_filter: Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL, description: 'An LDAP filter with `{username}`, which is replaced by the escaped username (RFC 4515).', examples: ['(&(objectClass=inetOrgPerson)(uid={username}))'] }),
  attr_mail: Type.Optional(Attribute('The attribute holding the email (default `mail`).', 'mail')),
  attr_name: Type.Optional(Attribute('The attribute holding the full name (default `cn`).', 'displayName')),
  group_member_attr: Type.Optional(Type.String({ maxLength: 128, pattern: '^(?:|[A-Za-z][A-Za-z0-9-]*)$', description: 'The attribute of the user\'s entry listing the DNs of their groups (default `memberOf`; `isMemberOf` on 389-ds); empty: groups are not read.', examples: ['memberOf'] })),
  // No schema default: `{}` must stay empty (it reads the configuration).
  start_tls: Type.Optional(Type.Boolean({ description: 'Upgrade an `ldap://` connection with StartTLS before any bind (default false).' })),
  ca_cert: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 65_536, description: 'PEM of the CA certificate(s) the directory\'s certificate must chain to; absent or null: the system store. Certificates are always verified.' }), Type.Null()])),
  group_roles: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 1024 }), Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20 }), { description: 'Directory group to role names. A key is a group\'s full DN (matched in any spelling: case, spaces and escapes as RFC 4514 allows), or a short name such as `tellers` that matches the first RDN value of a group under `groups_base_dn` only (a short name needs it). On every sign-in the roles this map names are set from the user\'s groups; other roles are kept.', examples: [{ 'cn=tellers,ou=groups,dc=bank,dc=example': ['staff'], 'branch-agents': ['agent'] }] })),
  groups_base_dn: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL, description: 'The subtree of the groups that short names in `group_roles` stand for: a group elsewhere with the same name (one made in an OU its owner manages, say) grants nothing.', examples: ['ou=groups,dc=bank,dc=example'] }), Type.Null()])),
}, { additionalProperties: false });
type ConfigInput = Static<typeof ConfigBody>;

const ConfigView = Type.Object({
  configured: Type.Boolean({ description: 'Whether directory sign-in can be used.' }),
  source: Type.Union([Type.Literal('database'), Type.Literal('environment'), Type.Null()], { description: 'Where the settings in force come from: the stored record wins over the LDAP_* variables.' }),
  uri: Type.Union([Type.String(), Type.Null()]),
  bind_dn: Type.Union([Type.String(), Type.Null()]),
  base_dn: Type.Union([Type.String(), Type.Null()]),
  user_filter: Type.Union([Type.String(), Type.Null()]),
  attr_mail: Type.Union([Type.String(), Type.Null()]),
  attr_name: Type.Union([Type.String(), Type.Null()]),
  group_member_attr: Type.Union([Type.String(), Type.Null()]),
  start_tls: Type.Boolean(),
  ca_cert: Type.Union([Type.String(), Type.Null()]),
  group_roles: Type.Record(Type.String(), Type.Array(Type.String())),
  groups_base_dn: Type.Union([Type.String(), Type.Null()]),
  bind_password_set: Type.Boolean({ description: 'A bind password is stored or configured; the password itself is never returned.' }),
}, { examples: [{ configured: true, source: 'database', uri: 'ldaps://ldap.bank.example:636', bind_dn: 'cn=strongroom,ou=services,dc=bank,dc=example', base_dn: 'ou=people,dc=bank,dc=example', user_filter: '(uid={username})', attr_mail: 'mail', attr_name: 'cn', group_member_attr: 'memberOf', start_tls: false, ca_cert: null, group_roles: { tellers: ['staff'] }, groups_base_dn: 'ou=groups,dc=bank,dc=example', bind_password_set: true }] });

/** What a configuration body's problems are, and whether one is an attempt to send the stored password elsewhere. */
interface ConfigProblems {
  fields: Array<{ field: string; message: string }>;
  /** The endpoint settings changed without a new bind password. */
  redirected: string[];
}

/** The settings the bind password is given for, as a body states them. */
const endpointOf = (b: ConfigInput): LdapEndpoint => ({ uri: b.uri, bindDn: b.bind_dn, startTls: b.start_tls ?? false, caCert: b.ca_cert ?? undefined });

export function ldapRoutes(s: LdapRouteDeps): FastifyPluginAsync {
  /** Each field that is wrong (beyond the schema's shape). */
  const check = async (trx: Db, b: ConfigInput, stored: LdapEndpoint | undefined): Promise<ConfigProblems> => {
    const fields: Array<{ field: string; message: string }> = [...ldapUriProblems(b.uri, b.start_tls ?? false, s.production)];
    try {
      validateUserFilterTemplate(b.user_filter);
    } catch (err) {
      if (!(err instanceof UserFilterTemplateError)) throw err;
      fields.push({ field: 'user_filter', message: err.message });
    }
    if (b.ca_cert) {
      try {
        new X509Certificate(b.ca_cert);
      } catch {
        fields.push({ field: 'ca_cert', message: 'is not a PEM certificate' });
      }
    }
    // The stored password stays only with the server, account and TLS settings it was given for:
    // re-pointing any of them without it would send it, in clear on a plain connection, to
    // whoever listens there.
    const redirected = b.bind_password !== undefined || stored === undefined ? [] : endpointChanges(stored, endpointOf(b));
    if (b.bind_password === undefined && stored === undefined) fields.push({ field: 'bind_password', message: 'is required the first time' });
    if (redirected.length > 0) fields.push({ field: 'bind_password', message: `is required when ${redirected.join(', ')} change: the stored password is kept only for the server, account and TLS settings it was given for` });
    fields.push(...groupRoleProblems(b.group_roles ?? {}, b.groups_base_dn ?? undefined));
    const known = await s.users.knownRoles(trx);
    const unknownRoles = [...new Set(Object.values(b.group_roles ?? {}).flat())].filter((r) => !known.includes(r));
    if (unknownRoles.length > 0) fields.push({ field: 'group_roles', message: `no role is named ${unknownRoles.map((r) => JSON.stringify(r)).join(', ')}` });
    return { fields, redirected };
  };

  return async (instance) => {
    const app = instance as unknown as App;
    acceptForms(instance);

    app.post('/api/v1/auth/ldap/login', {
      schema: {
        tags, summary: 'Sign in with the bank\'s directory (LDAP)',
        description: [
          'Form-encoded (`application/x-www-form-urlencoded`) or JSON. The directory checks the password (service bind, search with `user_filter`, bind as the entry found); on the first sign-in the account is created from the directory (name, email, roles from groups) and linked to the DN; later sign-ins refresh them. Then the sign-in is every other sign-in\'s: lockout, access policy of the `web` channel, second factor, tokens and session.',
          '',
          '- `400 LDAP_CREDENTIALS_MISSING`: no or an empty `username` or `password` (an empty password is never sent to the directory).',
          '- `401 INVALID_CREDENTIALS`: unknown user or wrong password, answered alike.',
          '- `401 LDAP_UNAVAILABLE`: the directory is unreachable, too slow (`LDAP_TIMEOUT_MS`), refused TLS or the service account; not counted against the user. `401 LDAP_NOT_CONFIGURED`: no configuration.',
          '- `409 IDENTITY_CONFLICT`: a local account already holds this username or email (`details.fields`); an administrator resolves it. Audited.',
          '- `429 ACCOUNT_LOCKED`, `429 RATE_LIMITED`, `403 POLICY_RESTRICTED`, `403 ACCOUNT_DISABLED`, `401 2FA_REQUIRED`, `403 MFA_SETUP_INCOMPLETE`: as at `POST /api/v1/auth/login`.',
          '',
          'A pre-auth route of transport encryption (JSON bodies only).',
        ].join('\n'),
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: LoginBody,
        response: { 200: SignInResponseSchema, ...errors(...IDENTITY_ERRORS_LDAP) },
      },
      config: { rateLimit: { group: 'signin', account: bodyField('username') } },
    }, async (request) => {
      const { username, password, device_fingerprint: fingerprint } = request.body;
      if (!username?.trim() || !password) throw LdapErrors.LDAP_CREDENTIALS_MISSING({ fields: [...(!username?.trim() ? ['username'] : []), ...(!password ? ['password'] : [])] });
      const ctx = clientContext(request, s.ipHasher, 'web', fingerprint);
      const result = await s.pipeline.signIn(s.ldapStrategy, { username, password, audit: auditContext(ctx) }, ctx);
      useResponseKey(request, result.sessionKey);
      return result.body;
    });

    const view = async () => {
      const current = await s.ldapSettings.current();
      const st = current?.settings;
      return {
        configured: current !== null, source: current?.source ?? null,
        uri: st?.uri ?? null, bind_dn: st?.bindDn ?? null, base_dn: st?.baseDn ?? null, user_filter: st?.userFilter ?? null,
        attr_mail: st?.attrMail ?? null, attr_name: st?.attrName ?? null, group_member_attr: st?.groupMemberAttr ?? null,
        start_tls: st?.startTls ?? false, ca_cert: st?.caCert ?? null, group_roles: st?.groupRoles ?? {}, groups_base_dn: st?.groupsBaseDn ?? null, bind_password_set: (st?.bindPassword ?? '') !== '',
      };
    };

    app.post('/api/v1/auth/ldap/config', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'Read or write the LDAP configuration (permission config.manage)',
        description: [
          'With no body (or `{}`): the configuration in force and where it comes from, never the bind password. With a body: validates it, creates or replaces the stored configuration (which then wins over the LDAP_* variables), audits the change (`LDAP_CONFIG_CHANGED`, without secrets) and tells every node; answers `{"status": "success"}`.',
          '',
          '- `400 LDAP_CONFIG_INVALID` (`details.fields`): a URI that is not `ldap(s)://host[:port]`, a `user_filter` without `{username}` or that does not parse, a CA that is not a PEM certificate, a role that does not exist, a group DN that does not parse, short group names without `groups_base_dn`, no `bind_password` the first time or with a changed server (scheme, host or port), `bind_dn`, `start_tls` or `ca_cert` (the attempt is audited as a failed `LDAP_CONFIG_CHANGED`), plain `ldap://` in production; `400 VALIDATION_ERROR`-shaped problems (an unknown field, a wrong type) are `400 LDAP_CONFIG_INVALID` too.',
          '- `401`, `403 PERMISSION_DENIED`: not an administrator with `config.manage`.',
        ].join('\n'),
        body: ConfigBody,
        response: { 200: Type.Union([ConfigView, Type.Object({ status: Type.Literal('success') })]), ...errors(LdapErrors.LDAP_CONFIG_INVALID) },
      },
      attachValidation: true,
      onRequest: s.guard.requirePermission('config.manage'),
    }, async (request) => {
      const body = configBody<ConfigInput>(request, LdapErrors.LDAP_CONFIG_INVALID);
      if (!body) return view();
      const actor = await requestActor(request, s.users);
      const summary = { uri: body.uri, bind_dn: body.bind_dn, base_dn: body.base_dn, groups_base_dn: body.groups_base_dn ?? null };
      const problems = await s.db.transaction().execute(async (trx) => {
        const stored = await s.ldapSettings.storedEndpoint(trx);
        const found = await check(trx, body, stored);
        if (found.fields.length > 0) return found;
        await s.ldapSettings.save(trx, {
          ...endpointOf(body), bindPassword: body.bind_password, baseDn: body.base_dn, userFilter: body.user_filter,
          attrMail: body.attr_mail ?? LDAP_DEFAULTS.attrMail, attrName: body.attr_name ?? LDAP_DEFAULTS.attrName,
          groupMemberAttr: body.group_member_attr ?? LDAP_DEFAULTS.groupMemberAttr,
          groupRoles: body.group_roles ?? {}, groupsBaseDn: body.groups_base_dn ?? undefined,
        }, actor.uuid);
        await s.audit.record({
          ...requestAuditContext(request), eventType: 'LDAP_CONFIG_CHANGED', status: 'SUCCESS', userId: actor.uuid, username: actor.username,
          details: { created: !stored, ...summary, bind_password_changed: body.bind_password !== undefined, endpoint_changed: stored === undefined ? [] : endpointChanges(stored, endpointOf(body)), group_roles: Object.keys(body.group_roles ?? {}).length },
        }, trx);
        return null;
      });
      if (problems) {
        // An attempt to send the stored password elsewhere is worth a record of its own.
        if (problems.redirected.length > 0) {
          await s.audit.record({
            ...requestAuditContext(request), eventType: 'LDAP_CONFIG_CHANGED', status: 'FAILURE', userId: actor.uuid, username: actor.username,
            details: { reason: 'bind_password_required', changed: problems.redirected, ...summary },
          });
        }
        throw LdapErrors.LDAP_CONFIG_INVALID({ fields: problems.fields });
      }
      await s.ldapSettings.announce();
      return { status: 'success' as const };
    });
  };
}
