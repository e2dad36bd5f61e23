/**
 * The push-approval routes: enrolment (bearer), the sign-in's request and completion (with the
 * `two_factor_token`; transport pre-auth routes), a signed-in session's step-up (bearer, bound to
 * that session), and the phone's view and answer (bearer of the phone's own session, the answer
 * signed by the enrolled key). Both completions may be long polls (`wait_seconds`).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { mfaContext, type ChallengeService } from '../mfa/challenge.js';
import { MfaErrors } from '../mfa/errors.js';
import type { FactorStore } from '../mfa/factors.js';
import { NEW_FACTOR_PROOF_ERRORS, routeActors, type RouteActorDeps } from '../mfa/route-actors.js';
import { ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, TOKEN_ERRORS } from '../mfa/schemas.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import { PolicyErrors } from '../policy/errors.js';
import type { Guard } from '../sessions/guard.js';
import { SECOND_FACTOR_ERRORS } from '../signin/error-sets.js';
import { SignInErrors } from '../signin/errors.js';
import { SignInResponseSchema } from '../signin/routes.js';
import { PushApprovalErrors as E } from './errors.js';
import { StepUpResponse } from '../mfa/schemas.js';
import { AnswerBody, AnswerResponse, CompleteBody, ConfirmBody, ConfirmResponse, RequestBody, RequestParams, RequestResponse, RequestView, SetupBody, SetupResponse, StepUpCompleteBody, StepUpRequestBody } from './schemas.js';
import type { PushApprovalService, Wait } from './service.js';
import type { Waiters } from './waiters.js';

export const tags = ['Push approval'];
/** The confirmation's body limit: a chain of 10 certificates of 8 KiB (base64), encrypted by the transport. */
export const CONFIRM_BODY_LIMIT = 256 * 1024;
const security = [{ bearer: [] }];
const SESSION = '`401 TOKEN_*`, `401 SESSION_*`: no valid session.';
const STEP_UP = '`403 STEP_UP_REQUIRED`: the account has a second factor (`push_approval` included) and this session has not proved one in the last 10 minutes.';
const NOT_OFFERED = '`400 MFA_METHOD_UNAVAILABLE`: the challenge does not offer `push_approval`.';
const WAITING = 'With `wait_seconds` (a long poll), a request the phone has not answered holds the answer until it is approved, denied or expired, or the wait ends; the answers are the same.';
const PENDING = '`409 PUSH_APPROVAL_PENDING` (with `Retry-After: 2`): the phone has not answered yet (or not within `wait_seconds`).';
const DENIED = '`403 PUSH_APPROVAL_DENIED`: denied (`details.reason`: `denied`, `wrong_number`, `fraud_reported`; `superseded` by a newer request; `factor_removed` with the factor).';
const EXPIRED = '`410 PUSH_APPROVAL_EXPIRED`: the phone did not answer within 5 minutes: ask for a new request.';
const STALE = '`410 PUSH_APPROVAL_EXPIRED` (`details.reason: approval_stale`): the phone approved more than 2 minutes ago and the approval was not used: ask for a new request.';
const LOCKED = '`429 MFA_LOCKED` (with `Retry-After`): too many failed second factors (`MFA_MAX_FAILURES`; a wrong number counts).';
const ASKING = [
  '`403 PUSH_APPROVAL_DENIED`: a request of this sign-in or session was answered with a wrong number (`details.reason: wrong_number`), or the user reported a request as fraud in the last `PUSH_APPROVAL_FRAUD_PAUSE_HOURS` (`details.reason: fraud_reported`): push approval is paused for the account.',
  '`429 PUSH_APPROVAL_TOO_MANY` (with `Retry-After`): the account was sent `PUSH_APPROVAL_MAX_PER_HOUR` requests (5 by default) in the last hour.',
  LOCKED,
  '`503 PUSH_APPROVAL_UNAVAILABLE`: push is not configured, or the enrolled phone\'s device token is no longer active.',
] as const;

export interface PushApprovalRouteDeps extends RouteActorDeps {
  guard: Guard;
  challenges: ChallengeService;
  factors: Pick<FactorStore, 'active'>;
  pushApproval: PushApprovalService;
  waiters: Waiters;
}

