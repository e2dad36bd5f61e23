/**
 * SPEC "SAML" routes of a sign-in: start it (`POST saml/login`), consume the IdP's response
 * (`POST saml/acs`), and, for a browser that posted the IdP's form, the one-time code's
 * exchange for the tokens (`GET saml/exchange`) or for the second-factor challenge
 * (`GET saml/pending-2fa`). A browser sign-in is bound to the browser that started it
 * (src/saml/browser-binding.ts), and an IdP-initiated response into a browser is bounced back to
 * the IdP as one. docs/decisions.md "SAML" explains the flow.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { auditContext } from '../audit/service.js';
import type { SamlSettings } from '../platform/config-saml.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import { AppError } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { acceptForms } from '../platform/http/form.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import type { Clock } from '../platform/clock.js';
import type { FinishOptions, SignInPipeline } from '../signin/pipeline.js';
import { clientContext, SignInResponseSchema } from '../signin/routes.js';
import { useResponseKey } from '../transport/plugin.js';
import type { UserStore } from '../users/store.js';
import { browserNonce, clearBinding, newBrowserBinding } from './browser-binding.js';
import { CODE_TTL_MS, type PendingSignIn, type SamlCodes } from './codes.js';
import { browserBound, type SamlConsumer } from './consumer.js';
import { SamlErrors } from './errors.js';
import { REQUEST_TTL_MS, type SamlRequests } from './requests.js';
import type { SamlSettingsStore } from './settings.js';
import type { SamlStrategy } from './strategy.js';
import { ADMISSION_ERRORS } from '../signin/error-sets.js';
import { SignInErrors } from '../signin/errors.js';

/** What starting a SAML sign-in answers (SPEC's `access_token` is the IdP URL). */
export interface SamlStarted {
  access_token: string;
  redirect_url: string;
  token_type: 'saml_redirect';
  request_id: string;
  expires_in: number;
}

/**
 * Starts a SAML sign-in: 404 SAML_NOT_CONFIGURED, 422 SAML_RELAY_STATE_NOT_ALLOWED, else the IdP URL.
 * A browser sign-in (a `relayUrl`) is bound to the browser: the browser-binding cookie is set on
 * `reply` (src/saml/browser-binding.ts). A route that starts one must pass its reply: without it the
 * request is recorded unbound, and the assertion consumer refuses its response (`browser_binding`).
 */
export type SamlStart = (purpose: { relayUrl: string | null; channel: string; reply?: FastifyReply }) => Promise<SamlStarted>;

export function samlStarter(settingsStore: SamlSettingsStore, requests: SamlRequests): SamlStart {
  return async ({ relayUrl, channel, reply }) => {
    const current = await settingsStore.current();
    if (!current?.settings.enabled) throw SamlErrors.SAML_NOT_CONFIGURED();
    const settings = current.settings;
    if (relayUrl !== null && !relayAllowed(relayUrl, settings.allowedRelayOrigins)) throw SamlErrors.SAML_RELAY_STATE_NOT_ALLOWED({ allowed_origins: settings.allowedRelayOrigins });
    const binding = relayUrl !== null && reply ? newBrowserBinding(settings.acsUrl) : null;
    // The SAML library (./client.js and what it imports) is loaded by the first sign-in, not at start.
    const { authnRequestUrl } = await import('./client.js');
    const { url, requestId } = await authnRequestUrl(settings, requests, { relayUrl, channel, browserBinding: binding?.hash ?? null });
    // Only once the request is recorded: a failed start leaves an earlier login's cookie alone.
    if (binding && reply) reply.header('set-cookie', binding.setCookie);
    return { access_token: url, redirect_url: url, token_type: 'saml_redirect', request_id: requestId, expires_in: REQUEST_TTL_MS / 1000 };
  };
}

