/**
 * One-time code routes (issue 4 section 3). SPEC names the first three; the two enrolment routes
 * under `/api/v1/2fa/otp/` mirror TOTP's. All five are transport pre-auth routes, so each
 * identifies its caller in `preHandler`, after the body is decrypted: a bearer token, or the
 * `two_factor_token` in the body.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Guard } from '../../sessions/guard.js';
import type { OtpService } from './service.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { SignInResponseSchema } from '../../signin/routes.js';
import type { ChallengePurpose } from '../challenge.js';
import { routeActors, type RouteActorDeps } from '../route-actors.js';
import { ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, StepUpResponse, TOKEN_ERRORS, TwoFactorToken } from '../schemas.js';
import { SECOND_FACTOR_ERRORS, TOKEN_CHECK_ERRORS } from '../../signin/error-sets.js';
import { OtpErrors } from './errors.js';
import { MfaErrors } from '../errors.js';
import { SignInErrors } from '../../signin/errors.js';
import { PolicyErrors } from '../../policy/errors.js';
import { DEVICE_TOKEN_ID } from '../../devices/public-id.js';
import { publicIdSchema, refuseIntegerIds } from '../../platform/http/public-id.js';

const tags = ['MFA and 2FA'];
const bearer = [{ bearer: [] }];

const Method = Type.Union([Type.Literal('email'), Type.Literal('sms'), Type.Literal('push')], { description: 'Where the code goes: the account\'s email address, its phone number, or (`push`) a notification to each of the account\'s active mobile devices (the `send2FA` template, in the user\'s language).', examples: ['sms'] });
const Code = Type.String({ pattern: '^[0-9]{6}$', maxLength: 6, description: 'The 6-digit code from the email, text message or push notification.', examples: ['048213'] });

const Sent = Type.Object({
  method: Method,
  destination: Type.String({ description: 'Where the code went, masked (push: which devices)', examples: ['+2547****12', 'j***@bank.example', 'mobile device "Amina\'s Pixel"', '2 mobile devices'] }),
  expires_in: Type.Integer({ description: 'Seconds the code stays valid (`OTP_VALIDITY_MINUTES`)', examples: [300] }),
  resend_after: Type.Integer({ description: 'Seconds before another code may be requested (`OTP_RESEND_SECONDS`)', examples: [60] }),
});


const SENDING = [
  '`400 MFA_METHOD_UNAVAILABLE`: this method cannot be used here (see above), or it has no transport (production without `SMTP_URL` / `SMS_GATEWAY_URL`; push: no push provider configured, or no active mobile device token).',
  '`429 OTP_RESEND_THROTTLED` (with `Retry-After`, `details.retry_after_seconds`): a code for the same purpose was sent less than `OTP_RESEND_SECONDS` (60) ago.',
  '`429 OTP_SEND_LIMIT` (with `Retry-After`): `OTP_MAX_SENDS` (5) codes in the last hour for the same purpose.',
  '`429 MFA_LOCKED` (with `Retry-After`): the second factor is locked after too many wrong codes.',
  '`503 OTP_DELIVERY_FAILED`: the mail server or SMS gateway did not accept the message (push: no device accepted it; dead tokens turn inactive); that code is void, ask again.',
];
const CHECKING = [
  '`401 OTP_INVALID`: wrong code (`details.attempts_remaining`), already used, replaced by a newer code, or none was requested.',
  '`401 OTP_EXPIRED`: the code is older than `OTP_VALIDITY_MINUTES` (5); request a new one.',
  '`429 OTP_ATTEMPTS_EXCEEDED`: 3 wrong answers killed this code; even the right one is refused now. Request a new one.',
  '`429 MFA_LOCKED` (with `Retry-After`): `MFA_MAX_FAILURES` wrong second-factor codes (one-time, TOTP and backup codes together); locked for `MFA_LOCKOUT_MINUTES`.',
];
const CODES = 'Codes: 6 random digits, valid `OTP_VALIDITY_MINUTES` (5), single use, 3 attempts; a new code replaces the previous one. Without a transport outside production, codes go to the development outbox in the log.';

export interface OtpRouteDeps extends RouteActorDeps {
  guard: Guard;
  otp: OtpService;
}

export function otpRoutes(s: OtpRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const { resolve, actorOf, challengeOf, ctxOf, signedInUser, finish, limit, requireSetupMethod, reauthenticate } = routeActors(s);
    const resolveAs = (purpose: ChallengePurpose) => resolve([purpose]);

    app.post('/api/v1/auth/2fa/request', {
      schema: {
        tags, security: bearer, summary: 'Send a one-time code by email, SMS or push',
        description: [
          'Sends a 6-digit code to the account\'s email address or phone number, or (`push`) as the `send2FA` notification, in the user\'s language, to each of their active mobile device tokens. Two callers:',
          '',
          '- **Finishing a sign-in**: `{two_factor_token, method}` with the token of `401 2FA_REQUIRED`, no bearer; `method` must be one of that answer\'s `methods`. Then `POST /api/v1/auth/2fa/validate`.',
          '- **Step-up in a signed-in session**: bearer token and `{method}`; `method` must be an enrolled factor. Then `POST /api/v1/auth/2fa/verify`.',
          '',
          CODES,
          '',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, ...SENDING),
        ].join('\n'),
        body: Type.Object({ method: Method, two_factor_token: Type.Optional(TwoFactorToken) }, { additionalProperties: false }),
        response: { 200: Sent, ...errors(...SECOND_FACTOR_ERRORS, OtpErrors.OTP_SEND_LIMIT, OtpErrors.OTP_RESEND_THROTTLED, OtpErrors.OTP_DELIVERY_FAILED) },
      },
      preHandler: resolveAs('signin'),
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const actor = actorOf(request);
      if (actor.kind === 'challenge') return s.otp.requestSignIn(actor.challenge, request.body.method, ctxOf(request));
      return s.otp.requestStepUp(actor.auth, actor.user, request.body.method, ctxOf(request));
    });

    app.post('/api/v1/auth/2fa/validate', {
      schema: {
        tags, summary: 'Finish a sign-in with a one-time code',
        description: [
          'The sign-in form: `{two_factor_token, code}`, no bearer, with the code sent by `POST /api/v1/auth/2fa/request`. Answers like a sign-in: tokens and a session with `mfa_completed: true`. The 2FA token is spent (a second use is `401 TOKEN_REVOKED`). For a session that is already signed in, use `POST /api/v1/auth/2fa/verify`.',
          '',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, ...CHECKING),
        ].join('\n'),
        body: Type.Object({ two_factor_token: TwoFactorToken, code: Code }, { additionalProperties: false }),
        response: { 200: SignInResponseSchema, ...errors(...SECOND_FACTOR_ERRORS, OtpErrors.OTP_INVALID, OtpErrors.OTP_EXPIRED, OtpErrors.OTP_ATTEMPTS_EXCEEDED) },
      },
      preHandler: resolveAs('signin'),
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const challenge = challengeOf(request);
      const method = await s.otp.verifySignIn(challenge, request.body.code, ctxOf(request));
      return finish(request, challenge, method);
    });

    app.post('/api/v1/auth/2fa/verify', {
      schema: {
        tags, security: bearer, summary: 'Step up a signed-in session with a one-time code',
        description: [
          'The step-up form: bearer token and `{code}`, with the code sent by `POST /api/v1/auth/2fa/request` without a `two_factor_token`. The session records the verification (`mfa_completed: true`, `mfa_verified_at`); no new tokens are issued. To finish a sign-in, use `POST /api/v1/auth/2fa/validate`.',
          '',
          bullets(TOKEN_ERRORS, ...CHECKING),
        ].join('\n'),
        body: Type.Object({ code: Code }, { additionalProperties: false }),
        response: { 200: StepUpResponse, ...errors(MfaErrors.MFA_METHOD_UNAVAILABLE, MfaErrors.MFA_LOCKED, OtpErrors.OTP_INVALID, OtpErrors.OTP_EXPIRED, OtpErrors.OTP_ATTEMPTS_EXCEEDED) },
      },
      // A pre-auth route (transport encryption): the bearer is checked after decryption.
      preHandler: s.guard.authenticate,
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const user = await signedInUser(request);
      const ctx = ctxOf(request);
      const method = await s.otp.verifyStepUp(request.auth!, user, request.body.code, ctx);
      return s.challenges.stepUp(request.auth!, user, method, ctx);
    });

    app.post('/api/v1/2fa/otp/setup', {
      schema: {
        tags, security: bearer, summary: 'Start enrolling email, SMS or push codes as a second factor',
        description: [
          'Sends a code to the account\'s own email address (`email`), phone number (`sms`) or one of its active mobile devices (`push`, `device_id`); entering it at `POST /api/v1/2fa/otp/verify` enrols the method. It mirrors `/api/v1/2fa/totp/setup`.',
          '',
          'Push codes go to one device, the one whose code was entered back; with push enrolled already this moves them to `device_id`. With a bearer token push needs `current_password`. A signed-in user who has a second factor already must have stepped up with it (`POST /api/v1/auth/2fa/request` and `/verify`, or `/api/v1/2fa/totp/...`) in the last 10 minutes: `403 STEP_UP_REQUIRED` otherwise.',
          '',
          'Caller: a signed-in user (bearer token), or a user finishing a sign-in after `403 MFA_SETUP_INCOMPLETE` (that answer\'s `two_factor_token` in the body, no bearer).',
          '',
          CODES,
          '',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, '`409 OTP_FACTOR_ALREADY_ENROLLED`: this method is already enrolled.', ...SENDING.map((x) => x.replace('(see above)', '(the account has no such address)'))),
        ].join('\n'),
        body: Type.Object({
          method: Method,
          two_factor_token: Type.Optional(TwoFactorToken),
          device_id: Type.Optional(publicIdSchema(DEVICE_TOKEN_ID, 'Push: which of your active mobile device tokens receives the codes, by its uuid (the `id` of `GET /api/v1/notifications/devices`); needed when you have more than one. Integer ids are not accepted.')),
          current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Push with a bearer token: your password (a stolen access token alone must not make an attacker\'s phone receive your codes).' })),
        }, { additionalProperties: false }),
        response: { 200: Sent, ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.STEP_UP_REQUIRED, MfaErrors.MFA_METHOD_UNAVAILABLE, MfaErrors.MFA_LOCKED, OtpErrors.OTP_FACTOR_ALREADY_ENROLLED, OtpErrors.OTP_SEND_LIMIT, OtpErrors.OTP_RESEND_THROTTLED, OtpErrors.OTP_DELIVERY_FAILED) },
      },
      preValidation: refuseIntegerIds(DEVICE_TOKEN_ID, { body: ['device_id'] }),
      preHandler: resolveAs('setup'),
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const { method, device_id: deviceId, current_password: password } = request.body;
      requireSetupMethod(request, method);
      const actor = actorOf(request);
      if (method === 'push') await reauthenticate(request, password, 'push_setup');
      return s.otp.requestEnrolment(actor.user, method, ctxOf(request), { ...(actor.kind === 'session' ? { auth: actor.auth } : {}), ...(deviceId === undefined ? {} : { deviceId }) });
    });

    app.post('/api/v1/2fa/otp/verify', {
      schema: {
        tags, security: bearer, summary: 'Finish enrolling email, SMS or push codes with the code received',
        description: [
          'Confirms the code sent by `POST /api/v1/2fa/otp/setup` and enrols the method. With a setup `two_factor_token` the sign-in then finishes: `sign_in` carries the tokens and session (`mfa_completed: true`).',
          '',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, '`409 OTP_FACTOR_ALREADY_ENROLLED`: this method is already enrolled.', ...CHECKING),
        ].join('\n'),
        body: Type.Object({ method: Method, code: Code, two_factor_token: Type.Optional(TwoFactorToken) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ enrolled: Type.Literal(true), method: Method, sign_in: Type.Optional(SignInResponseSchema) }),
          ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.MFA_LOCKED, OtpErrors.OTP_FACTOR_ALREADY_ENROLLED, OtpErrors.OTP_INVALID, OtpErrors.OTP_EXPIRED, OtpErrors.OTP_ATTEMPTS_EXCEEDED),
        },
      },
      preHandler: resolveAs('setup'),
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const actor = actorOf(request);
      const { method, code } = request.body;
      requireSetupMethod(request, method);
      await s.otp.confirmEnrolment(actor.user, method, code, ctxOf(request));
      if (actor.kind === 'session') return { enrolled: true as const, method };
      return { enrolled: true as const, method, sign_in: await finish(request, actor.challenge, method) };
    });
  };
}
