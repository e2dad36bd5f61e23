/**
 * MFA reset with administrator approval (issue 4 section 5) over HTTP, with notices delivered to
 * a real SMTP server. Factors are written straight into `mfa_factors` and proof tokens minted
 * directly, so this suite depends on no factor route: an active email factor is what makes the
 * password step answer 401 2FA_REQUIRED.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/service.js';
import { MFA_RESET_PROOF_PURPOSE } from '../../src/mfa/challenge.js';
import type { MfaMethod } from '../../src/platform/db/schema.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import type { UserRow } from '../../src/users/store.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';
import { closedPort, startSmtp, type TestSmtp } from '../harness/smtp.js';
import { ENCRYPTED, openPreAuth, preAuthBody, fetchServerPem } from '../harness/transport-client.js';
import { withoutRequestId } from '../harness/request-id.js';

type Res = Awaited<ReturnType<typeof login>>;
interface View { request_id: string; status: string; user: { uuid: string; username: string }; decided_by: string | null; decision_note: string | null; proof: string; completed_at: string | null }

const HOUR = 3_600_000;
const REASON = 'I lost the phone that holds my authenticator app.';

/** Writes active factors (and, with TOTP, two unused backup codes) straight into the database. */
async function giveFactors(t: TestApp, user: UserRow, methods: MfaMethod[] = ['email', 'totp']): Promise<void> {
  const db = t.s.database.db;
  const now = new Date(t.clock.now());
  for (const method of methods) {
    await db.insertInto('mfa_factors').values({ user_id: user.id, method, status: 'active', secret_enc: null, algorithm: null, last_used_step: null, created_at: now, confirmed_at: now }).execute();
  }
  if (methods.includes('totp')) {
    await db.insertInto('mfa_backup_codes').values([1, 2].map((i) => ({ user_id: user.id, code_hash: `hash-${user.id}-${i}`, created_at: now, used_at: null }))).execute();
  }
}

async function factorRows(t: TestApp, user: UserRow): Promise<{ factors: number; codes: number }> {
  const db = t.s.database.db;
  const f = await db.selectFrom('mfa_factors').select('method').where('user_id', '=', user.id).execute();
  const c = await db.selectFrom('mfa_backup_codes').select('id').where('user_id', '=', user.id).execute();
  return { factors: f.length, codes: c.length };
}

/** The access token of a sign-in that passed a second factor (as a factor route would finish it). */
async function mfaSession(t: TestApp, user: UserRow): Promise<string> {
  const ctx = { ip: '127.0.0.1', ipHash: t.s.ipHasher.hex('127.0.0.1'), networkHash: t.s.ipHasher.hex('127.0.0.1'), fingerprint: '', userAgent: 'vitest', channel: 'web' };
  const r = await t.s.pipeline.complete(user, await t.s.users.grants(user.id), ctx, { mfaCompleted: true, method: 'local', mfaMethod: 'totp' });
  return r.body.access_token;
}

/** What the security-questions verify route hands out after the password and the answers. */
async function proofToken(t: TestApp, user: UserRow): Promise<string> {
  return (await t.s.tokens.issue('reset', { user_id: user.uuid, purpose: MFA_RESET_PROOF_PURPOSE })).token;
}

const ask = (t: TestApp, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/mfa', payload, headers });
const admin = (t: TestApp, action: 'pending' | 'approve' | 'reject', token: string, payload: Record<string, unknown>): Promise<Res> =>
  t.app.inject({ method: 'POST', url: `/api/v1/auth/reset/mfa/admin/${action}`, payload, headers: bearer(token) });

async function openRequest(t: TestApp, user: UserRow): Promise<string> {
  const res = await ask(t, { reason: REASON, proof_token: await proofToken(t, user) });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { request_id: string }).request_id;
}

async function auditOf(t: TestApp, user: UserRow, eventType: string): Promise<AuditEntry[]> {
  return (await t.s.audit.query({ userId: user.uuid, eventType, limit: 50, offset: 0 })).entries;
}

const transition = (entries: AuditEntry[], status = 'SUCCESS') => entries.filter((e) => e.status === status && !('notification' in e.details));
const notices = (entries: AuditEntry[]) => entries.filter((e) => 'notification' in e.details).map((e) => e.details.notification as Record<string, unknown>);