export function pushApprovalRoutes(s: PushApprovalRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    // The server is closing: held pages are answered now (as polls), not at the end of their wait.
    instance.addHook('preClose', async () => s.waiters.close());
    enrolmentRoutes(app, s);
    signInRoutes(app, s);
    stepUpRoutes(app, s);
    phoneRoutes(app, s);
  };
}

/** The long poll of a completion: `wait_seconds`, ended early when the client goes away. */
function waitOf(reply: FastifyReply, waitSeconds: number | undefined): Wait {
  if (!waitSeconds) return { ms: 0 };
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return { ms: waitSeconds * 1000, signal: gone.signal };
}

function enrolmentRoutes(app: App, s: PushApprovalRouteDeps): void {
  const actors = routeActors(s);
  app.post('/api/v1/2fa/push-approval/setup', {
    schema: {
      tags, security, summary: 'Start enrolling the phone for push approval',
      description: [
        'The phone sends the `id` of its active mobile device token, and the public key of the P-256 key pair it made in its secure hardware, or no key yet: an Android key attests the challenge, so it is made after this call and sent with the confirmation. The answer is a challenge the phone signs (and names in its key attestation) and sends to `POST /api/v1/2fa/push-approval/confirm` within 5 minutes, and whether that confirmation needs a key attestation (`attestation`). Starting again (a new phone) needs a recent step-up when a second factor, `push_approval` included, is enrolled; the working key keeps approving until the new one is confirmed, and is then replaced (the previous phone can no longer approve).',
        '',
        bullets(SESSION, ...NEW_FACTOR_PROOF_ERRORS, STEP_UP,
          '`400 PUSH_APPROVAL_KEY_INVALID`: `public_key` is not a P-256 public key (SPKI DER, base64url).',
          '`404 PUSH_APPROVAL_DEVICE_NOT_FOUND`: `device_id` is not one of the account\'s active mobile devices.'),
      ].join('\n'),
      body: SetupBody,
      response: { 200: SetupResponse, ...errors(SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.STEP_UP_REQUIRED, E.PUSH_APPROVAL_KEY_INVALID, E.PUSH_APPROVAL_DEVICE_NOT_FOUND) },
    },
    onRequest: s.guard.authenticate,
    preHandler: actors.resolve(['signin']),
    config: { rateLimit: actors.limit('account') },
  }, async (request) => {
    const user = actors.actorOf(request).user;
    // Every enrolled factor counts, push_approval too: a stolen session and the password must not
    // replace the user's phone (a push-only user steps up with the old phone: POST /api/v1/auth/push-approval/step-up/request).
    await actors.proveForNewFactor(request, await s.factors.active(user.id), request.body.current_password, 'push_approval_setup');
    return s.pushApproval.setup(user, request.body.device_id, request.body.public_key);
  });

  app.post('/api/v1/2fa/push-approval/confirm', {
    schema: {
      tags, security, summary: 'Finish enrolling the phone for push approval',
      description: [
        'The phone\'s signature over `strongroom-push-approval-enrol|<user id>|<challenge>` (the user\'s `id`, as `GET /api/v1/users/me` gives it) proves it holds the key (given at setup, or now as `public_key` when the setup had none); its key attestation (`attestation`: Android Key Attestation, or iOS App Attest) proves the key was made in secure hardware, for this enrolment, by the bank\'s app. Checked in that order; then the key replaces the working one, and the `push_approval` second factor is active. Audited (`MFA_ENROLLED`, with the attestation\'s level).',
        '',
        'With `PUSH_APPROVAL_ATTESTATION=required` (production\'s default) the attestation must be sent; with `optional` one sent must verify, and none is accepted (`attestation: none`); with `off` it is not looked at.',
        '',
        bullets(SESSION, STEP_UP,
          '`400 PUSH_APPROVAL_SETUP_EXPIRED`: no enrolment is waiting, or its challenge expired (5 minutes).',
          '`422 VALIDATION_ERROR` (field `public_key`): the setup had no key and none is sent, or the one sent is not the setup\'s.',
          '`400 PUSH_APPROVAL_KEY_INVALID`: the `public_key` sent is not a P-256 public key (SPKI DER, base64url).',
          '`401 PUSH_APPROVAL_SIGNATURE_INVALID`: the signature does not verify with that key (audited `MFA_FAILED`).',
          '`400 PUSH_APPROVAL_ATTESTATION_REQUIRED`: attestation is required and none is sent (audited `MFA_FAILED`).',
          '`400 PUSH_APPROVAL_ATTESTATION_INVALID`: the attestation does not verify; `details.reason` says why (`software_key`, `challenge_mismatch`, `key_mismatch`, `app_mismatch`, `chain_untrusted`, `chain_extended`, `key_imported`, `environment_refused`, `platform_not_accepted`, ...; docs/push-approval.md) (audited `MFA_FAILED`).'),
      ].join('\n'),
      body: ConfirmBody,
      response: { 200: ConfirmResponse, ...errors(MfaErrors.STEP_UP_REQUIRED, E.PUSH_APPROVAL_SETUP_EXPIRED, E.PUSH_APPROVAL_KEY_INVALID, E.PUSH_APPROVAL_SIGNATURE_INVALID, E.PUSH_APPROVAL_ATTESTATION_REQUIRED, E.PUSH_APPROVAL_ATTESTATION_INVALID) },
    },
    onRequest: s.guard.authenticate,
    // Up to 10 certificates of up to 8 KiB in base64: more than the default body limit.
    bodyLimit: CONFIRM_BODY_LIMIT,
    config: { rateLimit: actors.limit('account') },
  }, async (request) => {
    const user = await actors.signedInUser(request);
    const enrolled = await s.factors.active(user.id);
    if (enrolled.length > 0) await s.challenges.requireRecentStepUp(request.auth!, enrolled);
    return s.pushApproval.confirm(user, request.body, mfaContext(request));
  });
}

