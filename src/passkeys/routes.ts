/**
 * The owner's passkey routes (bearer): register one (options, then the device's answer), list,
 * rename and delete them, and step a session up with one. Adding a passkey when the account has a
 * second factor already needs a recent step-up with it, as every factor does; adding the first
 * needs the current password (a stolen access token alone must not add a way to sign in).
 * Deleting one needs a recent step-up. Registration also takes the set-up `two_factor_token` of
 * a sign-in stopped at 403 MFA_SETUP_INCOMPLETE instead of a bearer token (as TOTP's and the
 * codes' enrolment do), when its `setup_methods` offer `passkey`; the sign-in then finishes.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { auditContext } from '../audit/service.js';
import { mfaContext, type ChallengeService } from '../mfa/challenge.js';
import { MfaErrors } from '../mfa/errors.js';
import type { FactorStore } from '../mfa/factors.js';
import { NEW_FACTOR_PROOF_ERRORS, routeActors, type RouteActorDeps } from '../mfa/route-actors.js';
import { ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, StepUpResponse, TOKEN_ERRORS } from '../mfa/schemas.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import { PolicyErrors } from '../policy/errors.js';
import type { Guard } from '../sessions/guard.js';
import { SECOND_FACTOR_ERRORS, TOKEN_CHECK_ERRORS } from '../signin/error-sets.js';
import { SignInErrors } from '../signin/errors.js';
import { PasskeyErrors as E } from './errors.js';
import { checkPasskeyFactor, type FactorCheckDeps } from './factor.js';
import { AssertionBody, CreationOptionsResponse, Deleted, EmptyBody, Passkey, PasskeyList, PasskeyParams, RegisteredPasskey, RegistrationBody, RegistrationOptionsBody, RenameBody, RequestOptionsResponse } from './schemas.js';
import type { PasskeyService } from './service.js';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from './webauthn.js';

export const tags = ['Passkeys'];
const security = [{ bearer: [] }];
/** A bearer token, or none (a set-up `two_factor_token` in the body). */
const bearerOrToken: { [label: string]: string[] }[] = [{ bearer: [] }, {}];
const SESSION = '`401 TOKEN_*`, `401 SESSION_*`: no valid session.';
const STEP_UP = '`403 STEP_UP_REQUIRED`: this session has not proved a second factor in the last 10 minutes (`details.step_up` names the routes: a passkey steps up with `POST /api/v1/auth/passkey/step-up/options` and `/verify`).';
const CHALLENGE = '`400 PASSKEY_CHALLENGE_INVALID`: `challenge_id` is unknown, another request\'s, expired (5 minutes) or used already: ask for new options.';

export interface PasskeyRouteDeps extends Omit<RouteActorDeps, 'config'>, Omit<FactorCheckDeps, 'config'> {
  config: RouteActorDeps['config'] & FactorCheckDeps['config'];
  guard: Guard;
  passkeys: PasskeyService;
  challenges: ChallengeService;
  factors: Pick<FactorStore, 'active'>;
}

export function passkeyRoutes(s: PasskeyRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    registrationRoutes(app, s);
    ownerRoutes(app, s);
    stepUpRoutes(app, s);
  };
}

/** The step-up a change of the account's factors needs when it has one (`except`: the factor being added, when it is the only one). */
async function requireStepUp(s: PasskeyRouteDeps, request: FastifyRequest, userId: number): Promise<void> {
  await s.challenges.requireRecentStepUp(request.auth!, await s.factors.active(userId));
}

const CALLER = 'Caller: a signed-in user (bearer token), or a user finishing a sign-in after `403 MFA_SETUP_INCOMPLETE` whose `setup_methods` include `passkey` (that answer\'s `two_factor_token` in the body, no bearer: the password was just checked).';
const SETUP_TOKEN = '`400 MFA_METHOD_UNAVAILABLE`: the set-up token does not offer `passkey` (the channel\'s policy accepts other factors, or the sign-in did not look like the account holder\'s: then only a factor whose code goes to a contact on file may be set up). A `two_factor_token` of `401 2FA_REQUIRED` is `401 TOKEN_INVALID`: that account has a factor already.';

