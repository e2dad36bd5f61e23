/**
 * The operator's settings, read and tried (permission config.manage, like the LDAP and SAML
 * configuration routes): `POST /api/v1/admin/ldap/test` (the directory connection test, audited
 * as `LDAP_CONNECTION_TESTED` and rate limited in the `account` group, since it reaches out to the
 * directory from the server),
 * `GET /api/v1/admin/rate-limits` (the limits in force and their routes) and
 * `GET /api/v1/admin/keys` (the keys, their ages and rotation; never key material).
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { LdapSettingsStore } from '../ldap/settings.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, signedInAccount, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { SettingsErrors } from './errors.js';
import type { KeyInventory } from './keys.js';
import { testDirectory } from './ldap-test.js';
import type { RateLimitCatalogue } from './rate-limits.js';

export interface SettingsRouteDeps {
  guard: Guard;
  audit: AuditLog;
  users: Pick<UserStore, 'findByUuid'>;
  ldapSettings: LdapSettingsStore;
  ldapTimeoutMs: number;
  rateLimits: RateLimitCatalogue;
  inventory: KeyInventory;
}

const tags = ['Settings'];
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const LdapTestBody = Type.Object({
  username: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL, description: 'A directory username to look up with `user_filter` (its entry, mail, name, groups and the roles they map to). No password: the user is never bound as.', examples: ['wanjiru.kamau'] })),
}, { additionalProperties: false, examples: [{ username: 'wanjiru.kamau' }, {}] });

const STEP_EXAMPLE = [
  { step: 'connect', outcome: 'passed', reason: null, detail: 'ldap.bank.example:636 accepts connections' },
  { step: 'tls', outcome: 'passed', reason: null, detail: 'TLSv1.3, certificate of ldap.bank.example verified' },
  { step: 'bind', outcome: 'passed', reason: null, detail: 'bound as cn=strongroom,ou=services,dc=bank,dc=example' },
  { step: 'search', outcome: 'passed', reason: null, detail: 'uid=wanjiru.kamau,ou=people,dc=bank,dc=example' },
  { step: 'groups', outcome: 'passed', reason: null, detail: '1 in memberOf; roles: staff' },
];

const LdapTestResult = Type.Object({
  ok: Type.Boolean({ description: 'Every step that ran passed.' }),
  source: Type.Union([Type.Literal('database'), Type.Literal('environment')], { description: 'Where the settings tried come from.' }),
  uri: Type.String({ description: 'The directory tried.' }),
  steps: Type.Array(Type.Object({
    step: Type.String({ enum: ['connect', 'tls', 'bind', 'search', 'groups'], description: '`connect`: the server accepts a TCP connection; `tls`: ldaps:// or StartTLS with the certificate verified; `bind`: the service account\'s bind; `search`: the username\'s entry; `groups`: its groups and the roles they map to.' }),
    outcome: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('skipped')]),
    reason: Type.Union([Type.String({ enum: ['unreachable', 'timeout', 'tls_failed', 'no_tls', 'credentials_refused', 'directory_error', 'user_not_found', 'user_ambiguous', 'no_username', 'not_read', 'earlier_step_failed'] }), Type.Null()], { description: 'Why a step failed or was skipped; null when it passed.' }),
    detail: Type.String({ description: 'What the network or the directory said, or what was found (English). Never the bind password.' }),
  })),
  user: Type.Union([Type.Object({
    dn: Type.String(), mail: Nullable(Type.String()), name: Nullable(Type.String()),
    groups: Type.Array(Type.String()), roles: Type.Array(Type.String({ description: 'What the group-role map gives these groups.' })),
  }), Type.Null()], { description: 'The entry found for `username`; null without one.' }),
}, { examples: [{ ok: true, source: 'database', uri: 'ldaps://ldap.bank.example:636', steps: STEP_EXAMPLE, user: { dn: 'uid=wanjiru.kamau,ou=people,dc=bank,dc=example', mail: 'wanjiru@bank.example', name: 'Wanjiru Kamau', groups: ['cn=tellers,ou=groups,dc=bank,dc=example'], roles: ['staff'] } }] });

const Limit = Type.Union([Type.Object({
  limit: Type.Integer({ description: 'Requests allowed in one window.' }),
  window_sec: Type.Integer({ description: 'The fixed window, in seconds.' }),
  variable: Type.String({ description: 'The variable that sets it.' }),
  source: Type.Union([Type.Literal('default'), Type.Literal('configured')], { description: '`default`: the service\'s value; `configured`: set by the variable.' }),
}), Type.Null()], { description: 'null: not counted this way (`off`).' });

const RateLimitsView = Type.Object({
  groups: Type.Array(Type.Object({
    group: Type.String({ examples: ['signin'] }),
    per_client: Limit,
    per_account: Limit,
    routes: Type.Array(Type.Object({ method: Type.String(), url: Type.String() }), { description: 'The routes the group counts.' }),
  })),
}, { examples: [{ groups: [{ group: 'signin', per_client: { limit: 30, window_sec: 60, variable: 'RATE_LIMIT_SIGNIN_IP', source: 'default' }, per_account: { limit: 10, window_sec: 60, variable: 'RATE_LIMIT_SIGNIN_ACCOUNT', source: 'default' }, routes: [{ method: 'POST', url: '/api/v1/auth/login' }] }] }] });

const DateOrNull = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const KeysView = Type.Object({
  keys: Type.Array(Type.Object({
    kind: Type.String({ enum: ['jwt_signing', 'transport', 'field_encryption', 'blind_index', 'ip_hash', 'saml_sp'], description: 'What the key is for: signing tokens, transport encryption, encrypting personal data at rest, the blind indexes that find encrypted values, hashing client addresses, the SAML SP\'s signatures.' }),
    id: Type.String({ description: 'The key\'s id (a JWT `kid`, the transport `key_id`, a blind index\'s prefix) or a short fingerprint: never key material.' }),
    algorithm: Type.String({ examples: ['RSA-2048'] }),
    status: Type.String({ enum: ['current', 'verifying', 'accepted', 'published', 'previous'], description: '`current`: used for new work; `verifying` (JWT), `accepted` (transport, until `expires_at`), `published` (SAML SP metadata): an older key still honoured; `previous`: an old field key still read during a rotation.' }),
    created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null: a key given by the environment, whose age the service is not told.' }),
    age_days: Type.Union([Type.Integer(), Type.Null()]),
    expires_at: DateOrNull,
    rotation_due_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the rotation period (JWT_KEY_ROTATION_DAYS, TRANSPORT_KEY_ROTATION_DAYS) ends for a current key; null: no period.' }),
    rotation_due: Type.Union([Type.Boolean(), Type.Null()]),
    rotation: Type.Union([Type.Literal('automatic'), Type.Literal('manual'), Type.Literal('none')], { description: '`automatic`: the service rotates it on its period, the command sooner; `manual`: only the command; `none`: no rotation.' }),
    rotate_command: Type.Union([Type.String(), Type.Null()], { description: 'The CLI command that rotates it (docs/operations.md).' }),
    certificate_unreadable: Type.Optional(Type.Literal(true, { description: 'Present only on a `saml_sp` key whose stored certificate cannot be read (does not parse): listed with its id and dates, `algorithm` `unknown`; rotate it (`strongroom rotate-saml-sp-key`).' })),
  })),
}, { examples: [{ keys: [{ kind: 'jwt_signing', id: '3f2a9c1d0b7e6a54', algorithm: 'HS256', status: 'current', created_at: '2026-10-01T09:00:00.000Z', age_days: 12, expires_at: null, rotation_due_at: '2026-12-30T09:00:00.000Z', rotation_due: false, rotation: 'automatic', rotate_command: 'strongroom rotate-keys' }] }] });

export function settingsRoutes(s: SettingsRouteDeps): FastifyPluginAsync {
  const manage = s.guard.requirePermission('config.manage');
  return async (instance) => {
    const app = instance as unknown as App;

    app.post('/api/v1/admin/ldap/test', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'Test the directory connection (permission config.manage)',
        description: [
          'Tries the LDAP settings in force on a connection of its own, step by step, and says what worked: the server reachable, TLS (ldaps:// or StartTLS, the certificate verified), the service account\'s bind, and with `username` the search for that user and the groups read from the entry, with the roles the group-role map gives them. Changes nothing; never binds as the user; never returns the bind password. A failed step is a `200` with `ok: false`, the step `failed` and its `reason`. The whole test has one time budget (LDAP_TIMEOUT_MS, as a sign-in has): a step still running when it ends fails with `reason: timeout`. Each run is audited (`LDAP_CONNECTION_TESTED`: who, the username tested if any, and the outcome with the first failed step), `SUCCESS` when `ok`, else `FAILURE`.',
          '',
          '- `409 LDAP_TEST_NOT_CONFIGURED`: no LDAP configuration (stored or in the LDAP_* variables).',
          '- `401`, `403 PERMISSION_DENIED`: not an administrator with `config.manage`.',
        ].join('\n'),
        body: LdapTestBody,
        response: { 200: LdapTestResult, ...errors(SettingsErrors.LDAP_TEST_NOT_CONFIGURED) },
      },
      onRequest: manage,
      // It makes the server open connections to the directory: counted per address and per administrator.
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const current = await s.ldapSettings.current();
      if (!current) throw SettingsErrors.LDAP_TEST_NOT_CONFIGURED();
      const result = await testDirectory(current.settings, request.body.username, s.ldapTimeoutMs);
      const actor = await requestActor(request, s.users);
      const failed = result.steps.find((step) => step.outcome === 'failed');
      await s.audit.record({
        ...requestAuditContext(request), eventType: 'LDAP_CONNECTION_TESTED', status: result.ok ? 'SUCCESS' : 'FAILURE', userId: actor.uuid, username: actor.username,
        details: {
          uri: current.settings.uri, source: current.source, tested_username: request.body.username ?? null,
          outcome: result.ok ? 'passed' : 'failed', failed_step: failed?.step ?? null, reason: failed?.reason ?? null,
        },
      });
      return { ...result, source: current.source, uri: current.settings.uri };
    });

    app.get('/api/v1/admin/rate-limits', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'The rate limits in force (permission config.manage)',
        description: 'Each group of the authentication routes\' rate limits: its limit per client (a client network; for `ussd`, the gateway) and per account, each in a fixed window shared by every node, the `RATE_LIMIT_<GROUP>_<IP|ACCOUNT>` variable that sets it and whether it was set, and the routes the group counts. Read-only: the variables change them, at a restart.\n\n- `401`, `403 PERMISSION_DENIED`: not an administrator with `config.manage`.',
        response: { 200: RateLimitsView },
      },
      onRequest: manage,
    }, async () => ({ groups: s.rateLimits.view() }));

    app.get('/api/v1/admin/keys', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'The keys the service holds and their ages (permission config.manage)',
        description: 'The JWT signing keys, the transport key pairs, the field-encryption, blind-index and IP-hash keys, and the SAML service provider\'s signing keys: an id or fingerprint, the algorithm, when each was made and its age, whether its rotation is due under the rotation period, and the CLI command that rotates it. Never key material.\n\n- `401`, `403 PERMISSION_DENIED`: not an administrator with `config.manage`.',
        response: { 200: KeysView },
      },
      onRequest: manage,
    }, async () => ({ keys: await s.inventory.list() }));
  };
}
