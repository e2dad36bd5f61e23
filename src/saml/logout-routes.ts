/**
 * SPEC "SAML" `saml/sls` (method and body not shown by SPEC: both HTTP-Redirect as GET and
 * HTTP-POST as a form, as IdPs send them) and `POST saml/logout`, the sign-out that goes on to
 * the IdP. The work is src/saml/logout.ts.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { auditContext, type AuditLog } from '../audit/service.js';
import type { SamlSettings } from '../platform/config-saml.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { acceptForms } from '../platform/http/form.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { clientContext } from '../signin/routes.js';
import type { Denylist } from '../tokens/denylist.js';
import type { UserStore } from '../users/store.js';
import { SamlErrors } from './errors.js';
import type { SamlLogout, SlsMessage } from './logout.js';
import type { SamlSettingsStore } from './settings.js';
import { relayAllowed } from './signin-routes.js';

export interface SamlLogoutRouteDeps {
  db: Db;
  samlSettings: SamlSettingsStore;
  /** The single-logout service, loaded with the SAML library on first use. */
  logout: () => Promise<SamlLogout>;
  sessions: SessionService;
  denylist: Denylist;
  guard: Guard;
  users: UserStore;
  audit: AuditLog;
  ipHasher: Hasher;
}

const tags = ['SAML'];
const Field = (description: string) => Type.Optional(Type.String({ maxLength: 262_144, description }));
const SlsFields = {
  SAMLRequest: Field('A LogoutRequest from the IdP (Redirect: deflated, base64; POST: base64).'),
  SAMLResponse: Field('The IdP\'s LogoutResponse to a sign-out started here.'),
  RelayState: Type.Optional(Type.String({ maxLength: 2048 })),
};

const SLS_DESCRIPTION = [
  'The IdP\'s side of single logout. A **LogoutRequest** (the person signed out at the IdP or another service): it must be signed by the configured IdP (HTTP-Redirect: `SigAlg` RSA-SHA256 and `Signature` over the query, required; HTTP-POST: an enveloped signature), come from its entity id, name this SLS (`slo_url`) as its `Destination`, have an `IssueInstant` within `clock_skew_sec` of our clock (and a `NotOnOrAfter`, when given, not passed), and is accepted once (its ID, on any node); every session here that came from that IdP session ends (its NameID, and its SessionIndex when the request names one), audited as `SAML_LOGOUT`; the answer is `302` to the IdP\'s SLO URL with our LogoutResponse, signed with the SP key of the metadata (or `200 {"status":"success","sessions_ended":n}` when no `idp_slo_url` is configured).',
  '',
  'A **LogoutResponse** (to a sign-out started at `POST /api/v1/auth/saml/logout`): signed, from the IdP, to this SLS, fresh (as above), status Success, answering a sign-out this service sent and nobody answered yet; `303` to that sign-out\'s `relay_state`, or `200 {"status":"success"}`.',
  '',
  '- `401 SAML_INVALID_SIGNATURE`, `401 SAML_VALIDATION_FAILED` (`details.reason`: malformed, doctype, issuer, destination, subject, not_yet_valid, expired, replayed, status, in_response_to, rejected). Nothing ends on a refusal. `404 SAML_NOT_CONFIGURED`.',
].join('\n');

