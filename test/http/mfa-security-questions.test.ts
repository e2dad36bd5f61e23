/**
 * Security questions (issue 4 section 4; SPEC "Security questions", "Second factors"): the pool,
 * setup and its rules, normalised and hashed answers, random 2-3 question challenges, the lock
 * after 3 failures (also under a burst), step-up and the MFA-reset proof, never sign-in, the
 * delete permission, reset, and hostile input.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MFA_RESET_PROOF_PURPOSE } from '../../src/mfa/challenge.js';
import type { UserRow } from '../../src/users/store.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const MINUTE = 60_000;
const BASE = '/api/v1/auth/security-questions';

let t: TestApp;
let adminToken: string;
let pool: Array<{ id: string; text: string }>;

type Res = Awaited<ReturnType<typeof login>>;
interface Challenge { challenge_id: string; questions: Array<{ id: string; text: string }>; expires_in: number }
/** A user's chosen questions: question id (a uuid) -> the answer as given at setup. */
type Answers = Map<string, string>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A well-formed question id no question has. */
const NO_QUESTION = '00000000-0000-4000-8000-000000000000';

function post(url: string, payload: unknown, token?: string, headers: Record<string, string> = {}): Promise<Res> {
  return t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers: token ? bearer(token, headers) : headers });
}

const asList = (a: Answers) => [...a].map(([question_id, answer]) => ({ question_id, answer }));

/** Answers for the questions of a challenge, from `given` (default: what was set up). */
function reply(ch: Challenge, given: Answers) {
  return ch.questions.map((q) => ({ question_id: q.id, answer: given.get(q.id)! }));
}

/** The first `n` pool questions, answered with `texts`. */
function choose(texts: string[], offset = 0): Answers {
  return new Map(texts.map((text, i) => [pool[offset + i]!.id, text]));
}

async function startChallenge(token: string, extra: Record<string, unknown> = {}): Promise<Challenge> {
  const res = await post(BASE, extra, extra.two_factor_token ? undefined : token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Challenge;
}

function verify(token: string | undefined, ch: Challenge, answers: Array<{ question_id: string; answer: string }>, extra: Record<string, unknown> = {}): Promise<Res> {
  return post(`${BASE}/verify`, { challenge_id: ch.challenge_id, answers, ...extra }, token);
}

/** A new customer with questions set up; returns their token and answers. */
async function userWithQuestions(name: string, answers: Answers): Promise<{ user: UserRow; token: string }> {
  const user = await seedUser(t.s, name);
  const token = (await signIn(t.app, name)).access_token;
  const res = await post(`${BASE}/setup`, { answers: asList(answers), current_password: STRONG_PASSWORD }, token);
  expect(res.statusCode, res.body).toBe(201);
  return { user, token };
}

beforeAll(async () => {
  t = await createTestApp({ env: { MFA_REQUIRED_ROLES: 'staff' } });
  await seedUser(t.s, 'root.admin', { roles: ['admin'], email: 'root@bank.example' });
  adminToken = (await signIn(t.app, 'root.admin')).access_token;
  const res = await post(`${BASE}/predefined`, {}, adminToken);
  pool = (res.json() as { questions: typeof pool }).questions;
});
afterAll(async () => t.close());

describe('POST /api/v1/auth/security-questions/predefined', () => {
  it('lists the active pool of at least 30 questions to a signed-in user', async () => {
    expect(pool.length).toBeGreaterThanOrEqual(30);
    for (const q of pool) {
      expect(q.id).toMatch(UUID);
      expect(q.text).toMatch(/\?$/);
    }
    expect(new Set(pool.map((q) => q.id)).size).toBe(pool.length);
  });

  it('accepts a request with no body at all', async () => {
    const res = await t.app.inject({ method: 'POST', url: `${BASE}/predefined`, headers: bearer(adminToken) });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { questions: unknown[] }).questions).toHaveLength(pool.length);
  });

  it('is not served anonymously (401 TOKEN_MISSING)', async () => {
    expectError(await post(`${BASE}/predefined`, {}), 401, 'TOKEN_MISSING');
  });

  it('refuses a forged two_factor_token (401 TOKEN_INVALID)', async () => {
    expectError(await post(`${BASE}/predefined`, { two_factor_token: 'eyJhbGciOiJIUzI1NiJ9.eyJ4IjoxfQ.c2ln' }), 401, 'TOKEN_INVALID');
  });
});

