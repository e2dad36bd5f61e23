/**
 * Signing in with a passkey: passwordless (public; the passkey names the account and is both
 * factors), and as the second factor after a password (`401 2FA_REQUIRED` lists `passkey`). All
 * four are transport pre-auth routes: the body is decrypted before the caller is known.
 */
import type { FastifyPluginAsync } from 'fastify';
import { auditContext } from '../audit/service.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import { MfaErrors } from '../mfa/errors.js';
import { routeActors, type RouteActorDeps } from '../mfa/route-actors.js';
import { ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, TOKEN_ERRORS } from '../mfa/schemas.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import { SECOND_FACTOR_ERRORS, SIGN_IN_ERRORS } from '../signin/error-sets.js';
import type { SignInPipeline } from '../signin/pipeline.js';
import { clientContext, SignInResponseSchema } from '../signin/routes.js';
import { useResponseKey } from '../transport/plugin.js';
import { PasskeyErrors as E } from './errors.js';
import { checkPasskeyFactor, type FactorCheckDeps } from './factor.js';
import { tags } from './routes.js';
import { EmptyBody, LoginBody, RequestOptionsResponse, TwoFactorOptionsBody, TwoFactorVerifyBody } from './schemas.js';
import type { PasskeyStrategy } from './strategy.js';
import type { AuthenticationResponseJSON } from './webauthn.js';

export interface PasskeySigninRouteDeps extends Omit<RouteActorDeps, 'config'>, Omit<FactorCheckDeps, 'config'> {
  config: RouteActorDeps['config'] & FactorCheckDeps['config'];
  ipHasher: Hasher;
  pipeline: SignInPipeline;
  passkeyStrategy: PasskeyStrategy;
}

/**
 * The channel of a passwordless sign-in, from the origin in the answer's client data: an Android
 * app (`android:apk-key-hash:...`) signs in on `mobile`, a web page on `web`. Read before the
 * answer is verified, it cannot be forged: the client data is signed with the passkey and its
 * origin must be one of WEBAUTHN_ORIGINS, else the sign-in fails (401 INVALID_CREDENTIALS).
 */
export function originChannel(response: unknown): 'web' | 'mobile' {
  const data = (response as { response?: { clientDataJSON?: unknown } } | null)?.response?.clientDataJSON;
  if (typeof data !== 'string') return 'web';
  try {
    const origin = (JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as { origin?: unknown }).origin;
    return typeof origin === 'string' && origin.startsWith('android:') ? 'mobile' : 'web';
  } catch {
    return 'web';
  }
}

const NO_PASSKEY = '`400 MFA_METHOD_UNAVAILABLE`: the challenge does not offer `passkey`.';

export function passkeySigninRoutes(s: PasskeySigninRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    passwordlessRoutes(app, s);
    secondFactorRoutes(app, s);
  };
}

function passwordlessRoutes(app: App, s: PasskeySigninRouteDeps): void {
  app.post('/api/v1/auth/passkey/options', {
    schema: {
      tags, summary: 'Passwordless sign-in: options',
      description: 'Request options for `navigator.credentials.get()` with an empty `allowCredentials`: the device offers the passkeys it holds for this relying party (discoverable credentials), and the one chosen names the account. User verification is required. The `challenge_id` goes to `POST /api/v1/auth/passkey/login` within 5 minutes, once.',
      body: EmptyBody,
      response: { 200: RequestOptionsResponse },
    },
    preValidation: async (request) => {
      request.body ??= {};
    },
    config: { rateLimit: { group: 'signin' } },
  }, async () => s.passkeys.assertionOptions({ purpose: 'signin', userId: null }));

  app.post('/api/v1/auth/passkey/login', {
    schema: {
      tags, summary: 'Passwordless sign-in with a passkey',
      description: [
        'Checks the device\'s answer to the options\' challenge, then goes through the same sign-in as a password does (rate limits, lockout, account state, access policy, risk evaluation, audit). A passkey with user verification is two factors by itself: the session is `mfa_completed: true` and no second factor follows, unless the channel\'s access policy lists the second factors it accepts without `passkey` (`403 POLICY_RESTRICTED`, rule `factor`).',
        '',
        'The channel is the answer\'s origin: an Android app (`android:apk-key-hash:...`) signs in on `mobile`, a web page on `web`; that channel\'s access policies apply and the session is opened on it.',
        '',
        bullets(
          '`401 INVALID_CREDENTIALS`: the same answer, body and audit reason as a wrong password, whatever failed: an unknown passkey, a spent or expired challenge, a wrong origin, a bad signature, or a signature counter that went back (a cloned authenticator: audited `PASSKEY_CLONE_DETECTED`).',
          '`429 ACCOUNT_LOCKED` (with `Retry-After`): too many failures on the account; `429 RATE_LIMITED`: too many sign-ins from this network.',
          '`403 ACCOUNT_DISABLED`, `403 POLICY_RESTRICTED`, `403 ACCOUNT_ERASURE_PENDING`, `403 RISK_TOO_HIGH`: as for any sign-in.',
        ),
      ].join('\n'),
      body: LoginBody,
      response: { 200: SignInResponseSchema, ...errors(...SIGN_IN_ERRORS) },
    },
    config: { rateLimit: { group: 'signin' } },
  }, async (request) => {
    const ctx = clientContext(request, s.ipHasher, originChannel(request.body.response), request.body.device_fingerprint);
    const input = { challengeId: request.body.challenge_id, response: request.body.response as unknown as AuthenticationResponseJSON, audit: auditContext(ctx) };
    const result = await s.pipeline.signIn(s.passkeyStrategy, input, ctx);
    useResponseKey(request, result.sessionKey); // an encrypted sign-in hands the client its session key
    return result.body;
  });
}

