/**
 * SPEC "Unified third-party login": `POST /api/v1/auth/third-party/login`, one endpoint for the
 * sign-in methods whose identity lives with another system. `provider` chooses: `ldap` signs in
 * with the directory exactly as `POST /api/v1/auth/ldap/login` (same strategy, pipeline, errors),
 * `saml` starts a sign-in at the IdP exactly as `POST /api/v1/auth/saml/login`. Bodies are in
 * the route's schema and docs/decisions.md "Third-party login".
 */
import Type from 'typebox';
import { auditContext } from '../audit/service.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import type { Module } from '../platform/module.js';
import { bodyField } from '../policy/route-limits.js';
import { LdapErrors } from '../ldap/errors.js';
import type { LdapStrategy } from '../ldap/strategy.js';
import { SamlStartedSchema, type SamlStart } from '../saml/signin-routes.js';
import type { SignInPipeline } from '../signin/pipeline.js';
import { clientContext, SignInResponseSchema } from '../signin/routes.js';
import { useResponseKey } from '../transport/plugin.js';
import { ThirdPartyErrors } from './errors.js';
import { IDENTITY_ERRORS_LDAP } from '../signin/error-sets.js';
import { SamlErrors } from '../saml/errors.js';

export interface ThirdPartyDeps {
  pipeline: SignInPipeline;
  ldapStrategy: LdapStrategy;
  samlStart: SamlStart;
  ipHasher: Hasher;
}

const Body = Type.Object({
  provider: Type.Union([Type.Literal('ldap'), Type.Literal('saml')], { description: '`ldap`: sign in with the directory now; `saml`: start a sign-in at the identity provider.' }),
  username: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL, description: '`ldap` only: the directory username.' })),
  password: Type.Optional(Type.String({ maxLength: 1024, description: '`ldap` only: the directory password (never empty).' })),
  device_fingerprint: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL, description: '`ldap` only: binds the tokens to this device.' })),
  relay_state: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description: '`saml` only: where the browser lands afterwards (an allowed origin).' })),
  channel: Type.Optional(Type.Union([Type.Literal('web'), Type.Literal('mobile'), Type.Literal('agent')], { description: '`saml` only: the channel whose access policy applies (default `web`).' })),
}, {
  additionalProperties: false,
  examples: [{ provider: 'ldap', username: 'wanjiru.kamau', password: 'c0rrect-Battery-staple!' }, { provider: 'saml', relay_state: 'https://app.bank.example/after-login', channel: 'web' }],
});

const LDAP_ONLY = ['username', 'password', 'device_fingerprint'] as const;
const SAML_ONLY = ['relay_state', 'channel'] as const;

export function thirdPartyModule(deps: ThirdPartyDeps): Module<Record<string, never>> {
  return {
    name: 'third-party',
    provides: {},
    tags: [{ name: 'Third-party sign-in', description: 'One endpoint for the sign-in methods whose identity another system keeps (LDAP, SAML).' }],
    routes: async (instance) => {
      const app = instance as unknown as App;
      app.post('/api/v1/auth/third-party/login', {
        schema: {
          tags: ['Third-party sign-in'], summary: 'Sign in with the directory, or start a sign-in at the identity provider',
          description: [
            'JSON. `provider` chooses the method, and the answer is that method\'s own:',
            '',
            '- `ldap` with `username` and `password` (and `device_fingerprint`): the sign-in success response, as `POST /api/v1/auth/ldap/login`, with its errors (`400 LDAP_CREDENTIALS_MISSING`, `401 INVALID_CREDENTIALS`, `401 LDAP_UNAVAILABLE`, `409 IDENTITY_CONFLICT`, lockout, policy, second factor).',
            '- `saml` with `relay_state` and `channel`: the IdP URL to send the browser to, as `POST /api/v1/auth/saml/login` (`token_type: "saml_redirect"`), with its errors (`404 SAML_NOT_CONFIGURED`, `422 SAML_RELAY_STATE_NOT_ALLOWED`) and, with a `relay_state`, its browser-binding cookie (call it from the browser that goes to the IdP).',
            '',
            '- `422 THIRD_PARTY_FIELD_NOT_ALLOWED` (`details.fields`): a field of the other provider (a password sent with `saml` is refused, not ignored).',
            '',
            'Rate limited as every sign-in (`signin` group; per account by `username`). A pre-auth route of transport encryption.',
          ].join('\n'),
          body: Body,
          response: { 200: Type.Union([SignInResponseSchema, SamlStartedSchema]), ...errors(...IDENTITY_ERRORS_LDAP, SamlErrors.SAML_NOT_CONFIGURED, SamlErrors.SAML_RELAY_STATE_NOT_ALLOWED, ThirdPartyErrors.THIRD_PARTY_FIELD_NOT_ALLOWED) },
        },
        config: { rateLimit: { group: 'signin', account: bodyField('username') } },
      }, async (request, reply) => {
        const b = request.body;
        const foreign = (b.provider === 'ldap' ? SAML_ONLY : LDAP_ONLY).filter((f) => b[f] !== undefined);
        if (foreign.length > 0) throw ThirdPartyErrors.THIRD_PARTY_FIELD_NOT_ALLOWED({ provider: b.provider, fields: foreign });
        if (b.provider === 'saml') return deps.samlStart({ relayUrl: b.relay_state ?? null, channel: b.channel ?? 'web', reply });
        const { username, password } = b;
        if (!username?.trim() || !password) throw LdapErrors.LDAP_CREDENTIALS_MISSING({ fields: [...(!username?.trim() ? ['username'] : []), ...(!password ? ['password'] : [])] });
        const ctx = clientContext(request, deps.ipHasher, 'web', b.device_fingerprint);
        const result = await deps.pipeline.signIn(deps.ldapStrategy, { username, password, audit: auditContext(ctx) }, ctx);
        useResponseKey(request, result.sessionKey);
        return result.body;
      });
    },
  };
}
