/**
 * Security-question errors (issue 4 section 4). Statuses: a refused answer is 401 like any
 * wrong credential; a spent, expired or foreign challenge is 409 (state conflict, ask for a new
 * one); a malformed set of answers is 422; the lock after 3 failures is 429 with Retry-After.
 */
import { defineErrors } from '../../platform/errors.js';

export const SecurityQuestionErrors = defineErrors({
  SECURITY_QUESTIONS_ALREADY_SET: { status: 409, message: 'Security questions are already set up; replace them with POST /api/v1/auth/reset/security-questions.' },
  SECURITY_QUESTIONS_NOT_SET: { status: 404, message: 'No security questions are set up for this account.' },
  SECURITY_QUESTION_UNKNOWN: { status: 422, message: 'A chosen question is not in the active question pool.' },
  SECURITY_QUESTIONS_DUPLICATE: { status: 422, message: 'Each question may be chosen only once.' },
  SECURITY_ANSWER_TOO_SHORT: { status: 422, message: 'Each answer must be at least 2 characters long, not counting spaces at either end.' },
  SECURITY_ANSWERS_DUPLICATE: { status: 422, message: 'Two questions have the same answer; give a different answer to each question.' },
  SECURITY_ANSWERS_MISMATCH: { status: 422, message: 'Answer exactly the questions of the challenge, each once.' },
  SECURITY_CHALLENGE_INVALID: { status: 409, message: 'This security-question challenge is unknown, expired or already used; start a new one.' },
  SECURITY_ANSWERS_INVALID: { status: 401, message: 'The answers are not correct. Start a new challenge to try again.' },
  SECURITY_QUESTIONS_LOCKED: { status: 429, message: 'Too many wrong answers; security questions are locked for now.' },
  SECURITY_QUESTION_NOT_FOUND: { status: 404, message: 'No such security question.' },
  SECURITY_QUESTION_EXISTS: { status: 409, message: 'The question pool already has this question.' },
});