describe('POST /api/v1/auth/security-questions/setup', () => {
  let token: string;
  beforeAll(async () => {
    await seedUser(t.s, 'sara.setup');
    token = (await signIn(t.app, 'sara.setup')).access_token;
  });
  const setup = (answers: Array<{ question_id: string; answer: string }>) => post(`${BASE}/setup`, { answers, current_password: STRONG_PASSWORD }, token);

  it('a stolen access token alone cannot set the answers that back an MFA reset (current_password required)', async () => {
    await seedUser(t.s, 'sara.stolen');
    const stolen = (await signIn(t.app, 'sara.stolen')).access_token;
    const answers = asList(choose(['Simba', 'Mrs Wanjiru', 'Kisumu']));
    expectError(await post(`${BASE}/setup`, { answers }, stolen), 422, 'VALIDATION_ERROR');
    expectError(await post(`${BASE}/setup`, { answers, current_password: 'Wrong#Guess42xyz' }, stolen), 401, 'INVALID_CREDENTIALS');
    const stored = await t.s.database.db.selectFrom('user_security_answers').innerJoin('users', 'users.id', 'user_security_answers.user_id').select('question_id').where('users.username', '=', 'sara.stolen').execute();
    expect(stored).toEqual([]);
  });

  it('refuses 2 questions and 6 questions (422 VALIDATION_ERROR)', async () => {
    expectError(await setup(asList(choose(['Simba', 'Mrs Wanjiru']))), 422, 'VALIDATION_ERROR');
    expectError(await setup(asList(choose(['a1', 'b2', 'c3', 'd4', 'e5', 'f6']))), 422, 'VALIDATION_ERROR');
  });

  it('refuses the same question twice (422 SECURITY_QUESTIONS_DUPLICATE)', async () => {
    const q = pool[0]!.id;
    expectError(await setup([{ question_id: q, answer: 'Simba' }, { question_id: q, answer: 'Tembo' }, { question_id: pool[1]!.id, answer: 'Kisumu' }]), 422, 'SECURITY_QUESTIONS_DUPLICATE');
  });

  it('refuses two answers that are alike after normalising (422 SECURITY_ANSWERS_DUPLICATE)', async () => {
    expectError(await setup(asList(choose(['Nairobi', '  NAIROBI ', 'Simba']))), 422, 'SECURITY_ANSWERS_DUPLICATE');
  });

  it('refuses an answer shorter than 2 characters after trimming (422 SECURITY_ANSWER_TOO_SHORT)', async () => {
    const body = expectError(await setup(asList(choose(['Simba', '   x   ', 'Kisumu']))), 422, 'SECURITY_ANSWER_TOO_SHORT');
    expect(body.details).toMatchObject({ question_ids: [pool[1]!.id], min_length: 2 });
  });

  it('refuses a question that is not in the pool (422 SECURITY_QUESTION_UNKNOWN)', async () => {
    const body = expectError(await setup([...asList(choose(['Simba', 'Kisumu'])), { question_id: NO_QUESTION, answer: 'Tembo' }]), 422, 'SECURITY_QUESTION_UNKNOWN');
    expect(body.details).toMatchObject({ question_ids: [NO_QUESTION] });
  });

  it('sets 3 answered questions (201) and audits SECURITY_QUESTIONS_SET without the answers', async () => {
    const answers = choose(['Simba', 'Mrs Wanjiru', 'Kisumu']);
    const res = await setup(asList(answers));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ configured: 3, question_ids: [...answers.keys()] });
    const user = (await t.s.users.findByLogin('sara.setup'))!;
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'SECURITY_QUESTIONS_SET', limit: 5, offset: 0 });
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0]!.details).toMatchObject({ via: 'setup', question_ids: [...answers.keys()] });
    expect(JSON.stringify(audit.entries)).not.toMatch(/simba|wanjiru|kisumu/i);
  });

  it('refuses a second setup (409 SECURITY_QUESTIONS_ALREADY_SET)', async () => {
    expectError(await setup(asList(choose(['Tembo', 'Mombasa', 'Blue'], 5))), 409, 'SECURITY_QUESTIONS_ALREADY_SET');
  });

  it('two parallel setups: one wins (201), the other is 409 SECURITY_QUESTIONS_ALREADY_SET', async () => {
    const user = await seedUser(t.s, 'paula.parallel');
    const tok = (await signIn(t.app, 'paula.parallel')).access_token;
    const [a, b] = await Promise.all([
      post(`${BASE}/setup`, { answers: asList(choose(['Simba', 'Tembo', 'Kiboko'])), current_password: STRONG_PASSWORD }, tok),
      post(`${BASE}/setup`, { answers: asList(choose(['Mombasa', 'Malindi', 'Lamu'], 3)), current_password: STRONG_PASSWORD }, tok),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([201, 409]);
    expectError(a.statusCode === 409 ? a : b, 409, 'SECURITY_QUESTIONS_ALREADY_SET');
    expect(await t.s.database.db.selectFrom('user_security_answers').select('question_id').where('user_id', '=', user.id).execute()).toHaveLength(3);
  });

  it('accepts 5 questions', async () => {
    const { user } = await userWithQuestions('five.questions', choose(['one1', 'two2', 'three3', 'four4', 'five5']));
    expect(await t.s.database.db.selectFrom('user_security_answers').select('question_id').where('user_id', '=', user.id).execute()).toHaveLength(5);
  });

  it('stores answers only as bcrypt hashes, never in clear', async () => {
    const { user } = await userWithQuestions('hash.check', choose(['  Nairobi   West ', 'Simba', 'Mrs Wanjiru']));
    const rows = await t.s.database.db.selectFrom('user_security_answers').selectAll().where('user_id', '=', user.id).execute();
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(r.answer_hash).toMatch(/^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/);
      expect(r.answer_hash.toLowerCase()).not.toMatch(/nairobi|simba|wanjiru/);
    }
    expect(new Set(rows.map((r) => r.answer_hash)).size).toBe(3);
  });
});

