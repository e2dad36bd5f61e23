/**
 * Security-question routes (issue 4 section 4; SPEC "Security questions"). Knowledge-based
 * answers are never a sign-in factor: verifying them gives a signed-in session a step-up, or a
 * user stuck at `2FA_REQUIRED` a proof token for an MFA reset request, never access tokens.
 *
 * `/predefined`, `/setup`, `/verify` and the bare path are transport pre-auth routes: they
 * identify their caller in `preHandler`, after the body is decrypted (a bearer token, or the
 * `two_factor_token` in the body). `/delete`, the reset and the admin route are bearer routes.
 */
import Type from 'typebox';
import { auditContext } from '../../audit/service.js';
import { confirmCurrentPassword } from '../../credentials/reauth.js';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Guard } from '../../sessions/guard.js';
import type { Clock } from '../../platform/clock.js';
import type { TokenService } from '../../tokens/service.js';
import type { UserStore } from '../../users/store.js';
import { AdminErrors } from '../../admin/errors.js';
import type { App } from '../../platform/http/app.js';
import { CommonErrors } from '../../platform/errors.js';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../../platform/http/public-id.js';
import { bullets, errors, NO_NUL } from '../../platform/http/schemas.js';
import { MFA_RESET_PROOF_PURPOSE, mfaContext, type ChallengePurpose } from '../challenge.js';
import { routeActors, type RouteActorDeps } from '../route-actors.js';
import { ACCOUNT_ERRORS, StepUpResponse, TOKEN_ERRORS, TwoFactorToken } from '../schemas.js';
import { METHOD, type Operator, type SecurityQuestionService } from './service.js';
import { TOKEN_CHECK_ERRORS } from '../../signin/error-sets.js';
import { SecurityQuestionErrors as SQ } from './errors.js';
import { SignInErrors } from '../../signin/errors.js';
import { TokenErrors } from '../../tokens/errors.js';
import { PolicyErrors } from '../../policy/errors.js';

const tags = ['Security questions'];
const bearer = [{ bearer: [] }];
const PURPOSES: readonly ChallengePurpose[] = ['signin', 'setup'];

/** A pool question's public id: its uuid (the integer `id` of `security_questions` stays internal). */
export const QUESTION_ID: PublicIdKind = { what: 'security question', source: 'the `id` of the question in POST /api/v1/auth/security-questions/predefined', example: 'c7a1e5d2-4b9f-4e36-8d0a-5f2b9c6e1a38' };
/** Three more, for examples that name several questions. */
const EXAMPLE_IDS = ['0f4d8b6a-1c3e-4a57-9b2d-7e6f5a4c3b21', '6e2b9d14-8a7c-4f05-b3e1-2d9c0a8f7e65', 'b85c3f70-2e9d-4b1a-a6f4-9c0d7e3b5a12'] as const;
const QuestionId = publicIdSchema(QUESTION_ID);
const Question = Type.Object({ id: publicIdSchema(QUESTION_ID, 'The question\'s id (a uuid): what `question_id` names in setup, verification and retirement.'), text: Type.String({ examples: ['What was the name of your first pet?'] }) });
const Answer = Type.Object({
  question_id: QuestionId,
  answer: Type.String({
    minLength: 1, maxLength: 256, pattern: NO_NUL,
    description: 'Compared after normalising (Unicode NFKC, case folded, whitespace runs collapsed, trimmed): `  Nairobi   West ` equals `nairobi west`. At least 2 characters after that.',
    examples: ['Nairobi West'],
  }),
}, { additionalProperties: false });
const AnswerSet = Type.Array(Answer, { minItems: 3, maxItems: 5, description: '3 to 5 distinct active questions, each with its answer; no two answers alike.' });
const Configured = Type.Object({
  configured: Type.Integer({ description: 'How many questions are set', examples: [3] }),
  question_ids: Type.Array(QuestionId, { examples: [[...EXAMPLE_IDS]] }),
});
const SETUP_EXAMPLE = [{ question_id: EXAMPLE_IDS[0], answer: 'Simba' }, { question_id: EXAMPLE_IDS[1], answer: 'Mrs Wanjiru' }, { question_id: EXAMPLE_IDS[2], answer: 'Nairobi West' }];