function signInRoutes(app: App, s: PushApprovalRouteDeps): void {
  const actors = routeActors(s);
  const resolveSignIn = actors.resolve(['signin']);
  app.post('/api/v1/auth/push-approval/request', {
    schema: {
      tags, summary: 'Second factor by push approval: ask the phone',
      description: [
        'After `401 2FA_REQUIRED` whose `methods` include `push_approval`: sends a data push (`{type: "push_approval", request_id}`, never the number) to the enrolled phone, and answers the number the sign-in page shows. The phone picks that number among three and approves; the page then calls `POST /api/v1/auth/push-approval/complete`. Audited (`MFA_REQUIRED`).',
        '',
        'One pending request per account: asking again with the same `two_factor_token` while it is pending answers the same `request_id` and number, and sends nothing (a push is sent once, never retried); a request for another sign-in denies the pending one (`reason: superseded`). After a plain denial, a supersession or expiry, asking again sends a new request with a new number; after a wrong number, this `two_factor_token` asks no more.',
        '',
        bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, NOT_OFFERED, ...ASKING),
      ].join('\n'),
      body: RequestBody,
      response: { 200: RequestResponse, ...errors(...SECOND_FACTOR_ERRORS, E.PUSH_APPROVAL_DENIED, E.PUSH_APPROVAL_TOO_MANY, E.PUSH_APPROVAL_UNAVAILABLE) },
    },
    preHandler: resolveSignIn,
    config: { rateLimit: actors.limit('second_factor') },
  }, async (request) => {
    const challenge = actors.challengeOf(request);
    if (!challenge.claims.methods.includes('push_approval')) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'push_approval' });
    return s.pushApproval.request(challenge.user, { purpose: 'sign_in', jti: challenge.claims.jti }, actors.ctxOf(request));
  });

  app.post('/api/v1/auth/push-approval/complete', {
    schema: {
      tags, summary: 'Finish a sign-in approved on the phone',
      description: [
        'Call this route after `POST /api/v1/auth/push-approval/request` (the sign-in page has no access token, so no real-time channel) with `wait_seconds: 25` and again at once while it answers `409 PUSH_APPROVAL_PENDING`, or without it every `Retry-After` seconds: once the phone approved with the right number, it issues the tokens and the session (`user_profile.mfa_completed: true`), spends the `two_factor_token` and clears the count of failed second factors.',
        '',
        WAITING,
        '',
        bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, AFTER_FACTOR_PASSWORD_CHANGE, NOT_OFFERED, PENDING, DENIED, EXPIRED, STALE,
          '`404 PUSH_APPROVAL_NOT_FOUND`: no such request for this `two_factor_token`.',
          '`409 PUSH_APPROVAL_USED`: a parallel completion used this approval.', LOCKED),
      ].join('\n'),
      body: CompleteBody,
      response: { 200: SignInResponseSchema, ...errors(...SECOND_FACTOR_ERRORS, E.PUSH_APPROVAL_PENDING, E.PUSH_APPROVAL_DENIED, E.PUSH_APPROVAL_EXPIRED, E.PUSH_APPROVAL_NOT_FOUND, E.PUSH_APPROVAL_USED) },
    },
    preHandler: resolveSignIn,
    config: { rateLimit: actors.limit('push_approval_wait') },
  }, async (request, reply) => {
    const challenge = actors.challengeOf(request);
    if (!challenge.claims.methods.includes('push_approval')) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'push_approval' });
    const binding = { purpose: 'sign_in', jti: challenge.claims.jti } as const;
    const approved = await s.pushApproval.outcome(challenge.user.id, binding, request.body.request_id, waitOf(reply, request.body.wait_seconds));
    // Spent before the session is issued: a factor removed meanwhile denied it, and the sign-in stops here.
    await s.pushApproval.spend(challenge.user.id, binding, approved);
    const signedIn = await actors.finish(request, challenge, 'push_approval');
    await s.pushApproval.signInFinished(challenge.user.id); // only now: an approval alone does not clear the failures
    return signedIn;
  });
}

