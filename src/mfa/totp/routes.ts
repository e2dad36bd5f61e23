/**
 * TOTP routes (issue 4 section 2). The four `/api/v1/2fa/totp/*` sign-in routes are transport
 * pre-auth routes, so they identify their caller in `preHandler`, after the body is decrypted
 * (a bearer token, or the `two_factor_token` in the body). Step-up and backup-code renewal are
 * ordinary bearer routes.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Guard } from '../../sessions/guard.js';
import type { TotpService } from './service.js';
import type { FactorStore } from '../factors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { SignInResponseSchema } from '../../signin/routes.js';
import type { UserRow } from '../../users/store.js';
import { mfaContext, type Challenge, type MfaContext } from '../challenge.js';
import { routeActors, type RouteActorDeps } from '../route-actors.js';
import { ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, StepUpResponse, TOKEN_ERRORS, TwoFactorToken } from '../schemas.js';
import { MfaErrors } from '../errors.js';
import type { SignInMethod } from '../factors.js';
import { SECOND_FACTOR_ERRORS, TOKEN_CHECK_ERRORS } from '../../signin/error-sets.js';
import { TotpErrors } from './errors.js';
import { SignInErrors } from '../../signin/errors.js';
import { PolicyErrors } from '../../policy/errors.js';

const tags = ['MFA and 2FA'];
const bearer = [{ bearer: [] }];
/** Bearer, or none (a `two_factor_token` in the body instead). */
const bearerOrToken: { [label: string]: string[] }[] = [{ bearer: [] }, {}];

const TotpCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code the authenticator app shows now.', examples: ['492039'] });
const BackupCode = Type.String({ minLength: 1, maxLength: 32, pattern: '^[0-9A-Za-z \\-]*$', description: 'One of the backup codes (`xxxx-xxxx`; case, dashes and spaces do not matter).', examples: ['7k3m-q9xz'] });
const BackupCodesList = Type.Array(Type.String({ examples: ['7k3m-q9xz'] }), {
  minItems: 10, maxItems: 10, description: 'Ten single-use backup codes. Shown once: only their keyed hashes are stored.',
});

const SetupResponse = Type.Object({
  secret: Type.String({ description: 'Base32 (RFC 4648) secret, for typing into the app by hand', examples: ['JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'] }),
  otpauth_uri: Type.String({ description: 'Key Uri Format: `otpauth://totp/Issuer:username?secret=..&issuer=..&algorithm=..&digits=6&period=30`', examples: ['otpauth://totp/Strongroom:amina.otieno?issuer=Strongroom&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30'] }),
  qr_code: Type.String({ description: 'The URI as a QR code, `data:image/png;base64,...`', examples: ['data:image/png;base64,iVBORw0KGgo...'] }),
  algorithm: Type.Union([Type.Literal('SHA1'), Type.Literal('SHA256')], { examples: ['SHA1'] }),
  digits: Type.Integer({ examples: [6] }),
  period: Type.Integer({ description: 'Seconds per code', examples: [30] }),
});


const LOCKED = '`429 MFA_LOCKED` (with `Retry-After`): too many wrong codes (`MFA_MAX_FAILURES`, TOTP and backup codes together); locked for `MFA_LOCKOUT_MINUTES`, during which even a right code is refused.';
/** Errors of the bearer routes that take a current authenticator code. */
const SIGNED_IN_CODE_ERRORS = bullets(
  '`401 TOKEN_*`, `401 SESSION_*`: no valid session.',
  '`400 MFA_METHOD_UNAVAILABLE`: no authenticator app is enrolled.',
  '`401 TOTP_INVALID`: wrong code, outside the window, or a step already used.',
  LOCKED,
);

function requireMethod(challenge: Challenge, method: SignInMethod): void {
  if (!challenge.claims.methods.includes(method)) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method });
}

export interface TotpRouteDeps extends RouteActorDeps {
  guard: Guard;
  totp: TotpService;
  factors: Pick<FactorStore, 'active'>;
}