describe('verification (bearer: step-up)', () => {
  /** Every answer in odd case and spacing, so whichever 2 or 3 are asked, each needs normalising. */
  const given = () => choose(['  Nairobi   West ', ' SIMBA\t', 'Mrs  WANJIRU', 'Deep\u00a0 Blue ']);
  /** The same answers as a person would type them another day: other case, spacing collapsed. */
  const typedLater = () => choose(['nairobi west', 'simba', 'mrs wanjiru', 'deep blue']);
  let token: string;
  let user: UserRow;

  beforeAll(async () => {
    ({ user, token } = await userWithQuestions('vera.verify', given()));
  });

  it('asks 2 or 3 of the user\'s own questions, with their text, valid 5 minutes', async () => {
    const ch = await startChallenge(token);
    expect(ch.expires_in).toBe(300);
    expect(ch.challenge_id).toMatch(/^[0-9a-f-]{36}$/);
    expect([2, 3]).toContain(ch.questions.length);
    const mine = [...given().keys()];
    for (const q of ch.questions) {
      expect(mine).toContain(q.id);
      expect(q.text).toBe(pool.find((p) => p.id === q.id)!.text);
    }
    expect(new Set(ch.questions.map((q) => q.id)).size).toBe(ch.questions.length);
  });

  it('asking again repeats the unanswered questions (no shopping for known ones)', async () => {
    const a = await startChallenge(token);
    const b = await startChallenge(token);
    expect(b.challenge_id).not.toBe(a.challenge_id);
    expect(b.questions).toEqual(a.questions);
  });

  it('accepts normalised answers ("  Nairobi   West " = "nairobi west"), marks the session and audits', async () => {
    const signedIn = await signIn(t.app, 'vera.verify');
    const ch = await startChallenge(signedIn.access_token);
    const answers = reply(ch, typedLater());
    for (const a of answers) {
      // Whichever questions were drawn: each answer matches only after case folding and whitespace collapsing.
      const stored = given().get(a.question_id)!;
      expect(a.answer).not.toBe(stored.toLowerCase());
      expect(a.answer).not.toBe(stored.replace(/\s+/gu, ' ').trim());
      expect(a.answer).toBe(stored.replace(/\s+/gu, ' ').trim().toLowerCase());
    }
    const res = await verify(signedIn.access_token, ch, answers);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ verified: true, method: 'security_questions', session_id: signedIn.session_id });
    expect(body).not.toHaveProperty('access_token');
    expect(body).not.toHaveProperty('proof_token');
    expect(new Date(String(body.verified_at)).getTime()).toBe(t.clock.now());
    // Knowledge answers are not a factor: the session does not become `mfa_completed`, so it
    // cannot ask for an MFA reset as "password and a factor".
    const session = await t.s.database.db.selectFrom('sessions').select(['mfa_completed', 'mfa_verified_at']).where('session_id', '=', signedIn.session_id).executeTakeFirstOrThrow();
    expect(session).toEqual({ mfa_completed: false, mfa_verified_at: null });
    expectError(await post('/api/v1/auth/reset/mfa', { reason: 'Lost my phone' }, signedIn.access_token), 403, 'MFA_RESET_PROOF_REQUIRED');
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'SECURITY_QUESTIONS_VERIFIED', limit: 1, offset: 0 });
    expect(audit.entries[0]).toMatchObject({ status: 'SUCCESS', mfa_method: 'security_questions' });
    expect(JSON.stringify(audit.entries)).not.toMatch(/nairobi|simba|wanjiru/i);
  });

  it('a replayed challenge is refused (409 SECURITY_CHALLENGE_INVALID)', async () => {
    const ch = await startChallenge(token);
    expect((await verify(token, ch, reply(ch, typedLater()))).statusCode).toBe(200);
    const body = expectError(await verify(token, ch, reply(ch, typedLater())), 409, 'SECURITY_CHALLENGE_INVALID');
    expect(withoutRequestId(body.details)).toEqual({ reason: 'unknown' }); // answered challenges are forgotten
  });

  it('a wrong answer is refused (401 SECURITY_ANSWERS_INVALID) and spends the challenge', async () => {
    const ch = await startChallenge(token);
    const wrong = reply(ch, typedLater());
    wrong[wrong.length - 1]!.answer = 'not this';
    const body = expectError(await verify(token, ch, wrong), 401, 'SECURITY_ANSWERS_INVALID');
    expect(withoutRequestId(body.details)).toEqual({ attempts_remaining: 2 });
    expect(JSON.stringify(body)).not.toMatch(/nairobi|simba|wanjiru|not this/i);
    expect(withoutRequestId(expectError(await verify(token, ch, reply(ch, typedLater())), 409, 'SECURITY_CHALLENGE_INVALID').details)).toEqual({ reason: 'used' });
    // The failure is counted; the right answers on a new challenge clear the count (the row goes).
    const attemptsRow = () => t.s.database.db.selectFrom('mfa_attempts').select(['failed_count', 'locked_until']).where('user_id', '=', user.id).where('factor', '=', 'security_questions').executeTakeFirst();
    expect(await attemptsRow()).toEqual({ failed_count: 1, locked_until: null });
    const next = await startChallenge(token);
    expect((await verify(token, next, reply(next, typedLater()))).statusCode).toBe(200);
    expect(await attemptsRow()).toBeUndefined();
    expect(await t.s.mfaAttempts.retryAfter(user.id, 'security_questions')).toBe(0);
  });

  it('answers that do not match the challenge\'s questions are refused (422 SECURITY_ANSWERS_MISMATCH) without spending it', async () => {
    const ch = await startChallenge(token);
    const other = [...given().keys()].find((id) => !ch.questions.some((q) => q.id === id))!;
    const answers = reply(ch, typedLater());
    expectError(await verify(token, ch, [...answers.slice(1), { question_id: other, answer: typedLater().get(other)! }]), 422, 'SECURITY_ANSWERS_MISMATCH');
    expectError(await verify(token, ch, answers.slice(1)), 422, 'SECURITY_ANSWERS_MISMATCH');
    expectError(await verify(token, ch, [...answers, answers[0]!]), 422, 'SECURITY_ANSWERS_MISMATCH');
    expect((await verify(token, ch, answers)).statusCode).toBe(200);
  });

  it('an expired challenge is refused (409 SECURITY_CHALLENGE_INVALID)', async () => {
    const ch = await startChallenge(token);
    t.clock.advance(5 * MINUTE + 1000);
    const fresh = (await signIn(t.app, 'vera.verify')).access_token; // sessions idle out too
    expect(withoutRequestId(expectError(await verify(fresh, ch, reply(ch, typedLater())), 409, 'SECURITY_CHALLENGE_INVALID').details)).toEqual({ reason: 'expired' });
    token = fresh;
  });

  it('another user\'s challenge is refused (409 SECURITY_CHALLENGE_INVALID)', async () => {
    const ch = await startChallenge(token);
    const { token: other } = await userWithQuestions('oscar.other', given());
    expectError(await verify(other, ch, reply(ch, typedLater())), 409, 'SECURITY_CHALLENGE_INVALID');
    expect((await verify(token, ch, reply(ch, typedLater()))).statusCode).toBe(200);
  });

  it('a user with no questions gets 404 SECURITY_QUESTIONS_NOT_SET', async () => {
    await seedUser(t.s, 'nina.none');
    expectError(await post(BASE, {}, (await signIn(t.app, 'nina.none')).access_token), 404, 'SECURITY_QUESTIONS_NOT_SET');
  });
});