function stepUpRoutes(app: App, s: PushApprovalRouteDeps): void {
  const actors = routeActors(s);
  app.post('/api/v1/auth/push-approval/step-up/request', {
    schema: {
      tags, security, summary: 'Step-up with push approval: ask the phone',
      description: [
        'A signed-in session proves the `push_approval` factor again (before adding or replacing a factor, enrolling a new phone, deleting the enrolled phone\'s device token...): sends a data push (`{type: "push_approval", request_id}`) to the enrolled phone, whose screen says a signed-in session asks to confirm it is the user (`purpose: step_up`), and answers the number this page shows. Then `POST /api/v1/auth/push-approval/step-up/complete` in the same session. Audited (`MFA_REQUIRED`).',
        '',
        'The request belongs to this session: no other session can complete it. The rules of sign-in requests hold: one pending request per account (asking again in this session while it is pending answers the same one and sends nothing; a request of another sign-in or session supersedes it), the hourly limit, and after a wrong number this session asks no more.',
        '',
        bullets(SESSION, '`400 MFA_METHOD_UNAVAILABLE`: the account has no `push_approval` factor.', ...ASKING),
      ].join('\n'),
      body: StepUpRequestBody,
      response: { 200: RequestResponse, ...errors(MfaErrors.MFA_METHOD_UNAVAILABLE, MfaErrors.MFA_LOCKED, E.PUSH_APPROVAL_DENIED, E.PUSH_APPROVAL_TOO_MANY, E.PUSH_APPROVAL_UNAVAILABLE) },
    },
    preValidation: async (request) => {
      request.body ??= {};
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: actors.limit('second_factor') },
  }, async (request) => {
    const user = await actors.signedInUser(request);
    if (!(await s.factors.active(user.id)).includes('push_approval')) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'push_approval' });
    return s.pushApproval.request(user, { purpose: 'step_up', sessionId: request.auth!.session.sessionId }, mfaContext(request));
  });

  app.post('/api/v1/auth/push-approval/step-up/complete', {
    schema: {
      tags, security, summary: 'Step-up with push approval: finish',
      description: [
        'Once the phone approved with the right number: the session records a fresh second factor (`mfa_completed`, `verified_at`), as the other factors\' step-ups do, and the count of failed second factors is cleared. Only the session that asked completes it, once. Call it with `wait_seconds: 25` and again at once while it answers `409 PUSH_APPROVAL_PENDING`, or without it every `Retry-After` seconds.',
        '',
        WAITING,
        '',
        bullets(SESSION, PENDING, DENIED, EXPIRED, STALE,
          '`404 PUSH_APPROVAL_NOT_FOUND`: no such request of this session (another session\'s request included).',
          '`409 PUSH_APPROVAL_USED`: this approval completed a step-up already.', LOCKED),
      ].join('\n'),
      body: StepUpCompleteBody,
      response: { 200: StepUpResponse, ...errors(E.PUSH_APPROVAL_PENDING, E.PUSH_APPROVAL_DENIED, E.PUSH_APPROVAL_EXPIRED, E.PUSH_APPROVAL_NOT_FOUND, E.PUSH_APPROVAL_USED, MfaErrors.MFA_LOCKED) },
    },
    onRequest: s.guard.authenticate,
    config: { rateLimit: actors.limit('push_approval_wait') },
  }, async (request, reply) => {
    const user = await actors.signedInUser(request);
    return s.pushApproval.completeStepUp(user, request.auth!, request.body.request_id, waitOf(reply, request.body.wait_seconds), mfaContext(request));
  });
}