describe('MFA reset with administrator approval', () => {
  let smtp: TestSmtp;
  let t: TestApp;
  let root: string;
  let rootUser: UserRow;
  let approver: string;
  let customer: string;
  let n = 0;
  /** A fresh customer (or `roles`) with an email address. */
  const newUser = async (roles = ['customer']): Promise<UserRow> => seedUser(t.s, `user.${++n}`, { roles, email: `user.${n}@bank.example` });
  const mailsTo = (user: UserRow, subject: string) => smtp.to(user.email!).filter((m) => m.subject === subject);

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await createTestApp({ env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', MFA_REQUIRED_ROLES: 'staff' } });
    rootUser = await seedUser(t.s, 'root.admin', { roles: ['admin'], email: 'root@bank.example' });
    root = (await signIn(t.app, 'root.admin')).access_token;
    // A role that may approve and list, but not reject.
    const db = t.s.database.db;
    const role = await db.insertInto('roles').values({ name: 'mfa_approver', description: 'Approves MFA resets' }).returning('id').executeTakeFirstOrThrow();
    const perm = await db.selectFrom('permissions').select('id').where('name', '=', 'approve_mfa_reset').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values({ role_id: role.id, permission_id: perm.id }).execute();
    await seedUser(t.s, 'desk.approver', { roles: ['mfa_approver'] });
    approver = (await signIn(t.app, 'desk.approver')).access_token;
    await seedUser(t.s, 'plain.customer');
    customer = (await signIn(t.app, 'plain.customer')).access_token;
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  describe('asking', () => {
    it('a session that passed a second factor opens a pending request, audited, and the user gets a security notice', async () => {
      const user = await newUser();
      await giveFactors(t, user);
      expectError(await login(t.app, user.username), 401, '2FA_REQUIRED');
      const res = await ask(t, { reason: REASON }, bearer(await mfaSession(t, user)));
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json() as { request_id: string; status: string; requested_at: string; expires_at: string };
      expect(body).toMatchObject({ status: 'pending', requested_at: new Date(t.clock.now()).toISOString(), expires_at: new Date(t.clock.now() + 72 * HOUR).toISOString() });
      expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);

      const [mail] = mailsTo(user, 'We received a request to reset your second factor');
      expect(mail!.text).toContain(`Dear ${user.username},`);
      expect(mail!.text).toContain('If you did not ask for this');
      expect(mail!.text).not.toMatch(/https?:\/\//);

      const audit = await auditOf(t, user, 'MFA_RESET_REQUESTED');
      expect(transition(audit)).toEqual([expect.objectContaining({ details: { request_id: body.request_id, proof: 'password_and_factor', expires_at: body.expires_at } })]);
      expect(notices(audit)).toEqual([expect.objectContaining({ channel: 'email', status: 'SENT', recipient: 'u***@bank.example' })]);
    });

    it('a proof token from the security questions opens a request (proof password_and_security_questions)', async () => {
      const user = await newUser();
      const id = await openRequest(t, user);
      const row = await t.s.database.db.selectFrom('mfa_reset_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'pending', proof: 'password_and_security_questions', reason: REASON });
    });

    it('a replayed proof token is refused (TOKEN_REVOKED)', async () => {
      const user = await newUser();
      const token = await proofToken(t, user);
      expect((await ask(t, { reason: REASON, proof_token: token })).statusCode).toBe(201);
      expectError(await ask(t, { reason: REASON, proof_token: token }), 401, 'TOKEN_REVOKED');
    });

    it('an access token, a 2FA token or a password-change token passed as proof_token is refused (TOKEN_INVALID)', async () => {
      const user = await newUser();
      const access = await mfaSession(t, user);
      await giveFactors(t, user, ['email']);
      const twoFactor = (expectError(await login(t.app, user.username), 401, '2FA_REQUIRED').details as { two_factor_token: string }).two_factor_token;
      const otherPurpose = (await t.s.tokens.issue('reset', { user_id: user.uuid, purpose: 'password_change' })).token;
      for (const proof of [access, twoFactor, otherPurpose]) expectError(await ask(t, { reason: REASON, proof_token: proof }), 401, 'TOKEN_INVALID');
      expect(await t.s.database.db.selectFrom('mfa_reset_requests').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    });

    it('asks over an encrypted pre-auth body: the bearer is read after decryption and the answer is sealed', async () => {
      const user = await newUser();
      const serverPem = await fetchServerPem(t.app);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/mfa', headers: { ...ENCRYPTED, ...bearer(await mfaSession(t, user)) }, payload: preAuthBody(serverPem, { reason: REASON }) });
      expect(res.statusCode).toBe(201);
      expect(openPreAuth(res.json()).body).toMatchObject({ status: 'pending' });
      const refused = await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/mfa', headers: { ...ENCRYPTED, ...bearer(customer) }, payload: preAuthBody(serverPem, { reason: REASON }) });
      expect(refused.statusCode).toBe(403);
      expect(openPreAuth(refused.json()).body).toMatchObject({ status_code: 403, error_code: 'MFA_RESET_PROOF_REQUIRED' });
    });

    it('a session that did not pass a second factor cannot ask (MFA_RESET_PROOF_REQUIRED)', async () => {
      expectError(await ask(t, { reason: REASON }, bearer(customer)), 403, 'MFA_RESET_PROOF_REQUIRED');
    });

    it('no proof at all is refused (TOKEN_MISSING)', async () => {
      expectError(await ask(t, { reason: REASON }), 401, 'TOKEN_MISSING');
    });

    it('a missing, empty, overlong or NUL-bearing reason is a schema failure (VALIDATION_ERROR)', async () => {
      const user = await newUser();
      const proof = await proofToken(t, user);
      for (const reason of [undefined, '', 'x'.repeat(501), 'lost\u0000phone']) {
        expectError(await ask(t, { reason, proof_token: proof }), 422, 'VALIDATION_ERROR');
      }
      expectError(await ask(t, { reason: REASON, proof_token: proof, extra: 1 }), 422, 'VALIDATION_ERROR');
    });

    it('a second open request is refused (MFA_RESET_ALREADY_OPEN), also when both arrive at once', async () => {
      const user = await newUser();
      await openRequest(t, user);
      expectError(await ask(t, { reason: REASON, proof_token: await proofToken(t, user) }), 409, 'MFA_RESET_ALREADY_OPEN');

      const other = await newUser();
      const burst = await Promise.all([1, 2, 3].map(async () => ask(t, { reason: REASON, proof_token: await proofToken(t, other) })));
      expect(burst.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
      for (const r of burst.filter((x) => x.statusCode === 409)) expectError(r, 409, 'MFA_RESET_ALREADY_OPEN');
    });
  });

  describe('deciding', () => {
    it('approval removes every factor and backup code, ends every session, notifies the user; re-enrolment completes it', async () => {
      const user = await newUser();
      await giveFactors(t, user);
      const oldAccess = await mfaSession(t, user);
      const id = await openRequest(t, user);

      const queue = await admin(t, 'pending', root, {});
      expect(queue.statusCode, queue.body).toBe(200);
      const listed = (queue.json() as { requests: View[] }).requests.find((r) => r.request_id === id);
      expect(listed).toMatchObject({ status: 'pending', user: { uuid: user.uuid, username: user.username }, reason: REASON, decided_at: null, decided_by: null });

      const res = await admin(t, 'approve', root, { request_id: id, note: 'Identity confirmed in branch.' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ request_id: id, status: 'approved', decided_by: rootUser.uuid, decision_note: 'Identity confirmed in branch.', completed_at: null });

      expect(await factorRows(t, user)).toEqual({ factors: 0, codes: 0 });
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(oldAccess) }), 401, 'SESSION_INVALID');
      const [mail] = mailsTo(user, 'Your second-factor reset has been approved');
      expect(mail!.text).toContain('set up your second factor again');
      const audit = await auditOf(t, user, 'MFA_RESET_APPROVED');
      expect(transition(audit)).toEqual([expect.objectContaining({ details: { request_id: id, decided_by: rootUser.uuid, decided_by_username: 'root.admin', factors_removed: ['email', 'totp'], sessions_ended: 1 } })]);
      expect(notices(audit)).toEqual([expect.objectContaining({ status: 'SENT' })]);

      // Role not in MFA_REQUIRED_ROLES and no factor left: the password alone signs in.
      await signIn(t.app, user.username);

      await t.s.database.db.transaction().execute((trx) => t.s.factors.activate(trx, user, 'totp', new Date(t.clock.now())));
      const done = await t.s.database.db.selectFrom('mfa_reset_requests').select(['status', 'completed_at']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(done.status).toBe('completed');
      expect(new Date(done.completed_at!).getTime()).toBe(t.clock.now());
      expect(transition(await auditOf(t, user, 'MFA_RESET_COMPLETED'))).toHaveLength(1);
      const completed = (await admin(t, 'pending', root, { status: 'completed' })).json() as { requests: View[] };
      expect(completed.requests.map((r) => r.request_id)).toContain(id);
    });

    it('after approval a user whose role requires MFA must set up a factor (MFA_SETUP_INCOMPLETE)', async () => {
      const user = await newUser(['staff']);
      await giveFactors(t, user, ['email']);
      const id = await openRequest(t, user);
      expect((await admin(t, 'approve', root, { request_id: id })).statusCode).toBe(200);
      expectError(await login(t.app, user.username), 403, 'MFA_SETUP_INCOMPLETE');
    });

    it('rejection keeps the factors, records the reason and notifies the user; a new request may follow', async () => {
      const user = await newUser();
      await giveFactors(t, user);
      const id = await openRequest(t, user);
      const res = await admin(t, 'reject', root, { request_id: id, reason: 'Could not confirm the caller.' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'rejected', decision_note: 'Could not confirm the caller.', decided_by: rootUser.uuid });
      expect(await factorRows(t, user)).toEqual({ factors: 2, codes: 2 });
      expectError(await login(t.app, user.username), 401, '2FA_REQUIRED');
      const [mail] = mailsTo(user, 'Your second-factor reset request was not approved');
      expect(mail!.text).not.toContain('Could not confirm the caller.'); // the reason is for colleagues
      expect(transition(await auditOf(t, user, 'MFA_RESET_REJECTED'))).toHaveLength(1);
      expectError(await admin(t, 'approve', root, { request_id: id }), 409, 'MFA_RESET_NOT_PENDING');
      await openRequest(t, user);
    });

    it('two parallel approvals: exactly one wins, the other is MFA_RESET_NOT_PENDING', async () => {
      const user = await newUser();
      await giveFactors(t, user);
      const id = await openRequest(t, user);
      const both = await Promise.all([admin(t, 'approve', root, { request_id: id }), admin(t, 'approve', approver, { request_id: id })]);
      expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      const lost = expectError(both.find((r) => r.statusCode === 409)!, 409, 'MFA_RESET_NOT_PENDING');
      expect(withoutRequestId(lost.details)).toEqual({ status: 'approved' });
      expect(transition(await auditOf(t, user, 'MFA_RESET_APPROVED'))).toHaveLength(1);
    });

    it('an unknown request is MFA_RESET_NOT_FOUND; a malformed id is VALIDATION_ERROR', async () => {
      expectError(await admin(t, 'approve', root, { request_id: randomUUID() }), 404, 'MFA_RESET_NOT_FOUND');
      expectError(await admin(t, 'reject', root, { request_id: randomUUID(), reason: 'x' }), 404, 'MFA_RESET_NOT_FOUND');
      expectError(await admin(t, 'approve', root, { request_id: 'not-a-uuid' }), 422, 'VALIDATION_ERROR');
      expectError(await admin(t, 'reject', root, { request_id: randomUUID() }), 422, 'VALIDATION_ERROR');
      expectError(await admin(t, 'pending', root, { limit: 101 }), 422, 'VALIDATION_ERROR');
      expectError(await admin(t, 'pending', root, { status: 'open' }), 422, 'VALIDATION_ERROR');
    });
  });

  describe('permissions', () => {
    it('a customer can neither list, approve nor reject (PERMISSION_DENIED)', async () => {
      const user = await newUser();
      const id = await openRequest(t, user);
      for (const [action, payload] of [['pending', {}], ['approve', { request_id: id }], ['reject', { request_id: id, reason: 'no' }]] as const) {
        expectError(await admin(t, action, customer, payload), 403, 'PERMISSION_DENIED');
      }
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/mfa/admin/pending', payload: {} }), 401, 'TOKEN_MISSING');
    });

    it('approve_mfa_reset without reject_mfa_reset: lists and approves, cannot reject (PERMISSION_DENIED)', async () => {
      const a = await openRequest(t, await newUser());
      const b = await openRequest(t, await newUser());
      expect((await admin(t, 'pending', approver, {})).statusCode).toBe(200);
      const denied = expectError(await admin(t, 'reject', approver, { request_id: a, reason: 'no' }), 403, 'PERMISSION_DENIED');
      expect(withoutRequestId(denied.details)).toEqual({ required_permission: 'reject_mfa_reset' });
      expect((await admin(t, 'approve', approver, { request_id: b })).statusCode).toBe(200);
    });

    it('an administrator cannot approve or reject their own request (MFA_RESET_SELF_APPROVAL)', async () => {
      const self = await seedUser(t.s, 'self.admin', { roles: ['admin'], email: 'self@bank.example' });
      const selfToken = (await signIn(t.app, 'self.admin')).access_token;
      const id = await openRequest(t, self);
      expectError(await admin(t, 'approve', selfToken, { request_id: id }), 403, 'MFA_RESET_SELF_APPROVAL');
      expectError(await admin(t, 'reject', selfToken, { request_id: id, reason: 'mine' }), 403, 'MFA_RESET_SELF_APPROVAL');
      const refused = transition(await auditOf(t, self, 'MFA_RESET_APPROVED'), 'FAILURE');
      expect(refused).toEqual([expect.objectContaining({ details: expect.objectContaining({ request_id: id, error_code: 'MFA_RESET_SELF_APPROVAL' }) })]);
      const row = await t.s.database.db.selectFrom('mfa_reset_requests').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.status).toBe('pending');
      expect((await admin(t, 'reject', root, { request_id: id, reason: 'tidy up' })).statusCode).toBe(200);
    });
  });

  it('documents the four routes under MFA and 2FA with bearer security, each with the error codes it answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, { post: { tags: string[]; security: unknown[]; description: string } }> };
    const DECISION = ['PERMISSION_DENIED', 'MFA_RESET_SELF_APPROVAL', 'MFA_RESET_NOT_FOUND', 'MFA_RESET_NOT_PENDING', 'VALIDATION_ERROR', 'TOKEN_', 'SESSION_'];
    const routes: [string, string[]][] = [
      ['/api/v1/auth/reset/mfa', ['MFA_RESET_PROOF_REQUIRED', 'TOKEN_MISSING', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'SESSION_', 'FINGERPRINT_MISMATCH', 'ACCOUNT_DISABLED', 'MFA_RESET_ALREADY_OPEN', 'VALIDATION_ERROR']],
      ['/api/v1/auth/reset/mfa/admin/pending', ['PERMISSION_DENIED', 'VALIDATION_ERROR', 'TOKEN_', 'SESSION_']],
      ['/api/v1/auth/reset/mfa/admin/approve', DECISION],
      ['/api/v1/auth/reset/mfa/admin/reject', DECISION],
    ];
    for (const [path, codes] of routes) {
      expect(doc.paths[path]!.post).toMatchObject({ tags: ['MFA and 2FA'], security: [{ bearer: [] }] });
      for (const code of codes) expect(doc.paths[path]!.post.description, `${path} ${code}`).toContain(code);
    }
    const askDoc = doc.paths['/api/v1/auth/reset/mfa']!.post.description;
    for (const code of ['MFA_RESET_PROOF_REQUIRED', 'MFA_RESET_ALREADY_OPEN', 'TOKEN_REVOKED', 'TOKEN_INVALID']) expect(askDoc).toContain(code);
    const approve = doc.paths['/api/v1/auth/reset/mfa/admin/approve']!.post.description;
    for (const code of ['MFA_RESET_SELF_APPROVAL', 'MFA_RESET_NOT_FOUND', 'MFA_RESET_NOT_PENDING', 'PERMISSION_DENIED']) expect(approve).toContain(code);
  });

  describe('expiry (frozen clock)', () => {
    it('a request undecided past MFA_RESET_EXPIRY_HOURS is listed as expired, audited, notified, and cannot be approved', async () => {
      const user = await newUser();
      const id = await openRequest(t, user);
      t.clock.advance(72 * HOUR - 1000);
      root = (await signIn(t.app, 'root.admin')).access_token; // the old token has expired meanwhile
      expect(((await admin(t, 'pending', root, {})).json() as { requests: View[] }).requests.map((r) => r.request_id)).toContain(id);

      t.clock.advance(1000);
      root = (await signIn(t.app, 'root.admin')).access_token;
      const pending = (await admin(t, 'pending', root, {})).json() as { requests: View[] };
      expect(pending.requests.map((r) => r.request_id)).not.toContain(id);
      const expired = (await admin(t, 'pending', root, { status: 'expired' })).json() as { requests: View[]; total: number };
      expect(expired.requests.find((r) => r.request_id === id)).toMatchObject({ status: 'expired' });

      const refused = expectError(await admin(t, 'approve', root, { request_id: id }), 409, 'MFA_RESET_NOT_PENDING');
      expect(withoutRequestId(refused.details)).toEqual({ status: 'expired' });
      expect(transition(await auditOf(t, user, 'MFA_RESET_EXPIRED'))).toHaveLength(1);
      expect(mailsTo(user, 'Your second-factor reset request has lapsed')).toHaveLength(1);
      await openRequest(t, user); // a lapsed request no longer blocks a new one
    });

    it('a lapsed request does not block a new one even before anyone listed it', async () => {
      const user = await newUser();
      await openRequest(t, user);
      t.clock.advance(73 * HOUR);
      await openRequest(t, user);
      const rows = await t.s.database.db.selectFrom('mfa_reset_requests').select('status').where('user_id', '=', user.id).orderBy('requested_at').execute();
      expect(rows.map((r) => r.status)).toEqual(['expired', 'pending']);
    });
  });
});

describe('MFA reset when the SMTP server refuses', () => {
  let t: TestApp;
  let port: number;
  /** What the service logs, through the production logger. */
  const lines: string[] = [];

  beforeAll(async () => {
    port = await closedPort();
    const log = createLogger('debug', new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
    t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` }, log });
  });
  afterAll(async () => t.close());

  it('a refused notice is logged and audited as FAILURE, and neither the request nor the approval is undone', async () => {
    await seedUser(t.s, 'root.admin', { roles: ['admin'] });
    const root = (await signIn(t.app, 'root.admin')).access_token;
    const user = await seedUser(t.s, 'mail.less', { email: 'mail.less@bank.example' });
    await giveFactors(t, user, ['totp']);
    const id = await openRequest(t, user);
    const res = await admin(t, 'approve', root, { request_id: id });
    expect(res.statusCode, res.body).toBe(200);
    expect(await factorRows(t, user)).toEqual({ factors: 0, codes: 0 });
    for (const event of ['MFA_RESET_REQUESTED', 'MFA_RESET_APPROVED']) {
      const audit = await auditOf(t, user, event);
      expect(transition(audit)).toHaveLength(1);
      expect(notices(audit)).toEqual([expect.objectContaining({ channel: 'email', status: 'FAILURE', recipient: 'm***@bank.example', reason: expect.stringContaining('ECONNREFUSED') })]);
      expect(audit.find((e) => 'notification' in e.details)!.status).toBe('FAILURE');
    }
    // Logged as warnings: the mailer's failure, and the notice that was not delivered (by request and kind).
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; user_id?: string; request_id?: string; notice?: string; reason?: string; smtp?: string });
    const mailer = logged.filter((l) => l.msg.startsWith('Email delivery through '));
    expect(mailer).toHaveLength(2);
    for (const l of mailer) {
      expect(l).toMatchObject({ level: 40, smtp: `SMTP at 127.0.0.1:${port}` });
      expect(l.msg).toBe(`Email delivery through SMTP at 127.0.0.1:${port} failed: ${l.reason}`);
      expect(l.reason).toContain('ECONNREFUSED');
    }
    const undelivered = logged.filter((l) => l.msg === 'MFA reset notice not delivered');
    expect(undelivered.map((l) => l.notice)).toEqual(['requested', 'approved']);
    for (const l of undelivered) {
      expect(l).toMatchObject({ level: 40, user_id: user.uuid, request_id: id });
      expect(l.reason).toContain('ECONNREFUSED');
    }
    expect(lines.join('')).not.toContain('mail.less@bank.example'); // the address is not logged
  });
});