export function samlLogoutRoutes(s: SamlLogoutRouteDeps): FastifyPluginAsync {
  const enabled = async (): Promise<SamlSettings> => {
    const current = await s.samlSettings.current();
    if (!current?.settings.enabled) throw SamlErrors.SAML_NOT_CONFIGURED();
    return current.settings;
  };

  const answer = async (message: SlsMessage, request: Parameters<typeof clientContext>[0], reply: FastifyReply) => {
    const settings = await enabled();
    if (message.fields.SAMLRequest !== undefined) {
      const { redirect, ended } = await (await s.logout()).idpRequest(settings, message, auditContext(clientContext(request, s.ipHasher, 'web')));
      if (redirect !== null) return reply.code(302).header('location', redirect).send(null);
      return reply.send({ status: 'success', sessions_ended: ended });
    }
    if (message.fields.SAMLResponse !== undefined) {
      const sent = await (await s.logout()).idpResponse(settings, message);
      if (sent.relayUrl !== null) return reply.code(303).header('location', sent.relayUrl).send(null);
      return reply.send({ status: 'success' });
    }
    throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'malformed' });
  };

  const responses = {
    200: Type.Object({ status: Type.Literal('success'), sessions_ended: Type.Optional(Type.Integer()) }, { examples: [{ status: 'success', sessions_ended: 1 }] }),
    302: Type.Null({ description: 'To the IdP\'s SLO URL with our signed LogoutResponse.' }),
    303: Type.Null({ description: 'To the sign-out\'s relay_state.' }),
    ...errors(SamlErrors.SAML_NOT_CONFIGURED, SamlErrors.SAML_VALIDATION_FAILED, SamlErrors.SAML_INVALID_SIGNATURE),
  };

  return async (instance) => {
    const app = instance as unknown as App;
    acceptForms(instance);

    app.get('/api/v1/auth/saml/sls', {
      schema: {
        tags, summary: 'Single logout service, HTTP-Redirect binding (the IdP\'s LogoutRequest or LogoutResponse)', description: SLS_DESCRIPTION,
        querystring: Type.Object({ ...SlsFields, SigAlg: Type.Optional(Type.String({ maxLength: 256 })), Signature: Type.Optional(Type.String({ maxLength: 4096 })) }),
        response: responses,
      },
      config: { rateLimit: { group: 'signin' } },
    }, async (request, reply) => answer({ binding: 'redirect', fields: request.query, rawQuery: request.url.split('?')[1] ?? '' }, request, reply));

    app.post('/api/v1/auth/saml/sls', {
      bodyLimit: 256 * 1024,
      schema: {
        tags, summary: 'Single logout service, HTTP-POST binding', description: SLS_DESCRIPTION,
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object(SlsFields),
        response: responses,
      },
      config: { rateLimit: { group: 'signin' } },
    }, async (request, reply) => answer({ binding: 'post', fields: request.body, rawQuery: '' }, request, reply));

    app.post('/api/v1/auth/saml/logout', {
      schema: {
        tags, security: [{ bearer: [] }], summary: 'Sign out here and at the identity provider',
        description: [
          'Ends the caller\'s session here at once, as `POST /api/v1/auth/logout` does (the access token is denylisted, the refresh tokens revoked), and, when the session came from a SAML sign-in and the IdP has an SLO URL (`idp_slo_url`), answers `redirect_url`: the IdP\'s single logout service with our signed LogoutRequest (NameID and SessionIndex of that sign-in). Send the browser there; the IdP signs the person out of its other services and returns to `saml/sls`, which sends the browser to `relay_state`.',
          '',
          '- `relay_state`: where the browser lands after the IdP; on an allowed origin (`422 SAML_RELAY_STATE_NOT_ALLOWED`). `redirect_url` is null for a session not from SAML, or with SAML off.',
        ].join('\n'),
        body: Type.Object({ relay_state: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL })) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ status: Type.Literal('success'), sessions_ended: Type.Integer(), redirect_url: Type.Union([Type.String(), Type.Null()]) }, { examples: [{ status: 'success', sessions_ended: 1, redirect_url: 'https://idp.bank.example/slo?SAMLRequest=fZJBb…&RelayState=_5b1d…&SigAlg=…&Signature=…' }] }),
          ...errors(SamlErrors.SAML_RELAY_STATE_NOT_ALLOWED),
        },
      },
      config: { rateLimit: { group: 'token' } },
      preValidation: async (request) => {
        request.body ??= {};
      },
      onRequest: s.guard.authenticate,
    }, async (request) => {
      const auth = request.auth!;
      const ctx = clientContext(request, s.ipHasher, auth.session.channel);
      const settings = (await s.samlSettings.current())?.settings;
      const relayUrl = request.body.relay_state ?? null;
      if (relayUrl !== null && !relayAllowed(relayUrl, settings?.allowedRelayOrigins ?? [])) throw SamlErrors.SAML_RELAY_STATE_NOT_ALLOWED({ allowed_origins: settings?.allowedRelayOrigins ?? [] });
      // The IdP's URL first (it reads which IdP session this was), then the session ends.
      const redirect = settings?.enabled ? await (await s.logout()).start(settings, auth.session.sessionId, { relayUrl, channel: auth.session.channel }) : null;
      const expiresAt = auth.claims.exp * 1000;
      const user = await s.users.findByUuid(auth.claims.user_id);
      await s.db.transaction().execute(async (trx) => {
        await s.denylist.spend(auth.claims.jti, expiresAt, 'logout', trx);
        await s.sessions.endMany(trx, [auth.session.sessionId], 'logout', auth.session.userId);
        await s.audit.record({ eventType: 'LOGOUT', status: 'SUCCESS', userId: auth.claims.user_id, username: user?.username ?? null, ...auditContext(ctx), details: { all_sessions: false, sessions_ended: [auth.session.sessionId], idp_logout: redirect !== null } }, trx);
      });
      await s.denylist.announce(auth.claims.jti, expiresAt);
      await s.sessions.announce([auth.session.sessionId]);
      return { status: 'success' as const, sessions_ended: 1, redirect_url: redirect };
    });
  };
}