describe('lockout after 3 failures', () => {
  const answers = () => choose(['Lima', 'Quito', 'Bogota'], 10);

  it('3 wrong answers lock the factor (429 SECURITY_QUESTIONS_LOCKED with Retry-After); right ones are refused until the lock ends', async () => {
    const { user, token } = await userWithQuestions('larry.lock', answers());
    const challenges = [];
    for (let i = 0; i < 4; i++) challenges.push(await startChallenge(token));
    const wrong = (ch: Challenge) => ch.questions.map((q) => ({ question_id: q.id, answer: 'wrong guess' }));
    expect(withoutRequestId(expectError(await verify(token, challenges[0]!, wrong(challenges[0]!)), 401, 'SECURITY_ANSWERS_INVALID').details)).toEqual({ attempts_remaining: 2 });
    expect(withoutRequestId(expectError(await verify(token, challenges[1]!, wrong(challenges[1]!)), 401, 'SECURITY_ANSWERS_INVALID').details)).toEqual({ attempts_remaining: 1 });
    const third = await verify(token, challenges[2]!, wrong(challenges[2]!));
    expect(withoutRequestId(expectError(third, 429, 'SECURITY_QUESTIONS_LOCKED').details)).toEqual({ retry_after_seconds: 1800 });
    expect(third.headers['retry-after']).toBe('1800');

    const right = await verify(token, challenges[3]!, reply(challenges[3]!, answers()));
    expectError(right, 429, 'SECURITY_QUESTIONS_LOCKED');
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    expectError(await post(BASE, {}, token), 429, 'SECURITY_QUESTIONS_LOCKED');
    const locked = await t.s.audit.query({ userId: user.uuid, eventType: 'SECURITY_QUESTIONS_LOCKED', limit: 5, offset: 0 });
    expect(locked.total).toBe(1);

    t.clock.advance(30 * MINUTE + 1000);
    const fresh = (await signIn(t.app, 'larry.lock')).access_token;
    const ch = await startChallenge(fresh);
    expect((await verify(fresh, ch, reply(ch, answers()))).statusCode).toBe(200);
  });

  it('20 parallel wrong verifications never buy more than 3 tries', async () => {
    const { user, token } = await userWithQuestions('bella.burst', answers());
    const challenges: Challenge[] = [];
    for (let i = 0; i < 20; i++) challenges.push(await startChallenge(token));
    const results = await Promise.all(challenges.map((ch) => verify(token, ch, ch.questions.map((q) => ({ question_id: q.id, answer: 'wrong guess' })))));
    const invalid = results.filter((r) => r.statusCode === 401);
    const locked = results.filter((r) => r.statusCode === 429);
    expect(invalid.length + locked.length).toBe(20);
    // 3 tries are reserved; the 3rd failure already answers 429 (it sets the lock), as in the sequential test.
    expect(invalid).toHaveLength(2);
    expect(locked).toHaveLength(18);
    for (const r of invalid) expectError(r, 401, 'SECURITY_ANSWERS_INVALID');
    for (const r of locked) expectError(r, 429, 'SECURITY_QUESTIONS_LOCKED');
    // Comparisons actually made (one audited failure each): exactly the 3 the limit allows.
    const failed = await t.s.audit.query({ userId: user.uuid, eventType: 'SECURITY_QUESTIONS_FAILED', limit: 50, offset: 0 });
    expect(failed.total).toBe(3);
  });
});