function registrationRoutes(app: App, s: PasskeyRouteDeps): void {
  const actors = routeActors(s);
  const resolveSetup = actors.resolve(['setup']);
  app.post('/api/v1/passkeys/registration/options', {
    schema: {
      tags, security: bearerOrToken, summary: 'Start registering a passkey',
      description: [
        'WebAuthn creation options for `navigator.credentials.create()`: a discoverable credential (`residentKey: required`) with user verification (`userVerification: required`), excluding the passkeys the account has. The `challenge_id` goes back with the answer to `POST /api/v1/passkeys/registration/verify` within 5 minutes, once.',
        '',
        CALLER,
        '',
        bullets(SESSION, TOKEN_ERRORS, ACCOUNT_ERRORS, ...NEW_FACTOR_PROOF_ERRORS, STEP_UP, SETUP_TOKEN),
      ].join('\n'),
      body: RegistrationOptionsBody,
      response: { 200: CreationOptionsResponse, ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.INVALID_CREDENTIALS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.STEP_UP_REQUIRED, MfaErrors.MFA_METHOD_UNAVAILABLE) },
    },
    preValidation: async (request) => {
      request.body ??= {};
    },
    preHandler: resolveSetup,
    config: { rateLimit: actors.limit('account') },
  }, async (request) => {
    actors.requireSetupMethod(request, 'passkey');
    const actor = actors.actorOf(request);
    if (actor.kind === 'challenge') return s.passkeys.registrationOptions(actor.user);
    await actors.proveForNewFactor(request, await s.factors.active(actor.user.id), request.body.current_password, 'passkey_registration');
    return s.passkeys.registrationOptions(actor.user);
  });

  app.post('/api/v1/passkeys/registration/verify', {
    schema: {
      tags, security: bearerOrToken, summary: 'Finish registering a passkey',
      description: [
        'Checks the device\'s answer (origin among `WEBAUTHN_ORIGINS`, relying party `WEBAUTHN_RP_ID`, user verified) and stores the passkey under `name`; the first passkey activates the `passkey` second factor. Audited (`PASSKEY_REGISTERED`); the account holder is told by email (else SMS).',
        '',
        `${CALLER} With a set-up token the sign-in then finishes: \`sign_in\` carries the tokens and the session (\`mfa_completed: true\`), and the token is spent.`,
        '',
        bullets(SESSION, TOKEN_ERRORS, ACCOUNT_ERRORS, CHALLENGE, '`400 PASSKEY_REGISTRATION_FAILED`: the answer did not verify (`details.reason`: `origin`, `relying_party`, `user_verification`, `challenge`, `malformed`).', '`409 PASSKEY_ALREADY_REGISTERED`: this credential is registered already.', STEP_UP, SETUP_TOKEN,
          '`401 TOKEN_REVOKED` with a set-up token: a second factor was set up with it already (a parallel answer).', AFTER_FACTOR_PASSWORD_CHANGE),
      ].join('\n'),
      body: RegistrationBody,
      response: { 200: RegisteredPasskey, ...errors(...SECOND_FACTOR_ERRORS, E.PASSKEY_CHALLENGE_INVALID, E.PASSKEY_REGISTRATION_FAILED, E.PASSKEY_ALREADY_REGISTERED, MfaErrors.STEP_UP_REQUIRED) },
    },
    preHandler: resolveSetup,
    config: { rateLimit: actors.limit('account') },
  }, async (request) => {
    actors.requireSetupMethod(request, 'passkey');
    const actor = actors.actorOf(request);
    const body = request.body;
    const response = body.response as unknown as RegistrationResponseJSON;
    if (actor.kind === 'challenge') {
      const passkey = await s.passkeys.register(actor.user, body.challenge_id, body.name, response, auditContext(actors.ctxOf(request)), { firstFactor: true });
      return { ...passkey, sign_in: await actors.finish(request, actor.challenge, 'passkey') };
    }
    const enrolled = await s.factors.active(actor.user.id);
    // A first passkey was allowed by the password at the options step; later ones need the step-up still.
    if (enrolled.length > 0) await s.challenges.requireRecentStepUp(actor.auth, enrolled);
    return s.passkeys.register(actor.user, body.challenge_id, body.name, response, auditContext(actors.ctxOf(request)));
  });
}