/** A `preValidation` hook: an integer `question_id` in any of `answers` is refused, naming it (`answers.1.question_id`). */
const refuseIntegerAnswerIds = refuseIntegerIds(QUESTION_ID, { body: ['answers.*.question_id'] });

const LOCKED = '`429 SECURITY_QUESTIONS_LOCKED` (with `Retry-After`, `details.retry_after_seconds`): 3 wrong verifications lock the factor for `SECURITY_QUESTION_LOCKOUT_MINUTES` (30); right answers are refused meanwhile.';
const ANSWER_RULES = [
  '`422 SECURITY_QUESTION_UNKNOWN`: a question is not in the active pool (`details.question_ids`).',
  '`422 SECURITY_QUESTIONS_DUPLICATE`: the same question twice.',
  '`422 SECURITY_ANSWER_TOO_SHORT`: an answer shorter than 2 characters after normalising (`details.question_ids`).',
  '`422 SECURITY_ANSWERS_DUPLICATE`: two answers alike after normalising.',
  '`422 VALIDATION_ERROR`: fewer than 3 or more than 5 answers, an answer over 256 characters, unknown fields, a `question_id` that is not a question\'s uuid (an integer answers `details.expected: "uuid"`).',
];
const doc = (...parts: string[]): string => parts.join('\n\n');

export interface SecurityQuestionRouteDeps extends RouteActorDeps {
  clock: Clock;
  guard: Guard;
  tokens: TokenService;
  users: UserStore;
  securityQuestions: SecurityQuestionService;
}

/** What the answers of a setup or a replacement can be refused for. */
const ANSWER_CODES = [SQ.SECURITY_QUESTION_UNKNOWN, SQ.SECURITY_QUESTIONS_DUPLICATE, SQ.SECURITY_ANSWER_TOO_SHORT, SQ.SECURITY_ANSWERS_DUPLICATE];