describe('never a sign-in factor: the 2FA-token path gives an MFA-reset proof', () => {
  const answers = () => choose(['Accra', 'Kumasi', 'Tamale'], 15);
  let user: UserRow;

  beforeAll(async () => {
    // Questions first (signed in without MFA), then an enrolled email factor makes sign-in need a second factor.
    ({ user } = await userWithQuestions('mfa.mary', answers()));
    await t.s.database.db.updateTable('users').set({ email: 'mary@bank.example' }).where('id', '=', user.id).execute();
    await t.s.database.db.insertInto('mfa_factors').values({ user_id: user.id, method: 'email', status: 'active', secret_enc: null, algorithm: null, last_used_step: null, created_at: new Date(t.clock.now()), confirmed_at: new Date(t.clock.now()) }).execute();
  });

  async function twoFactorToken(): Promise<{ token: string; methods: string[] }> {
    const body = expectError(await login(t.app, 'mfa.mary'), 401, '2FA_REQUIRED');
    const d = body.details as { two_factor_token: string; methods: string[] };
    return { token: d.two_factor_token, methods: d.methods };
  }

  it('2FA_REQUIRED never offers security questions', async () => {
    const { methods } = await twoFactorToken();
    expect(methods).toEqual(['email']);
    expect(methods).not.toContain('security_questions');
  });

  it('the pool is served with a two_factor_token', async () => {
    const { token } = await twoFactorToken();
    const res = await post(`${BASE}/predefined`, { two_factor_token: token });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { questions: unknown[] }).questions.length).toBe(pool.length);
  });

  it('right answers with a two_factor_token return a proof_token and no access token', async () => {
    const { token } = await twoFactorToken();
    const ch = await startChallenge('', { two_factor_token: token });
    const res = await verify(undefined, ch, reply(ch, answers()), { two_factor_token: token });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['proof_expires_in', 'proof_token', 'verified']);
    const claims = await t.s.tokens.verify(body.proof_token as string, 'reset');
    expect(body.proof_expires_in).toBe(Math.floor((claims.exp * 1000 - t.clock.now()) / 1000)); // 10 minutes, whole seconds left
    expect([599, 600]).toContain(body.proof_expires_in);
    expect(claims).toMatchObject({ token_type: 'reset', user_id: user.uuid, purpose: MFA_RESET_PROOF_PURPOSE });
    expect(decodeJwt(body.proof_token as string)).not.toHaveProperty('session_id');
    // The proof is no bearer token.
    expectError(await post('/api/v1/auth/validate', {}, body.proof_token as string), 401, 'TOKEN_INVALID');
  });

  it('wrong answers with a two_factor_token are refused (401 SECURITY_ANSWERS_INVALID), no proof', async () => {
    const { token } = await twoFactorToken();
    const ch = await startChallenge('', { two_factor_token: token });
    const res = await verify(undefined, ch, ch.questions.map((q) => ({ question_id: q.id, answer: 'Nairobi' })), { two_factor_token: token });
    expect(expectError(res, 401, 'SECURITY_ANSWERS_INVALID')).not.toHaveProperty('proof_token');
  });

  it('a sign-in two_factor_token cannot set up questions (401 TOKEN_INVALID): a password alone must not create recovery answers', async () => {
    await t.s.database.db.deleteFrom('user_security_answers').where('user_id', '=', user.id).execute();
    const { token } = await twoFactorToken();
    expectError(await post(`${BASE}/setup`, { answers: asList(answers()), two_factor_token: token }), 401, 'TOKEN_INVALID');
    expect(await t.s.database.db.selectFrom('user_security_answers').select('question_id').where('user_id', '=', user.id).execute()).toHaveLength(0);
  });

  it('a user whose role requires MFA sets up questions with the MFA_SETUP_INCOMPLETE token; sign-in still needs a real factor', async () => {
    await seedUser(t.s, 'staff.sam', { roles: ['staff'] });
    const first = expectError(await login(t.app, 'staff.sam'), 403, 'MFA_SETUP_INCOMPLETE');
    const token = (first.details as { two_factor_token: string }).two_factor_token;
    const res = await post(`${BASE}/setup`, { answers: asList(answers()), two_factor_token: token });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ configured: 3 });
    const again = expectError(await login(t.app, 'staff.sam'), 403, 'MFA_SETUP_INCOMPLETE');
    expect((again.details as { setup_methods: string[] }).setup_methods).not.toContain('security_questions');
  });
});

describe('POST /api/v1/auth/security-questions/delete', () => {
  const answers = () => choose(['Dodoma', 'Arusha', 'Moshi'], 3);
  let customerToken: string;
  let target: UserRow;

  beforeAll(async () => {
    adminToken = (await signIn(t.app, 'root.admin')).access_token; // earlier suites moved the clock past the idle timeout
    ({ user: target, token: customerToken } = await userWithQuestions('dora.delete', answers()));
  });
  const del = (payload: Record<string, unknown>, token = adminToken) => post(`${BASE}/delete`, payload, token);

  it('needs delete_security_question (403 PERMISSION_DENIED for a customer)', async () => {
    const body = expectError(await del({ user_id: target.uuid }, customerToken), 403, 'PERMISSION_DENIED');
    expect(withoutRequestId(body.details)).toEqual({ required_permission: 'delete_security_question' });
    expectError(await del({ user_id: target.uuid }, ''), 401, 'TOKEN_MISSING');
  });

  it('needs exactly one of user_id and question_id (422 VALIDATION_ERROR)', async () => {
    expectError(await del({}), 422, 'VALIDATION_ERROR');
    expectError(await del({ user_id: target.uuid, question_id: pool[0]!.id }), 422, 'VALIDATION_ERROR');
  });

  it('404 for an unknown user or question', async () => {
    expectError(await del({ user_id: '00000000-0000-4000-8000-000000000000' }), 404, 'USER_NOT_FOUND');
    expectError(await del({ question_id: NO_QUESTION }), 404, 'SECURITY_QUESTION_NOT_FOUND');
  });

  it('an administrator removes a user\'s questions (audited with the actor); the user may set new ones', async () => {
    const res = await del({ user_id: target.uuid });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ deleted: 3 });
    expectError(await post(BASE, {}, customerToken), 404, 'SECURITY_QUESTIONS_NOT_SET');
    const audit = await t.s.audit.query({ userId: target.uuid, eventType: 'SECURITY_QUESTIONS_DELETED', limit: 1, offset: 0 });
    expect(audit.entries[0]!.details).toMatchObject({ deleted: 3, actor_username: 'root.admin' });
    expect((await post(`${BASE}/setup`, { answers: asList(answers()), current_password: STRONG_PASSWORD }, customerToken)).statusCode).toBe(201);
  });
});