function phoneRoutes(app: App, s: PushApprovalRouteDeps): void {
  const actors = routeActors(s);
  app.get('/api/v1/push-approval/requests/:id', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'A request waiting for my approval',
      description: [
        'What the phone shows before the user answers: what is asked (`purpose`: `sign_in`, a sign-in; `step_up`, a signed-in session confirming it is the user), the three numbers to pick from, where and on what the asking page is, and until when. Never the number itself.',
        '',
        bullets(SESSION, '`404 PUSH_APPROVAL_NOT_FOUND`: no such request for this account.'),
      ].join('\n'),
      params: RequestParams, response: { 200: RequestView, ...errors(E.PUSH_APPROVAL_NOT_FOUND) },
    },
    onRequest: s.guard.authenticate,
  }, async (request) => s.pushApproval.view(await actors.signedInUser(request), request.params.id));

  app.post('/api/v1/push-approval/requests/:id/answer', {
    schema: {
      tags, security, summary: 'Approve or deny a sign-in or a step-up',
      description: [
        'The phone\'s answer, signed by the enrolled key over `strongroom-push-approval:v1|<user id>|<request id>|<decision>|<choice, or empty>`, where the signed decision is `approve`, `deny`, or `deny_fraud` (a `deny` with `report_fraud: true`): an access token alone cannot answer. The first answer decides; approving with another number than the asking page shows denies the request (`wrong_number`, a failed second factor, and push approval ends for what asked: that sign-in\'s `two_factor_token`, or, for a step-up, that session). `report_fraud` with `deny` alerts the bank\'s security team, denies every pending request of the account, pauses push approval for `PUSH_APPROVAL_FRAUD_PAUSE_HOURS`, and, on a step-up, ends the session that asked for it (its next request answers `401 SESSION_INVALID`).',
        '',
        bullets(SESSION,
          '`422 VALIDATION_ERROR`: `approve` without `choice`.',
          '`401 PUSH_APPROVAL_SIGNATURE_INVALID`: the signature does not verify with the enrolled key (audited `MFA_FAILED`).',
          '`404 PUSH_APPROVAL_NOT_FOUND`: no such request for this account.',
          '`409 PUSH_APPROVAL_ANSWERED`: answered already.',
          '`410 PUSH_APPROVAL_EXPIRED`: the 5 minutes have passed.',
          '`429 MFA_LOCKED` (with `Retry-After`): too many failed second factors: no answer is taken until the lock ends.'),
      ].join('\n'),
      params: RequestParams, body: AnswerBody,
      response: { 200: AnswerResponse, ...errors(E.PUSH_APPROVAL_SIGNATURE_INVALID, E.PUSH_APPROVAL_NOT_FOUND, E.PUSH_APPROVAL_ANSWERED, E.PUSH_APPROVAL_EXPIRED, MfaErrors.MFA_LOCKED) },
    },
    onRequest: s.guard.authenticate,
    // Its own buckets: neither a page polling for this answer nor someone asking with the password spends them.
    config: { rateLimit: actors.limit('push_approval_answer') },
  }, async (request) => {
    const user = await actors.signedInUser(request);
    const body = request.body;
    if (body.decision === 'approve' && body.choice === undefined) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'choice', message: 'is required to approve' }] });
    return s.pushApproval.answer(user, request.params.id, body, mfaContext(request));
  });
}