export function totpRoutes(s: TotpRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const { resolve, actorOf, challengeOf, ctxOf, signedInUser, reauthenticate, finish, limit, requireSetupMethod } = routeActors(s);
    const resolveSetup = resolve(['setup']);
    const resolveSignIn = resolve(['signin']);

    app.post('/api/v1/2fa/totp/setup', {
      schema: {
        tags, security: bearerOrToken, summary: 'Start authenticator-app (TOTP) enrolment',
        description: [
          'Creates a new secret and returns it with its `otpauth://` URI and a QR code to scan. Nothing is enrolled until `POST /api/v1/2fa/totp/verify` receives a valid code; calling setup again replaces an unconfirmed secret. The secret is stored encrypted.',
          '',
          'Caller: a signed-in user (bearer token) who confirms `current_password` (a stolen access token alone must not enrol an attacker\'s app), or a user finishing a sign-in after `403 MFA_SETUP_INCOMPLETE` (`two_factor_token` of that answer in the body, no bearer: the password was just checked).',
          '',
          bullets(
            TOKEN_ERRORS, ACCOUNT_ERRORS,
            '`401 INVALID_CREDENTIALS`: wrong `current_password` (counts toward the account lockout: `429 ACCOUNT_LOCKED`).',
            '`409 TOTP_ALREADY_ENROLLED`: an authenticator app is already enrolled.',
            '`422 VALIDATION_ERROR`: a bearer caller without `current_password`.',
            '`403 STEP_UP_REQUIRED`: the user has a second factor already and this session has not stepped up with it in the last 10 minutes (a stolen session and the password must not add a factor).',
          ),
        ].join('\n'),
        body: Type.Object({
          two_factor_token: Type.Optional(TwoFactorToken),
          current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Required with a bearer token.', examples: ['Vt7#qLm2!xRp9$'] })),
        }, { additionalProperties: false, description: '`{current_password}` with a bearer token; `{two_factor_token}` without one.' }),
        response: { 200: SetupResponse, ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.INVALID_CREDENTIALS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.STEP_UP_REQUIRED, TotpErrors.TOTP_ALREADY_ENROLLED) },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
      preHandler: resolveSetup,
      config: { rateLimit: limit('account') },
    }, async (request) => {
      requireSetupMethod(request, 'totp');
      await reauthenticate(request, request.body.current_password, 'totp_setup');
      const actor = actorOf(request);
      if (actor.kind === 'session') {
        const enrolled = await s.factors.active(actor.user.id);
        // (TOTP enrolled already: setup answers 409 TOTP_ALREADY_ENROLLED and changes nothing.)
        if (!enrolled.includes('totp')) await s.challenges.requireRecentStepUp(actor.auth, enrolled);
      }
      return s.totp.setup(actor.user);
    });

    app.post('/api/v1/2fa/totp/verify', {
      schema: {
        tags, security: bearerOrToken, summary: 'Finish TOTP enrolment with a code from the app',
        description: [
          'Confirms the secret from setup with the app\'s current code, enrols it, and returns 10 single-use backup codes (shown once). With a setup `two_factor_token` the sign-in then finishes: `sign_in` carries the tokens and session (`mfa_completed: true`).',
          '',
          bullets(
            TOKEN_ERRORS, ACCOUNT_ERRORS,
            '`401 TOTP_INVALID`: wrong code, outside the window (one step either side), or a step already used.',
            '`409 TOTP_SETUP_NOT_STARTED`: no setup to confirm; `409 TOTP_ALREADY_ENROLLED`: already enrolled.',
            LOCKED,
          ),
        ].join('\n'),
        body: Type.Object({ code: TotpCode, two_factor_token: Type.Optional(TwoFactorToken) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ backup_codes: BackupCodesList, sign_in: Type.Optional(SignInResponseSchema) }),
          ...errors(...SECOND_FACTOR_ERRORS, TotpErrors.TOTP_INVALID, TotpErrors.TOTP_SETUP_NOT_STARTED, TotpErrors.TOTP_ALREADY_ENROLLED),
        },
      },
      preHandler: resolveSetup,
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      requireSetupMethod(request, 'totp');
      const actor = actorOf(request);
      const backupCodes = await s.totp.enrol(actor.user, request.body.code, ctxOf(request));
      if (actor.kind === 'session') return { backup_codes: backupCodes };
      return { backup_codes: backupCodes, sign_in: await finish(request, actor.challenge, 'totp') };
    });

    /** The two ways to finish a sign-in that `401 2FA_REQUIRED` started: the app's code, or a backup code. */
    const signInSteps = [
      {
        url: '/api/v1/2fa/totp/verify-login', method: 'totp', code: TotpCode, summary: 'Finish a sign-in with an authenticator code',
        intro: 'The second step after `401 2FA_REQUIRED` whose `methods` include `totp`: issues the tokens and the session (`user_profile.mfa_completed: true`). The `two_factor_token` is spent.',
        invalid: '`401 TOTP_INVALID`: wrong code, outside the window, or a step already used (replay).',
        check: (user: UserRow, code: string, ctx: MfaContext) => s.totp.verify(user, code, ctx, 'signin'),
      },
      {
        url: '/api/v1/2fa/totp/verify-backup-code', method: 'backup_code', code: BackupCode, summary: 'Finish a sign-in with a backup code',
        intro: 'For a lost phone: the second step after `401 2FA_REQUIRED` whose `methods` include `backup_code`. Each backup code works once; the tokens and session are those of `verify-login`. The number of codes left is recorded in the audit trail (`BACKUP_CODE_USED`), not returned.',
        invalid: '`401 BACKUP_CODE_INVALID`: wrong or already used.',
        check: (user: UserRow, code: string, ctx: MfaContext) => s.totp.useBackupCode(user, code, ctx),
      },
    ] as const;
    for (const step of signInSteps) {
      app.post(step.url, {
        schema: {
          tags, summary: step.summary,
          description: [
            step.intro, '',
            bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, `\`400 MFA_METHOD_UNAVAILABLE\`: the challenge does not offer \`${step.method}\`.`, step.invalid, LOCKED),
          ].join('\n'),
          body: Type.Object({ two_factor_token: TwoFactorToken, code: step.code }, { additionalProperties: false }),
          response: { 200: SignInResponseSchema, ...errors(...SECOND_FACTOR_ERRORS, step.method === 'totp' ? TotpErrors.TOTP_INVALID : TotpErrors.BACKUP_CODE_INVALID) },
        },
        preHandler: resolveSignIn,
        config: { rateLimit: limit('second_factor') },
      }, async (request) => {
        const challenge = challengeOf(request);
        requireMethod(challenge, step.method);
        await step.check(challenge.user, request.body.code, ctxOf(request));
        return finish(request, challenge, step.method);
      });
    }

    app.post('/api/v1/auth/totp/verify', {
      schema: {
        tags, security: bearer, summary: 'Step-up: prove the authenticator again in a signed-in session',
        description: [
          'For a sensitive action: the session records a fresh second factor (`mfa_completed`, `verified_at`). Not a sign-in step: it needs a bearer token, not a `two_factor_token`.',
          '',
          SIGNED_IN_CODE_ERRORS,
        ].join('\n'),
        body: Type.Object({ code: TotpCode }, { additionalProperties: false }),
        response: { 200: StepUpResponse, ...errors(TotpErrors.TOTP_INVALID, MfaErrors.MFA_METHOD_UNAVAILABLE, MfaErrors.MFA_LOCKED) },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const auth = request.auth!;
      const user = await signedInUser(request);
      const ctx = mfaContext(request);
      await s.totp.verify(user, request.body.code, ctx, 'stepup');
      return s.challenges.stepUp(auth, user, 'totp', ctx);
    });

    app.get('/api/v1/2fa/factors', {
      schema: {
        tags, security: bearer, summary: 'List my second factors',
        description: [
          'The second factors enrolled on the signed-in account (`totp`, `email`, `sms`, `push`, `passkey`, `push_approval`), and how many unused backup codes are left (0 without an authenticator app). Never a secret, an address or a device. The account pages read it to show what is set up.',
          '',
          bullets('`401 TOKEN_*`, `401 SESSION_*`: no valid session.'),
        ].join('\n'),
        response: {
          200: Type.Object({
            enrolled: Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('email'), Type.Literal('sms'), Type.Literal('push'), Type.Literal('passkey'), Type.Literal('push_approval')]), { description: 'Enrolled factors, by name.', examples: [['passkey', 'totp']] }),
            backup_codes_left: Type.Integer({ minimum: 0, description: 'Unused backup codes (they ride on the authenticator app).', examples: [10] }),
          }),
        },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: limit('account') },
    }, async (request) => {
      const user = await signedInUser(request);
      return { enrolled: await s.factors.active(user.id), backup_codes_left: await s.totp.backupCodesLeft(user) };
    });

    app.post('/api/v1/2fa/totp/backup-codes', {
      schema: {
        tags, security: bearer, summary: 'Replace the backup codes',
        description: [
          'Issues 10 new backup codes for a current authenticator code; every earlier backup code stops working. Shown once.',
          '',
          SIGNED_IN_CODE_ERRORS,
        ].join('\n'),
        body: Type.Object({ code: TotpCode }, { additionalProperties: false }),
        response: { 200: Type.Object({ backup_codes: BackupCodesList }), ...errors(TotpErrors.TOTP_INVALID, MfaErrors.MFA_METHOD_UNAVAILABLE, MfaErrors.MFA_LOCKED) },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: limit('account') },
    }, async (request) => {
      const user = await signedInUser(request);
      return { backup_codes: await s.totp.regenerateBackupCodes(user, request.body.code, mfaContext(request)) };
    });
  };
}