describe('POST /api/v1/admin/security-questions and retiring a question', () => {
  const add = (text: unknown, token = adminToken) => post('/api/v1/admin/security-questions', { text }, token);

  it('needs security_questions.manage (403 PERMISSION_DENIED for a customer)', async () => {
    await seedUser(t.s, 'carl.customer');
    const token = (await signIn(t.app, 'carl.customer')).access_token;
    expectError(await add('What was the name of your first football team?', token), 403, 'PERMISSION_DENIED');
  });

  it('validates the text (422 VALIDATION_ERROR)', async () => {
    expectError(await add('Too short?'.slice(1)), 422, 'VALIDATION_ERROR');
    expectError(await add('What was the name of your first football team'), 422, 'VALIDATION_ERROR'); // no "?"
    expectError(await add(`W${'x'.repeat(199)}?`), 422, 'VALIDATION_ERROR');
    expectError(await add('What was\u0000 your team?'), 422, 'VALIDATION_ERROR');
  });

  it('adds a question (201), refuses the same text in another case (409), and retiring takes it out of the pool', async () => {
    const res = await add('What  was the name of your first football team?');
    expect(res.statusCode, res.body).toBe(201);
    const q = res.json() as { id: string; text: string };
    expect(q.id).toMatch(UUID);
    expect(q.text).toBe('What was the name of your first football team?');
    expectError(await add('WHAT WAS THE NAME OF YOUR FIRST FOOTBALL TEAM?'), 409, 'SECURITY_QUESTION_EXISTS');
    const listed = (await post(`${BASE}/predefined`, {}, adminToken)).json() as { questions: Array<{ id: string }> };
    expect(listed.questions.map((x) => x.id)).toContain(q.id);

    // A user who chose it keeps it until they reset.
    const chosen = new Map([[q.id, 'Gor Mahia'], [pool[20]!.id, 'Meru'], [pool[21]!.id, 'Nyeri']]);
    const { token } = await userWithQuestions('rita.retired', chosen);
    const retired = await post(`${BASE}/delete`, { question_id: q.id }, adminToken);
    expect(retired.statusCode, retired.body).toBe(200);
    expect(retired.json()).toEqual({ retired: q.id });
    const after = (await post(`${BASE}/predefined`, {}, adminToken)).json() as { questions: Array<{ id: string }> };
    expect(after.questions.map((x) => x.id)).not.toContain(q.id);
    expect(after.questions.length).toBe(listed.questions.length - 1);
    await seedUser(t.s, 'late.comer');
    const late = (await signIn(t.app, 'late.comer')).access_token;
    expectError(await post(`${BASE}/setup`, { answers: asList(new Map([[q.id, 'Gor Mahia'], [pool[0]!.id, 'Simba'], [pool[1]!.id, 'Kisumu']])), current_password: STRONG_PASSWORD }, late), 422, 'SECURITY_QUESTION_UNKNOWN');
    const ch = await startChallenge(token);
    expect((await verify(token, ch, reply(ch, chosen))).statusCode).toBe(200);
    const audit = await t.s.audit.query({ eventType: 'SECURITY_QUESTION_RETIRED', limit: 1, offset: 0 });
    expect(audit.entries[0]).toMatchObject({ username: 'root.admin', details: { question_id: q.id } });
  });
});

describe('POST /api/v1/auth/reset/security-questions', () => {
  const old = () => choose(['Kampala', 'Entebbe', 'Jinja'], 25);
  const fresh = () => new Map([...choose(['Gulu', 'Mbale', 'Masaka'], 25), [pool[28]!.id, 'Lira']]);
  let token: string;
  beforeAll(async () => {
    ({ token } = await userWithQuestions('rob.reset', old()));
  });
  const reset = (payload: Record<string, unknown>, tok = token) => post('/api/v1/auth/reset/security-questions', payload, tok);

  it('needs a bearer token (401 TOKEN_MISSING) and the current password (401 INVALID_CREDENTIALS)', async () => {
    expectError(await reset({ current_password: STRONG_PASSWORD, answers: asList(fresh()) }, ''), 401, 'TOKEN_MISSING');
    expectError(await reset({ current_password: OTHER_PASSWORD, answers: asList(fresh()) }), 401, 'INVALID_CREDENTIALS');
  });

  it('applies the setup rules (422 SECURITY_ANSWERS_DUPLICATE)', async () => {
    expectError(await reset({ current_password: STRONG_PASSWORD, answers: asList(choose(['Gulu', 'gulu', 'Masaka'], 25)) }), 422, 'SECURITY_ANSWERS_DUPLICATE');
  });

  it('replaces the set: old answers stop working, new ones work', async () => {
    const before = await startChallenge(token);
    const res = await reset({ current_password: STRONG_PASSWORD, answers: asList(fresh()) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ configured: 4, question_ids: [...fresh().keys()] });
    expectError(await verify(token, before, reply(before, old())), 409, 'SECURITY_CHALLENGE_INVALID');
    const ch = await startChallenge(token);
    expect(ch.questions.every((q) => fresh().has(q.id))).toBe(true);
    const oldAnswers = ch.questions.map((q) => ({ question_id: q.id, answer: old().get(q.id) ?? 'Jinja' }));
    expectError(await verify(token, ch, oldAnswers), 401, 'SECURITY_ANSWERS_INVALID');
    const next = await startChallenge(token);
    expect((await verify(token, next, reply(next, fresh()))).statusCode).toBe(200);
  });
});