/** The schema of what starting a SAML sign-in answers. */
export const SamlStartedSchema = Type.Object({
  access_token: Type.String({ description: 'The IdP URL to send the browser to (the field\'s historical name; `redirect_url` holds the same URL).' }),
  redirect_url: Type.String({ description: 'The same URL.' }),
  token_type: Type.Literal('saml_redirect', { description: 'Says that `access_token` is a URL to visit, not a bearer token.' }),
  request_id: Type.String({ description: 'The AuthnRequest\'s ID (its InResponseTo in the answer).' }),
  expires_in: Type.Integer({ description: 'Seconds the request stays valid.' }),
}, { examples: [{ access_token: 'https://idp.bank.example/sso?SAMLRequest=fZJNb4Mw…&RelayState=_8f1c…', redirect_url: 'https://idp.bank.example/sso?SAMLRequest=fZJNb4Mw…&RelayState=_8f1c…', token_type: 'saml_redirect', request_id: '_8f1c2a7e40b5d9c3e1f2a4b6c8d0e2f4a6b8c0d2', expires_in: 600 }] });

export interface SamlSignInRouteDeps {
  samlStart: SamlStart;
  db: Db;
  clock: Clock;
  samlSettings: SamlSettingsStore;
  consumer: SamlConsumer;
  codes: SamlCodes;
  samlStrategy: SamlStrategy;
  pipeline: SignInPipeline;
  users: UserStore;
  ipHasher: Hasher;
}

const tags = ['SAML'];

/** The largest SAMLResponse form accepted (the IdP's signed XML, base64): 256 KiB; more is 413 PAYLOAD_TOO_LARGE. */
export const ACS_BODY_LIMIT = 256 * 1024;

/** Whether `url` is an absolute http(s) URL on one of `origins` (compared as the URL parser normalises them). */
export function relayAllowed(url: string, origins: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.username === '' && parsed.password === '' && origins.includes(parsed.origin);
}

const CODE_HEADER = 'x-saml-code';
const CodeHeaders = Type.Object({
  [CODE_HEADER]: Type.String({ minLength: 1, maxLength: 128, description: 'The one-time code the assertion consumer put in the redirect\'s fragment (`#saml_code=...`). A header, not a query parameter: codes stay out of URLs and logs.' }),
});

/** The code header (the route's schema has checked it is there). */
const codeOf = (request: FastifyRequest): string => String(request.headers[CODE_HEADER]);