function secondFactorRoutes(app: App, s: PasskeySigninRouteDeps): void {
  const actors = routeActors(s);
  const resolveSignIn = actors.resolve(['signin']);
  app.post('/api/v1/auth/passkey/2fa/options', {
    schema: {
      tags, summary: 'Second factor with a passkey: options',
      description: `After \`401 2FA_REQUIRED\` whose \`methods\` include \`passkey\`: request options listing the account's passkeys, bound to this \`two_factor_token\`. The answer goes to \`POST /api/v1/auth/passkey/2fa/verify\` with the same token.\n\n${bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, NO_PASSKEY)}`,
      body: TwoFactorOptionsBody,
      response: { 200: RequestOptionsResponse, ...errors(...SECOND_FACTOR_ERRORS) },
    },
    preHandler: resolveSignIn,
    config: { rateLimit: actors.limit('second_factor') },
  }, async (request) => {
    const challenge = actors.challengeOf(request);
    if (!challenge.claims.methods.includes('passkey')) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'passkey' });
    return s.passkeys.assertionOptions({ purpose: 'second_factor', userId: challenge.user.id, twoFactorJti: challenge.claims.jti });
  });

  app.post('/api/v1/auth/passkey/2fa/verify', {
    schema: {
      tags, summary: 'Finish a sign-in with a passkey as the second factor',
      description: [
        'Checks the answer to the options of this `two_factor_token` with one of the account\'s passkeys, then issues the tokens and the session (`user_profile.mfa_completed: true`). The `two_factor_token` is spent.',
        '',
        bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, NO_PASSKEY,
          '`400 PASSKEY_CHALLENGE_INVALID`: `challenge_id` is unknown, of another token, expired or used already.',
          '`401 PASSKEY_INVALID`: the answer did not verify (a passkey of another account, wrong origin, bad signature, a counter that went back).',
          '`429 MFA_LOCKED` (with `Retry-After`): too many failed second factors.'),
      ].join('\n'),
      body: TwoFactorVerifyBody,
      response: { 200: SignInResponseSchema, ...errors(...SECOND_FACTOR_ERRORS, E.PASSKEY_CHALLENGE_INVALID, E.PASSKEY_INVALID) },
    },
    preHandler: resolveSignIn,
    config: { rateLimit: actors.limit('second_factor') },
  }, async (request) => {
    const challenge = actors.challengeOf(request);
    if (!challenge.claims.methods.includes('passkey')) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'passkey' });
    const binding = { purpose: 'second_factor' as const, userId: challenge.user.id, twoFactorJti: challenge.claims.jti };
    await checkPasskeyFactor(s, challenge.user, actors.ctxOf(request), binding, request.body.challenge_id, request.body.response as unknown as AuthenticationResponseJSON);
    await s.challenges.audit('MFA_VERIFIED', 'SUCCESS', challenge.user, actors.ctxOf(request), 'passkey', { purpose: 'signin' });
    return actors.finish(request, challenge, 'passkey');
  });
}