describe('hostile input never reaches a 500', () => {
  let token: string;
  beforeAll(async () => {
    await seedUser(t.s, 'hugo.hostile');
    token = (await signIn(t.app, 'hugo.hostile')).access_token;
  });

  it('an SQL-looking answer is just text', async () => {
    const answers = choose(["'; DROP TABLE users; --", "x' OR '1'='1", 'Robert\'); --'], 6);
    const res = await post(`${BASE}/setup`, { answers: asList(answers), current_password: STRONG_PASSWORD }, token);
    expect(res.statusCode, res.body).toBe(201);
    const ch = await startChallenge(token);
    expect((await verify(token, ch, reply(ch, answers))).statusCode).toBe(200);
    expect((await t.s.database.db.selectFrom('users').select('id').execute()).length).toBeGreaterThan(1);
  });

  const [q1, q2, q3] = ['1', '2', '3'].map((n) => `00000000-0000-4000-8000-00000000000${n}`);
  it.each([
    ['an answer over 256 characters', { answers: [{ question_id: q1, answer: 'a'.repeat(257) }, { question_id: q2, answer: 'bb' }, { question_id: q3, answer: 'cc' }] }],
    ['a NUL in an answer', { answers: [{ question_id: q1, answer: 'a\u0000b' }, { question_id: q2, answer: 'bb' }, { question_id: q3, answer: 'cc' }] }],
    ['a question id that is not a uuid', { answers: [{ question_id: '1 OR 1=1', answer: 'aa' }, { question_id: q2, answer: 'bb' }, { question_id: q3, answer: 'cc' }] }],
    ['a question id beyond int4', { answers: [{ question_id: 2 ** 40, answer: 'aa' }, { question_id: q2, answer: 'bb' }, { question_id: q3, answer: 'cc' }] }],
    ['an unknown field', { answers: [{ question_id: q1, answer: 'aa', hint: 'x' }, { question_id: q2, answer: 'bb' }, { question_id: q3, answer: 'cc' }] }],
    ['answers that are not a list', { answers: 'Simba' }],
  ])('setup refuses %s (422 VALIDATION_ERROR)', async (_name, payload) => {
    expectError(await post(`${BASE}/setup`, { ...payload, current_password: STRONG_PASSWORD }, token), 422, 'VALIDATION_ERROR');
  });

  it.each([
    ['a challenge id that is not a uuid', { challenge_id: "1' OR '1'='1", answers: [{ question_id: q1, answer: 'aa' }] }],
    ['a very long answer', { challenge_id: '00000000-0000-4000-8000-000000000000', answers: [{ question_id: q1, answer: 'x'.repeat(5000) }] }],
    ['no answers', { challenge_id: '00000000-0000-4000-8000-000000000000', answers: [] }],
  ])('verify refuses %s (422 VALIDATION_ERROR)', async (_name, payload) => {
    expectError(await post(`${BASE}/verify`, payload, token), 422, 'VALIDATION_ERROR');
  });

  it('an unknown challenge id is 409 SECURITY_CHALLENGE_INVALID', async () => {
    expectError(await post(`${BASE}/verify`, { challenge_id: '00000000-0000-4000-8000-000000000000', answers: [{ question_id: q1, answer: 'aa' }] }, token), 409, 'SECURITY_CHALLENGE_INVALID');
  });

  it('a 2-byte-per-character answer at the length limit is hashed whole (no 72-byte bcrypt truncation)', async () => {
    await seedUser(t.s, 'uma.unicode');
    const tok = (await signIn(t.app, 'uma.unicode')).access_token;
    const long = 'ж'.repeat(255);
    const answers = choose([`${long}a`, `${long}b`, 'short one'], 8);
    expect((await post(`${BASE}/setup`, { answers: asList(answers), current_password: STRONG_PASSWORD }, tok)).statusCode).toBe(201);
    const ch = await startChallenge(tok);
    // Same 255-character prefix, different last letter: wrong wherever the long answers are asked.
    const swapped = reply(ch, new Map([...answers].map(([id, a]) => [id, a.startsWith(long) ? `${long}${a.endsWith('a') ? 'b' : 'a'}` : a])));
    expectError(await verify(tok, ch, swapped), 401, 'SECURITY_ANSWERS_INVALID');
    // Positive control: the same questions answered with the right long answers pass.
    const next = await startChallenge(tok);
    expect(next.questions).toEqual(ch.questions);
    const right = await verify(tok, next, reply(next, answers));
    expect(right.statusCode, right.body).toBe(200);
  });
});