function ownerRoutes(app: App, s: PasskeyRouteDeps): void {
  const actors = routeActors(s);
  app.get('/api/v1/passkeys', {
    config: { personalData: true },
    schema: { tags, security, summary: 'List my passkeys', description: `Oldest first; never a public key or a credential id.\n\n${bullets(SESSION)}`, response: { 200: PasskeyList } },
    onRequest: s.guard.authenticate,
  }, async (request) => ({ passkeys: await s.passkeys.list(await actors.signedInUser(request)) }));

  app.patch('/api/v1/passkeys/:id', {
    schema: {
      tags, security, summary: 'Rename one of my passkeys', description: `Audited (\`PASSKEY_RENAMED\`).\n\n${bullets(SESSION, '`404 PASSKEY_NOT_FOUND`: the account has no passkey with this id.')}`,
      params: PasskeyParams, body: RenameBody, response: { 200: Passkey, ...errors(E.PASSKEY_NOT_FOUND) },
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: actors.limit('account') },
  }, async (request) => s.passkeys.rename(await actors.signedInUser(request), request.params.id, request.body.name, auditContext(mfaContext(request))));

  app.delete('/api/v1/passkeys/:id', {
    schema: {
      tags, security, summary: 'Delete one of my passkeys',
      description: `Needs a second factor proved in this session in the last 10 minutes. Deleting the last passkey removes the \`passkey\` second factor. Audited (\`PASSKEY_DELETED\`).\n\n${bullets(SESSION, STEP_UP, '`404 PASSKEY_NOT_FOUND`: the account has no passkey with this id.')}`,
      params: PasskeyParams, response: { 200: Deleted, ...errors(E.PASSKEY_NOT_FOUND, MfaErrors.STEP_UP_REQUIRED) },
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: actors.limit('account') },
  }, async (request) => {
    const user = await actors.signedInUser(request);
    await requireStepUp(s, request, user.id);
    return s.passkeys.delete(user, request.params.id, { ctx: auditContext(mfaContext(request)) });
  });
}

function stepUpRoutes(app: App, s: PasskeyRouteDeps): void {
  const actors = routeActors(s);
  app.post('/api/v1/auth/passkey/step-up/options', {
    schema: {
      tags, security, summary: 'Step-up with a passkey: options',
      description: `Request options listing the account's passkeys, for \`navigator.credentials.get()\`; the answer goes to \`POST /api/v1/auth/passkey/step-up/verify\`.\n\n${bullets(SESSION, '`400 MFA_METHOD_UNAVAILABLE`: the account has no passkey.')}`,
      body: EmptyBody, response: { 200: RequestOptionsResponse, ...errors(MfaErrors.MFA_METHOD_UNAVAILABLE) },
    },
    preValidation: async (request) => {
      request.body ??= {};
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: actors.limit('second_factor') },
  }, async (request) => {
    const user = await actors.signedInUser(request);
    if ((await s.passkeys.store.list(user.id)).length === 0) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'passkey' });
    return s.passkeys.assertionOptions({ purpose: 'step_up', userId: user.id });
  });

  app.post('/api/v1/auth/passkey/step-up/verify', {
    schema: {
      tags, security, summary: 'Step-up with a passkey',
      description: `The session records a fresh second factor (\`mfa_completed\`, \`verified_at\`), as the other factors' step-ups do.\n\n${bullets(SESSION, CHALLENGE, '`401 PASSKEY_INVALID`: the answer did not verify (wrong origin, signature, a passkey of another account, a counter that went back).', '`429 MFA_LOCKED`: too many failed second factors (`MFA_MAX_FAILURES`).')}`,
      body: AssertionBody, response: { 200: StepUpResponse, ...errors(E.PASSKEY_CHALLENGE_INVALID, E.PASSKEY_INVALID, MfaErrors.MFA_LOCKED) },
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: actors.limit('second_factor') },
  }, async (request) => {
    const user = await actors.signedInUser(request);
    const ctx = mfaContext(request);
    await checkPasskeyFactor(s, user, ctx, { purpose: 'step_up', userId: user.id }, request.body.challenge_id, request.body.response as unknown as AuthenticationResponseJSON);
    return s.challenges.stepUp(request.auth!, user, 'passkey', ctx);
  });
}