export function securityQuestionRoutes(s: SecurityQuestionRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const { resolve, actorOf, ctxOf, signedInUser: signedIn, reauthenticate, limit } = routeActors(s);
    const operator = async (request: FastifyRequest): Promise<Operator> => ({ user: await signedIn(request), ctx: mfaContext(request) });

    app.post('/api/v1/auth/security-questions/predefined', {
      schema: {
        tags, security: bearer, summary: 'List the questions a user may choose',
        description: doc(
          'The active pool (at least 30 questions, managed by administrators). Not served anonymously: send a bearer token, or the `two_factor_token` of a sign-in in progress. The body may be empty (`{}`).',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS),
        ),
        body: Type.Object({ two_factor_token: Type.Optional(TwoFactorToken) }, { additionalProperties: false, examples: [{}] }),
        response: { 200: Type.Object({ questions: Type.Array(Question) }), ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED) },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
      preHandler: resolve(PURPOSES),
      config: { rateLimit: limit('account') },
    }, async () => ({ questions: await s.securityQuestions.pool() }));

    app.post('/api/v1/auth/security-questions/setup', {
      schema: {
        tags, security: bearer, summary: 'Choose and answer 3 to 5 security questions',
        description: doc(
          'First setup. Answers are normalised and stored bcrypt-hashed; they are never returned, logged or audited. Security questions serve step-up and MFA-reset recovery, never sign-in.',
          'Caller: a signed-in user (bearer) who confirms `current_password` (answers back an MFA reset: a stolen access token alone must not set them; wrong: `401 INVALID_CREDENTIALS`, counting toward the lockout; missing: `422 VALIDATION_ERROR`), or a user whose sign-in stopped at `403 MFA_SETUP_INCOMPLETE` (its `two_factor_token`). A `two_factor_token` of `401 2FA_REQUIRED` is refused (`401 TOKEN_INVALID`): that user already has a factor, and a password alone must not be enough to create the answers that back an MFA reset. So is the set-up token of a sign-in that did not look like the account holder\'s (`MFA_SETUP_INCOMPLETE` with `reason: "unusual_sign_in"`): it may enrol only a factor whose code goes to the contact on file.',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, '`409 SECURITY_QUESTIONS_ALREADY_SET`: questions are set; replace them with `POST /api/v1/auth/reset/security-questions`.', ...ANSWER_RULES),
        ),
        body: Type.Object({
          answers: AnswerSet,
          two_factor_token: Type.Optional(TwoFactorToken),
          current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Required with a bearer token.', examples: ['Vt7#qLm2!xRp9$'] })),
        }, { additionalProperties: false, examples: [{ answers: SETUP_EXAMPLE, current_password: 'Vt7#qLm2!xRp9$' }] }),
        response: { 201: Configured, ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, SQ.SECURITY_QUESTIONS_ALREADY_SET, ...ANSWER_CODES) },
      },
      preValidation: refuseIntegerAnswerIds,
      preHandler: resolve(['setup']),
      config: { rateLimit: limit('account') },
    }, async (request, reply) => {
      const actor = actorOf(request);
      // The set-up token of an unusual sign-in (the risk response policy's step-up) proves only the
      // password: it may enrol a factor whose code goes to the contact on file, not these answers.
      if (actor.kind === 'challenge' && actor.challenge.claims.by_contact === true) {
        throw TokenErrors.TOKEN_INVALID({ reason: 'this sign-in did not look like the account holder\'s: set up an email or SMS factor with this token first' });
      }
      await reauthenticate(request, request.body.current_password, 'security_questions_setup');
      const result = await s.securityQuestions.configure(actor.user, request.body.answers, ctxOf(request), 'setup');
      return reply.code(201).send(result);
    });

    app.post('/api/v1/auth/security-questions', {
      schema: {
        tags, security: bearer, summary: 'Start a security-question verification',
        description: doc(
          'Returns 2 or 3 of the user\'s questions, chosen at random, under a `challenge_id` valid 5 minutes and usable once. Until they are answered right, asking again returns the same questions (under a new `challenge_id`): asking repeatedly does not draw easier ones.',
          'With a bearer token the answers give the session a step-up; with a `two_factor_token` they give a proof for an MFA reset request (`POST /api/v1/auth/security-questions/verify`).',
          bullets(TOKEN_ERRORS, ACCOUNT_ERRORS, '`404 SECURITY_QUESTIONS_NOT_SET`: the user has no questions.', LOCKED),
        ),
        body: Type.Object({ two_factor_token: Type.Optional(TwoFactorToken) }, { additionalProperties: false, examples: [{}] }),
        response: {
          200: Type.Object({
            challenge_id: Type.String({ format: 'uuid', examples: ['0b6f5c1e-2f4a-4c55-9a43-1d8c2b7e9f10'] }),
            questions: Type.Array(Question, { minItems: 2, maxItems: 3 }),
            expires_in: Type.Integer({ description: 'Seconds the challenge stays valid', examples: [300] }),
          }),
          ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, SQ.SECURITY_QUESTIONS_NOT_SET, SQ.SECURITY_QUESTIONS_LOCKED),
        },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
      preHandler: resolve(PURPOSES),
      config: { rateLimit: limit('second_factor') },
    }, async (request) => s.securityQuestions.start(actorOf(request).user));

    app.post('/api/v1/auth/security-questions/verify', {
      schema: {
        tags, security: bearer, summary: 'Answer a security-question challenge',
        description: doc(
          'Every question of the challenge must be answered, and every answer must be right; all are checked each time. The challenge is spent by any answer, right or wrong.',
          '- With a bearer token (step-up): the answer is `{verified, method, session_id, verified_at}`, for a client to gate a sensitive screen. Knowledge answers are not a factor, so the session does not become `mfa_completed` (nor can it then ask for an MFA reset).\n- With a `two_factor_token` (recovery): the answer is `{verified, proof_token, proof_expires_in}`. The `proof_token` (10 minutes) proves password and answers to `POST /api/v1/auth/reset/mfa`. No access token is ever issued: security questions never finish a sign-in.',
          bullets(
            TOKEN_ERRORS, ACCOUNT_ERRORS,
            '`401 SECURITY_ANSWERS_INVALID`: at least one answer is wrong (`details.attempts_remaining`); start a new challenge.',
            '`409 SECURITY_CHALLENGE_INVALID`: the challenge is unknown, another user\'s, expired or used (`details.reason`).',
            '`422 SECURITY_ANSWERS_MISMATCH`: the answers are not exactly the challenge\'s questions (`details.question_ids`); the challenge is not spent.',
            LOCKED,
          ),
        ),
        body: Type.Object({
          challenge_id: Type.String({ format: 'uuid', examples: ['0b6f5c1e-2f4a-4c55-9a43-1d8c2b7e9f10'] }),
          answers: Type.Array(Answer, { minItems: 1, maxItems: 5 }),
          two_factor_token: Type.Optional(TwoFactorToken),
        }, { additionalProperties: false, examples: [{ challenge_id: '0b6f5c1e-2f4a-4c55-9a43-1d8c2b7e9f10', answers: [{ question_id: EXAMPLE_IDS[1], answer: 'Mrs Wanjiru' }, { question_id: EXAMPLE_IDS[2], answer: 'nairobi west' }] }] }),
        response: {
          200: Type.Union([
            StepUpResponse,
            Type.Object({
              verified: Type.Literal(true),
              proof_token: Type.String({ description: 'For `POST /api/v1/auth/reset/mfa`', examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0b2tlbl90eXBlIjoicmVzZXQifQ.sig'] }),
              proof_expires_in: Type.Integer({ description: 'Seconds', examples: [600] }),
            }, { title: 'Recovery proof' }),
          ]),
          ...errors(...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, SQ.SECURITY_ANSWERS_INVALID, SQ.SECURITY_CHALLENGE_INVALID, SQ.SECURITY_ANSWERS_MISMATCH, SQ.SECURITY_QUESTIONS_LOCKED),
        },
      },
      preValidation: refuseIntegerAnswerIds,
      preHandler: resolve(PURPOSES),
      config: { rateLimit: limit('second_factor') },
    }, async (request) => {
      const actor = actorOf(request);
      const ctx = ctxOf(request);
      await s.securityQuestions.verify(actor.user, request.body.challenge_id, request.body.answers, ctx);
      // Knowledge answers are not a factor: the session is not marked `mfa_completed` (which
      // would also let it ask for an MFA reset as "password and a factor").
      if (actor.kind === 'session') return { verified: true as const, method: METHOD, session_id: actor.auth.session.sessionId, verified_at: new Date(s.clock.now()).toISOString() };
      const proof = await s.tokens.issue('reset', { user_id: actor.user.uuid, purpose: MFA_RESET_PROOF_PURPOSE });
      return { verified: true as const, proof_token: proof.token, proof_expires_in: Math.max(1, Math.floor((proof.expiresAt - s.clock.now()) / 1000)) };
    });

    app.post('/api/v1/auth/security-questions/delete', {
      schema: {
        tags, security: bearer, summary: 'Remove a user\'s security questions, or retire a pool question',
        description: doc(
          'Needs permission `delete_security_question`. Send exactly one of:',
          '- `user_id`: removes every question and answer of that user (and any lock); they set new ones with setup. Audited as `SECURITY_QUESTIONS_DELETED` with the administrator.\n- `question_id` (the question\'s uuid, its `id` in `/predefined`): retires the question from the pool (no longer offered or accepted at setup). Users who chose it keep it until they reset theirs. Audited as `SECURITY_QUESTION_RETIRED`.',
          bullets(
            '`401 TOKEN_*`, `401 SESSION_*`: no valid session.',
            '`403 PERMISSION_DENIED`: the caller lacks `delete_security_question`.',
            '`404 USER_NOT_FOUND`, `404 SECURITY_QUESTION_NOT_FOUND`: no such user or question.',
            '`422 VALIDATION_ERROR`: neither or both of `user_id` and `question_id`; an integer `question_id` (`details.expected: "uuid"`).',
          ),
        ),
        body: Type.Object({
          user_id: Type.Optional(Type.String({ format: 'uuid', description: 'The user whose questions go', examples: ['7d1c3f0a-9b2e-4e6f-8a51-2c4d6e8f0a1b'] })),
          question_id: Type.Optional(QuestionId),
        }, { additionalProperties: false, examples: [{ user_id: '7d1c3f0a-9b2e-4e6f-8a51-2c4d6e8f0a1b' }, { question_id: QUESTION_ID.example }] }),
        response: {
          200: Type.Union([
            Type.Object({ deleted: Type.Integer({ description: 'Answers removed', examples: [3] }) }, { title: 'User questions removed' }),
            Type.Object({ retired: QuestionId }, { title: 'Pool question retired' }),
          ]),
          ...errors(SQ.SECURITY_QUESTION_NOT_FOUND, AdminErrors.USER_NOT_FOUND),
        },
      },
      onRequest: s.guard.requirePermission('delete_security_question'),
      preValidation: refuseIntegerIds(QUESTION_ID, { body: ['question_id'] }),
      config: { rateLimit: limit('account') },
    }, async (request) => {
      const { user_id: userId, question_id: questionId } = request.body;
      if ((userId === undefined) === (questionId === undefined)) {
        throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: '(root)', message: 'give exactly one of user_id or question_id' }] });
      }
      const by = await operator(request);
      if (questionId !== undefined) return { retired: await s.securityQuestions.retire(questionId, by) };
      const target = await s.users.findByUuid(userId!);
      if (!target) throw AdminErrors.USER_NOT_FOUND();
      return { deleted: await s.securityQuestions.removeForUser(target, by) };
    });

    app.post('/api/v1/auth/reset/security-questions', {
      schema: {
        tags, security: bearer, summary: 'Replace your security questions',
        description: doc(
          'Needs a bearer token and the current password; replaces every question and answer (and clears a security-question lock, which was about the old answers). A wrong password counts toward the account lockout.',
          bullets(
            '`401 TOKEN_*`, `401 SESSION_*`: no valid session.',
            '`401 INVALID_CREDENTIALS`: wrong current password; `429 ACCOUNT_LOCKED` (with `Retry-After`) after too many.',
            ...ANSWER_RULES,
          ),
        ),
        body: Type.Object({ current_password: Type.String({ minLength: 1, maxLength: 1024, examples: ['Vt7#qLm2!xRp9$'] }), answers: AnswerSet }, { additionalProperties: false, examples: [{ current_password: 'Vt7#qLm2!xRp9$', answers: SETUP_EXAMPLE }] }),
        response: { 200: Configured, ...errors(SignInErrors.INVALID_CREDENTIALS, PolicyErrors.ACCOUNT_LOCKED, ...ANSWER_CODES) },
      },
      onRequest: s.guard.authenticate,
      preValidation: refuseIntegerAnswerIds,
      config: { rateLimit: limit('account') },
    }, async (request) => {
      const user = await signedIn(request);
      const ctx = mfaContext(request);
      await confirmCurrentPassword(s, user, request.body.current_password, auditContext(ctx), 'reset_security_questions');
      return s.securityQuestions.configure(user, request.body.answers, ctx, 'reset');
    });

    app.post('/api/v1/admin/security-questions', {
      schema: {
        tags, security: bearer, summary: 'Add a question to the pool',
        description: doc(
          'Needs permission `security_questions.manage`. Good questions have answers that are stable, memorable, and not public (not on social media). Whitespace runs are collapsed. Retire a question with `POST /api/v1/auth/security-questions/delete` `{question_id}`.',
          bullets(
            '`401 TOKEN_*`, `401 SESSION_*`: no valid session.',
            '`403 PERMISSION_DENIED`: the caller lacks `security_questions.manage`.',
            '`409 SECURITY_QUESTION_EXISTS`: the pool has the same text (any letter case), active or retired.',
            '`422 VALIDATION_ERROR`: text not 10 to 200 characters, not ending with `?`, or with control characters.',
          ),
        ),
        body: Type.Object({
          text: Type.String({ minLength: 10, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f\\s][^\\u0000-\\u001f\\u007f]*\\?$', description: 'The question, ending with `?`', examples: ['What was the name of your first football team?'] }),
        }, { additionalProperties: false }),
        response: { 201: Question, ...errors(SQ.SECURITY_QUESTION_EXISTS) },
      },
      onRequest: s.guard.requirePermission('security_questions.manage'),
    }, async (request, reply) => reply.code(201).send(await s.securityQuestions.add(request.body.text, await operator(request))));
  };
}

