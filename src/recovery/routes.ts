/**
 * Account recovery routes: initiate, verify-identity, status and cancel. They are called before
 * any sign-in (transport encryption's pre-auth routes), and rate limited in the `recovery` group:
 * per client network, and per identifier (initiate) or per `recovery_id` (verify-identity), so
 * wrong answers count toward the group's limit as well as toward the proof's attempts.
 */
import type { FastifyPluginAsync } from 'fastify';
import { mfaContext } from '../mfa/challenge.js';
import { OtpErrors } from '../mfa/otp/errors.js';
import { SecurityQuestionErrors } from '../mfa/security-questions/errors.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import { bodyField } from '../policy/route-limits.js';
import { RecoveryErrors as E } from './errors.js';
import { HandleBody, InitiateBody, RecoveryStarted, RecoveryStatus, RecoveryStep, VerifyBody } from './schemas.js';
import type { RecoveryService } from './service.js';

export interface RecoveryRouteDeps {
  recovery: RecoveryService;
}

const tags = ['Account recovery'];

const NOT_FOUND = '`404 RECOVERY_NOT_FOUND`: no workflow has this `recovery_id` (it says nothing about any account).';
const STALE = '`409 RECOVERY_STALE`: the workflow has ended (`details.state`: completed, cancelled, expired or rejected).';

export function recoveryRoutes(s: RecoveryRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;

    app.post('/api/v1/auth/reset/initiate', {
      schema: {
        tags, summary: 'Start recovering an account',
        description: [
          'Names the account (username, email address, or phone number in E.164) and what was lost. The answer is always `202` with the same body, whether the account exists, is disabled, or is real: a `recovery_id` and the proofs that would suffice (`proofs.alternatives`, the bank\'s setting for what was lost, never what this account has enrolled). Then give proofs one at a time with `POST /api/v1/auth/reset/verify-identity`.',
          '',
          'One workflow per account and lost thing is active at a time; starting another meanwhile answers alike but leads nowhere. When a real workflow starts, the account\'s email address on file is told. A workflow lives `RECOVERY_TTL_MINUTES` (30 by default).',
        ].join('\n'),
        body: InitiateBody,
        response: { 202: RecoveryStarted },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('identifier') } },
    }, async (request, reply) => {
      const started = await s.recovery.initiate(request.body.identifier, request.body.lost, mfaContext(request));
      return reply.status(202).send(started);
    });

    app.post('/api/v1/auth/reset/verify-identity', {
      schema: {
        tags, summary: 'Give one proof of identity',
        description: [
          'One proof per call; the answer is the workflow\'s status, plus what the step produced.',
          '',
          '- `email_code`, `sms_code`: without `code`, a code is sent to the contact on file (answer `sent`, with the masked destination; `OTP_RESEND_SECONDS` apart, `OTP_MAX_SENDS` in all); with `code`, it is checked.',
          '- `security_questions`: without `answers`, the questions to answer (`questions`, the same on every call); with `answers`, one per question, all are checked.',
          '- `totp`, `backup_code`: `code`. `password`: `password`. `pin`: `pin`.',
          '',
          'Knowledge (security answers, the password, the PIN) is accepted only after a possession proof (a code, an authenticator or backup code) of an alternative that holds it. Each proof has 3 attempts in a workflow; once no alternative can be met any more, the workflow is `rejected`. When an alternative is met, a lost password or PIN completes the workflow at once: every session of the account ends, and the answer carries `reset_token` (single use, `RESET_TOKEN_EXPIRE_MINUTES`) for `reset_with` (`POST /api/v1/auth/reset/password` or `/reset/pin`), this once. Lost second factors or a device stay `verified`: completing them needs a branch\'s approval, not yet offered.',
          '',
          bullets(
            '`400 RECOVERY_PROOF_NOT_OFFERED`: the proof does not count for what was lost (`details.options`).',
            '`400 RECOVERY_INVALID_STATE`: `details.reason` `possession_proof_first`, `no_code_sent`, `questions_not_asked` or `already_verified`.',
            '`401 RECOVERY_PROOF_INVALID`: wrong code or answer; `details.attempts_left`, `details.state`.',
            '`401 RECOVERY_CODE_EXPIRED`: the code has expired; ask for a new one (no attempt is spent).',
            NOT_FOUND,
            STALE,
            '`409 RECOVERY_PROOF_ALREADY_GIVEN`: this proof was given already in this workflow.',
            '`422 SECURITY_ANSWERS_MISMATCH`: the answers do not name exactly the questions asked; `422 VALIDATION_ERROR`: a field the proof does not take, or a missing one.',
            '`429 RECOVERY_PROOF_LOCKED`: the proof\'s attempts are spent (with `Retry-After` when the account\'s own counter for it is locked for a while); `429 OTP_RESEND_THROTTLED`, `429 OTP_SEND_LIMIT`: codes asked for too soon or too often.',
          ),
        ].join('\n'),
        body: VerifyBody,
        response: {
          200: RecoveryStep,
          ...errors(
            E.RECOVERY_PROOF_NOT_OFFERED, E.RECOVERY_INVALID_STATE, E.RECOVERY_PROOF_INVALID, E.RECOVERY_CODE_EXPIRED, E.RECOVERY_NOT_FOUND, E.RECOVERY_STALE,
            E.RECOVERY_PROOF_ALREADY_GIVEN, SecurityQuestionErrors.SECURITY_ANSWERS_MISMATCH, CommonErrors.VALIDATION_ERROR, E.RECOVERY_PROOF_LOCKED,
            OtpErrors.OTP_RESEND_THROTTLED, OtpErrors.OTP_SEND_LIMIT, CommonErrors.RATE_LIMITED,
          ),
        },
      },
      config: { rateLimit: { group: 'recovery', account: bodyField('recovery_id') } },
    }, async (request) => {
      const { recovery_id: handle, ...input } = request.body;
      return s.recovery.verify(handle, input, mfaContext(request));
    });

    app.post('/api/v1/auth/reset/status', {
      schema: {
        tags, summary: 'Where a recovery stands',
        description: `The workflow's state, the proofs given and still needed, each proof's attempts left and (once a code went out) its masked destination, and when it expires or completed. A workflow past its time answers \`expired\`.\n\n${bullets(NOT_FOUND)}`,
        body: HandleBody,
        response: { 200: RecoveryStatus, ...errors(E.RECOVERY_NOT_FOUND) },
      },
      config: { rateLimit: { group: 'recovery' } },
    }, async (request) => s.recovery.status(request.body.recovery_id));

    app.post('/api/v1/auth/reset/cancel', {
      schema: {
        tags, summary: 'Cancel a recovery',
        description: `Ends an active workflow as \`cancelled\` and answers its status; its codes and proofs are void.\n\n${bullets(NOT_FOUND, STALE)}`,
        body: HandleBody,
        response: { 200: RecoveryStatus, ...errors(E.RECOVERY_NOT_FOUND, E.RECOVERY_STALE) },
      },
      config: { rateLimit: { group: 'recovery' } },
    }, async (request) => s.recovery.cancel(request.body.recovery_id, mfaContext(request)));
  };
}