describe('one public id: a question is named by its uuid', () => {
  it('threat: an integer security question id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    adminToken = (await signIn(t.app, 'root.admin')).access_token;
    const chosen = choose(['Harare', 'Bulawayo', 'Mutare'], 11);
    const { user, token } = await userWithQuestions('ivan.integer', chosen);
    const internal = async (uuid: string) => (await t.s.database.db.selectFrom('security_questions').select('id').where('uuid', '=', uuid).executeTakeFirstOrThrow()).id;
    const answersOf = () => t.s.database.db.selectFrom('user_security_answers').selectAll().where('user_id', '=', user.id).orderBy('question_id').execute();
    const before = await answersOf();
    const refused = (res: Res, field: string) => {
      const body = expectError(res, 422, 'VALIDATION_ERROR');
      expect(body.details, field).toMatchObject({ expected: 'uuid', fields: [{ location: 'body', field }] });
      expect(body.message).toContain('/api/v1/auth/security-questions/predefined');
    };

    const ch = await startChallenge(token);
    const asked = reply(ch, chosen);
    const integers = await Promise.all(asked.map(async (a) => ({ ...a, question_id: await internal(a.question_id) })));
    refused(await post(`${BASE}/verify`, { challenge_id: ch.challenge_id, answers: integers }, token), 'answers.0.question_id');
    const secondAsDigits = await Promise.all(asList(chosen).map(async (a, i) => (i === 1 ? { ...a, question_id: String(await internal(a.question_id)) } : a)));
    refused(await post('/api/v1/auth/reset/security-questions', { current_password: STRONG_PASSWORD, answers: secondAsDigits }, token), 'answers.1.question_id');
    await seedUser(t.s, 'ivan.fresh');
    const fresh = (await signIn(t.app, 'ivan.fresh')).access_token;
    refused(await post(`${BASE}/setup`, { answers: [...asList(chosen).slice(0, 2), { question_id: await internal(pool[20]!.id), answer: 'Gweru' }], current_password: STRONG_PASSWORD }, fresh), 'answers.2.question_id');
    for (const id of [await internal(pool[11]!.id), String(await internal(pool[11]!.id))]) refused(await post(`${BASE}/delete`, { question_id: id }, adminToken), 'question_id');

    // Nothing changed: the answers, the pool, the fresh user's (absent) answers; the challenge is unspent.
    expect(await answersOf()).toEqual(before);
    expect((await post(`${BASE}/predefined`, {}, adminToken)).json().questions).toEqual(expect.arrayContaining([pool[11]]));
    expect(await t.s.database.db.selectFrom('user_security_answers').innerJoin('users', 'users.id', 'user_security_answers.user_id').select('question_id').where('users.username', '=', 'ivan.fresh').execute()).toEqual([]);
    expect((await verify(token, ch, asked)).statusCode).toBe(200);
  });

  it('a question id in capitals names the same question (the same question twice is still refused)', async () => {
    const chosen = choose(['Gaborone', 'Francistown', 'Maun'], 17);
    const upper = asList(chosen).map((a) => ({ ...a, question_id: a.question_id.toUpperCase() }));
    await seedUser(t.s, 'cara.caps');
    const token = (await signIn(t.app, 'cara.caps')).access_token;
    expectError(await post(`${BASE}/setup`, { answers: [...upper.slice(0, 2), { ...upper[0]!, question_id: upper[0]!.question_id.toLowerCase(), answer: 'Kasane' }], current_password: STRONG_PASSWORD }, token), 422, 'SECURITY_QUESTIONS_DUPLICATE');
    const res = await post(`${BASE}/setup`, { answers: upper, current_password: STRONG_PASSWORD }, token);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ configured: 3, question_ids: [...chosen.keys()] });
    const ch = await startChallenge(token);
    expect((await verify(token, ch, reply(ch, chosen).map((a) => ({ ...a, question_id: a.question_id.toUpperCase() })))).statusCode).toBe(200);
  });
});

describe('OpenAPI', () => {
  it('documents the seven routes under "Security questions", each with the error codes and statuses it answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, { post: { tags: string[]; description: string; requestBody: unknown; responses: Record<string, unknown> } }> };
    const TOKEN = ['TOKEN_MISSING', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'FINGERPRINT_MISMATCH', 'ACCOUNT_DISABLED', 'ACCOUNT_LOCKED'];
    const RULES = ['SECURITY_QUESTION_UNKNOWN', 'SECURITY_QUESTIONS_DUPLICATE', 'SECURITY_ANSWER_TOO_SHORT', 'SECURITY_ANSWERS_DUPLICATE', 'VALIDATION_ERROR'];
    const routes: [string, string[], string[]][] = [
      [`${BASE}/predefined`, TOKEN, ['200', '401', '403', '429']],
      [`${BASE}/setup`, [...TOKEN, 'SECURITY_QUESTIONS_ALREADY_SET', 'INVALID_CREDENTIALS', ...RULES], ['201', '401', '403', '409', '422']],
      [BASE, [...TOKEN, 'SECURITY_QUESTIONS_NOT_SET', 'SECURITY_QUESTIONS_LOCKED'], ['200', '401', '403', '404', '429']],
      [`${BASE}/verify`, [...TOKEN, 'SECURITY_ANSWERS_INVALID', 'SECURITY_CHALLENGE_INVALID', 'SECURITY_ANSWERS_MISMATCH', 'SECURITY_QUESTIONS_LOCKED'], ['200', '401', '403', '409', '422', '429']],
      [`${BASE}/delete`, ['PERMISSION_DENIED', 'USER_NOT_FOUND', 'SECURITY_QUESTION_NOT_FOUND', 'VALIDATION_ERROR'], ['200', '401', '403', '404', '422']],
      ['/api/v1/auth/reset/security-questions', ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', ...RULES], ['200', '401', '422', '429']],
      ['/api/v1/admin/security-questions', ['PERMISSION_DENIED', 'SECURITY_QUESTION_EXISTS', 'VALIDATION_ERROR'], ['201', '401', '403', '409', '422']],
    ];
    for (const [path, codes, statuses] of routes) {
      const op = doc.paths[path]?.post;
      expect(op, path).toBeDefined();
      expect(op!.tags).toEqual(['Security questions']);
      expect(op!.requestBody, path).toBeDefined();
      for (const code of codes) expect(op!.description, `${path} ${code}`).toContain(code);
      expect(Object.keys(op!.responses), path).toEqual(expect.arrayContaining(statuses));
    }
    const verifyDoc = doc.paths[`${BASE}/verify`]!.post;
    for (const code of ['SECURITY_ANSWERS_INVALID', 'SECURITY_CHALLENGE_INVALID', 'SECURITY_ANSWERS_MISMATCH', 'SECURITY_QUESTIONS_LOCKED']) expect(verifyDoc.description).toContain(code);
    expect(Object.keys(verifyDoc.responses)).toEqual(expect.arrayContaining(['200', '401', '409', '422', '429']));
  });
});