export function samlSignInRoutes(s: SamlSignInRouteDeps): FastifyPluginAsync {
  /** The settings in force when SAML is configured and enabled; 404 SAML_NOT_CONFIGURED otherwise. */
  const enabled = async (): Promise<SamlSettings> => {
    const current = await s.samlSettings.current();
    if (!current?.settings.enabled) throw SamlErrors.SAML_NOT_CONFIGURED();
    return current.settings;
  };

  /** Which IdP session a new session comes from (single logout ends it): kept by the origin writer of src/saml/module.ts. */
  const remember = (p: Omit<PendingSignIn, 'channel' | 'userId'>): FinishOptions => ({ origin: { issuer: p.issuer, name_id: p.nameId, session_index: p.sessionIndex } });

  /** The sign-in a code stands for, its user admitted again for the client now calling. */
  const pendingOf = async (request: FastifyRequest, spend: boolean) => {
    const code = codeOf(request);
    const pending = spend ? await s.codes.spend(code) : await s.codes.peek(code);
    const user = pending && (await s.users.findById(pending.userId));
    if (!pending || !user) throw SamlErrors.SAML_CODE_INVALID();
    const ctx = clientContext(request, s.ipHasher, pending.channel);
    const grants = await s.pipeline.admit(user, ctx);
    return { pending, ctx, identified: { user, grants, passwordElsewhere: true } };
  };

  return async (instance) => {
    const app = instance as unknown as App;
    acceptForms(instance);

    app.post('/api/v1/auth/saml/login', {
      schema: {
        tags, summary: 'Start a SAML sign-in: the identity provider URL to send the browser to',
        description: [
          'Form-encoded `relay_state` or JSON `{relay_state, channel}`. Answers JSON, not a redirect: `access_token` holds the IdP URL with the AuthnRequest (kept for existing clients), and `redirect_url` the same URL under a name that says what it is. Send the browser there; after the IdP, it posts its response to the assertion consumer (`acs_url`).',
          '',
          'The AuthnRequest\'s ID is recorded for `expires_in` seconds (any node can then check the response\'s InResponseTo, once) with `relay_state` and `channel`; the IdP is given only that ID as its RelayState.',
          '',
          '**Browser binding** (with a `relay_state` only): the answer sets a cookie holding a random nonce, and the request records its SHA-256; the assertion consumer signs in on this request only in the browser that sends that cookie back (no login CSRF, no code for a browser that did not start the sign-in). Call this route from the browser that will go to the IdP, on the site of the ACS (same origin, or `credentials: \'include\'`). With an `https:` ACS: `__Host-strongroom_saml`, `Path=/; Secure; HttpOnly; SameSite=None; Max-Age=600` (the IdP\'s post to the ACS is cross-site); with an `http:` ACS (development): `strongroom_saml`, `Path=/; HttpOnly; SameSite=Lax`. One cookie per browser: of logins started in parallel tabs the newest wins. Without `relay_state` no cookie is set and the request is not bound (the ACS answers JSON to whoever posts).',
          '',
          '- `relay_state`: where the browser lands afterwards; its origin must be in `allowed_relay_origins` (`422 SAML_RELAY_STATE_NOT_ALLOWED` otherwise: no open redirect). Optional.',
          '- `channel`: `web` (default), `mobile` or `agent`: the channel whose access policy the sign-in is checked against.',
          '- `404 SAML_NOT_CONFIGURED`: SAML is not configured or not enabled.',
        ].join('\n'),
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({
          relay_state: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description: 'Where the browser lands after the sign-in: an absolute URL on an allowed origin.', examples: ['https://app.bank.example/after-login'] })),
          channel: Type.Optional(Type.Union([Type.Literal('web'), Type.Literal('mobile'), Type.Literal('agent')], { description: 'Default `web`.' })),
        }, { additionalProperties: false, description: 'Every field is optional; no body at all means `{}`.' }),
        response: {
          200: SamlStartedSchema,
          ...errors(SamlErrors.SAML_NOT_CONFIGURED, SamlErrors.SAML_RELAY_STATE_NOT_ALLOWED),
        },
      },
      config: { rateLimit: { group: 'signin' } },
      // No body at all is a start with nothing to say: `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
    }, async (request, reply) => s.samlStart({ relayUrl: request.body.relay_state ?? null, channel: request.body.channel ?? 'web', reply }));


    app.post('/api/v1/auth/saml/acs', {
      bodyLimit: ACS_BODY_LIMIT,
      schema: {
        tags, summary: 'The assertion consumer: the IdP\'s response, posted by the browser',
        description: [
          'Form-encoded `SAMLResponse` (base64) and `RelayState`, as the IdP\'s HTTP-POST binding sends them (JSON is accepted too). The response must be signed by the configured IdP (the Response and its Assertion, RSA-SHA256), name this service as audience, recipient and destination, be within its validity window (with `clock_skew_sec`), answer a request this service sent and nobody answered yet (any node), and carry an assertion this service has not accepted before. The identity is read only from the signed content.',
          '',
          'Then the sign-in is every other sign-in\'s (just-in-time provisioning): the account linked to the NameID, else the account with the assertion\'s email is linked, else one is created with its roles from the groups and its branch; access policy of the request\'s channel; second factor; tokens and session.',
          '',
          '- **No RelayState URL** (the request had no `relay_state`, or an IdP-initiated response without an allowed RelayState URL): answers the sign-in success response as JSON (or `401 2FA_REQUIRED` / `403 MFA_SETUP_INCOMPLETE` as every sign-in).',
          '- **A browser sign-in** (the request had a `relay_state`): only in the browser that started it, i.e. the post carries the browser-binding cookie `saml/login` set (`__Host-strongroom_saml`; `strongroom_saml` for an `http:` ACS) and its SHA-256 is the request\'s. Then it answers `303 See Other` to that URL with `#saml_code=<code>` (one minute, single use; a fragment never reaches a server or a Referer). The page exchanges it at `GET /api/v1/auth/saml/exchange` (or asks `GET /api/v1/auth/saml/pending-2fa` first). Without the cookie, or with another login\'s (a response posted into a browser by another site, a sign-in link someone else started): `303` to the URL with `#saml_error=SAML_VALIDATION_FAILED` (reason `browser_binding` in the log and metric); nothing is created and the request is spent. A refusal after the response was accepted (policy, disabled account, identity conflict) goes back as `#saml_error=<error_code>`. Every answer to a browser sign-in deletes the cookie (`Max-Age=0`).',
          '- **IdP-initiated with an allowed RelayState URL**: nobody is signed in on it (it is bound to no browser). The response is validated and its assertion spent, then the ACS starts a sign-in here for that URL, as `saml/login` with `relay_state` would (new AuthnRequest, new browser-binding cookie), and answers `303` to the IdP with it; the IdP, which has just signed the user in, answers that request, and its response is a browser sign-in as above.',
          '',
          '- `401 SAML_INVALID_SIGNATURE` (`details.element`), `401 SAML_VALIDATION_FAILED` (`details.reason`: malformed, doctype, encrypted_assertion, destination, issuer, audience, recipient, subject, not_yet_valid, expired, in_response_to, unsolicited, replayed, rejected; `browser_binding` goes back to the page, above), `401 SAML_NOT_AUTHENTICATED` (`details.status`): nothing was created.',
          '- `409 IDENTITY_CONFLICT`: another account holds the username or email, or the email belongs to an administrative account (`details.reason: privileged_account`) that only an administrator may link. Audited.',
          '- `413 PAYLOAD_TOO_LARGE`: more than 256 KiB. `404 SAML_NOT_CONFIGURED`.',
        ].join('\n'),
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({
          SAMLResponse: Type.String({ minLength: 1, maxLength: ACS_BODY_LIMIT, description: 'The IdP\'s Response, base64.' }),
          RelayState: Type.Optional(Type.String({ maxLength: 2048, description: 'What the IdP was given: for a sign-in started here, the request ID; for an IdP-initiated one, a URL on an allowed origin.' })),
        }),
        response: { 200: SignInResponseSchema, 303: Type.Null({ description: 'A browser sign-in: to the relay URL with `#saml_code=<code>` (or `#saml_error=<error_code>`), deleting the browser-binding cookie. An IdP-initiated response with an allowed RelayState URL: to the IdP with a new AuthnRequest, setting a new browser-binding cookie.' }), ...errors(SamlErrors.SAML_NOT_CONFIGURED, SamlErrors.SAML_VALIDATION_FAILED, SamlErrors.SAML_INVALID_SIGNATURE, SamlErrors.SAML_NOT_AUTHENTICATED, SamlErrors.SAML_ATTRIBUTES_MISSING, SignInErrors.IDENTITY_CONFLICT, ...ADMISSION_ERRORS) },
      },
      config: { rateLimit: { group: 'signin' } },
    }, async (request, reply) => {
      const settings = await enabled();
      const consumed = await s.consumer.consume(settings, request.body.SAMLResponse, browserNonce(request, settings.acsUrl));
      const sent = consumed.request;
      // The cookie bound this sign-in only: whatever the answer, it is spent.
      if (browserBound(sent)) clearBinding(reply, settings.acsUrl);
      if ('refused' in consumed) {
        const target = new URL(consumed.request.relayUrl);
        target.hash = `saml_error=${consumed.refused.code}`;
        return reply.code(303).header('location', target.toString()).send(null);
      }
      const { assertion, identity } = consumed;
      const relayState = request.body.RelayState;
      if (sent === null && relayState !== undefined && relayAllowed(relayState, settings.allowedRelayOrigins)) {
        // IdP-initiated into a browser: bound to no browser, so no code. Ask the IdP again, from here,
        // for this browser (its answer is a bound browser sign-in); the assertion is spent already.
        const started = await s.samlStart({ relayUrl: relayState, channel: 'web', reply });
        return reply.code(303).header('location', started.redirect_url).send(null);
      }
      const channel = sent?.channel ?? 'web';
      const ctx = clientContext(request, s.ipHasher, channel);
      const input = { identity, settings, audit: auditContext(ctx) };
      const idp = { issuer: identity.issuer, nameId: identity.nameId, sessionIndex: assertion.sessionIndex };
      const relayUrl = sent ? sent.relayUrl : null;
      if (relayUrl === null) {
        const result = await s.pipeline.signIn(s.samlStrategy, input, ctx, remember(idp));
        useResponseKey(request, result.sessionKey);
        return result.body;
      }
      const target = new URL(relayUrl);
      try {
        const identified = await s.pipeline.identify(s.samlStrategy, input, ctx);
        target.hash = `saml_code=${await s.codes.issue({ userId: identified.user.id, channel, ...idp })}`;
      } catch (err) {
        if (!(err instanceof AppError) || err.statusCode >= 500) throw err;
        target.hash = `saml_error=${err.code}`;
      }
      return reply.code(303).header('location', target.toString()).send(null);
    });

    const codeErrors = '`401 SAML_CODE_INVALID`: unknown, spent, or older than a minute (sign in again). `403 ACCOUNT_DISABLED`, `403 POLICY_RESTRICTED`: checked again for the client calling now.';

    app.get('/api/v1/auth/saml/exchange', {
      schema: {
        tags, summary: 'Exchange the one-time code of a SAML browser sign-in for the tokens',
        description: `Spends the code (\`X-SAML-Code\` header) of the assertion consumer's redirect and answers the sign-in success response, with the session opened for the client calling (its device fingerprint and address). When a second factor is due, answers \`401 2FA_REQUIRED\` (or \`403 MFA_SETUP_INCOMPLETE\`) exactly as every sign-in does, and the client finishes with the second factor's routes. ${codeErrors}`,
        headers: CodeHeaders,
        response: { 200: SignInResponseSchema, ...errors(SamlErrors.SAML_CODE_INVALID, ...ADMISSION_ERRORS) },
      },
      config: { rateLimit: { group: 'signin' } },
    }, async (request) => {
      const { pending, ctx, identified } = await pendingOf(request, true);
      const result = await s.pipeline.finish(s.samlStrategy, identified, ctx, remember(pending));
      useResponseKey(request, result.sessionKey);
      return result.body;
    });

    app.get('/api/v1/auth/saml/pending-2fa', {
      schema: {
        tags, summary: 'The second-factor challenge of a SAML browser sign-in, if one is due',
        description: [
          'With the code of the assertion consumer\'s redirect (`X-SAML-Code` header), tells a client whether a second factor must follow before the tokens:',
          '',
          '- `{"second_factor_required": true, "error_code": "2FA_REQUIRED", "two_factor_token", "methods", "expires_in"}`: the code is spent; finish with the second factor\'s routes as after a `401 2FA_REQUIRED` (or `MFA_SETUP_INCOMPLETE`: enrol with `setup_methods`). The 2FA token is bound to the client calling.',
          '- `{"second_factor_required": false}`: the code is not spent; exchange it at `GET /api/v1/auth/saml/exchange` within its minute.',
          '- An error (the account, the access policy or the risk response policy refuses the sign-in): the code is spent; sign in again.',
          '',
          codeErrors,
        ].join('\n'),
        headers: CodeHeaders,
        response: {
          200: Type.Object({
            second_factor_required: Type.Boolean(),
            error_code: Type.Optional(Type.Union([Type.Literal('2FA_REQUIRED'), Type.Literal('MFA_SETUP_INCOMPLETE')])),
            two_factor_token: Type.Optional(Type.String()),
            methods: Type.Optional(Type.Array(Type.String())),
            setup_methods: Type.Optional(Type.Array(Type.String())),
            expires_in: Type.Optional(Type.Integer()),
            next_step: Type.Optional(Type.String()),
          }, { examples: [{ second_factor_required: true, error_code: '2FA_REQUIRED', two_factor_token: 'eyJhbGciOi…', methods: ['totp', 'backup_code'], expires_in: 300 }, { second_factor_required: false }] }),
          ...errors(SamlErrors.SAML_CODE_INVALID, ...ADMISSION_ERRORS),
        },
      },
      config: { rateLimit: { group: 'signin' } },
    }, async (request) => {
      const { pending, ctx, identified } = await pendingOf(request, false);
      // A refusal spends the code: asking again must not evaluate, audit and alert again.
      const refuse = async (err: unknown): Promise<never> => {
        await s.codes.spend(codeOf(request));
        throw err;
      };
      const due = await s.pipeline.secondFactorDue(s.samlStrategy, identified, ctx, remember(pending)).catch(refuse);
      if (due === null) return { second_factor_required: false };
      if (due.code !== '2FA_REQUIRED' && due.code !== 'MFA_SETUP_INCOMPLETE') return refuse(due);
      if (!(await s.codes.spend(codeOf(request)))) throw SamlErrors.SAML_CODE_INVALID();
      return { second_factor_required: true, error_code: due.code as '2FA_REQUIRED' | 'MFA_SETUP_INCOMPLETE', ...(due.details as Record<string, unknown>) };
    });
  };
}

export { CODE_TTL_MS };
