/**
 * What the account recovery suites (test/http/recovery*.test.ts) share: the routes called over
 * HTTP, the codes read from the development outbox or the test SMTP server once background
 * deliveries are done, security answers and branch officers set up through the services, and
 * the stored rows and audit trail of a workflow. `recovery(() => t)` binds them to a suite's app
 * (read lazily: the app is built in `beforeAll`).
 */
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { App } from '../../src/platform/http/app.js';
import type { TestApp } from './app.js';
import { bearer, seedUser, signIn } from './fixtures.js';
import type { TestSmtp } from './smtp.js';

export type Res = Awaited<ReturnType<App['inject']>>;

export interface ProofOptionBody {
  proof: string;
  attempts_left: number;
  available: boolean;
  destination?: string;
}

/** A recovery answer (initiate, verify-identity, status, cancel, access-policy, an operator's decision), loosely typed. */
export type Body = Record<string, unknown> & {
  recovery_id?: string;
  state: string;
  reference?: string;
  waiting_until?: string;
  reset_token?: string;
  sent?: { proof: string; destination: string };
  binding?: { id: string; status: string; channel: string } | null;
  proofs: { given: string[]; needed: number; alternatives: string[][]; options: ProofOptionBody[] };
};

export const CTX = { ip: '127.0.0.1', userAgent: 'test', fingerprint: '', channel: 'web' };
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** The answer's body, once its status is `code` (200 by default). */
export function ok(res: Res, code = 200): Body {
  expect(res.statusCode, res.body).toBe(code);
  return res.json() as Body;
}

/** A six-digit code that is not `code` (`i` apart). */
export const wrongFor = (code: string, i = 1): string => String((Number(code) + i) % 1_000_000).padStart(6, '0');

/** A body with what must differ between any two workflows (the handle) replaced by its form; everything else compared as is. */
export function shape(body: Body): unknown {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) => {
    if (key === 'recovery_id') return typeof value === 'string' && /^rcv_[A-Za-z0-9_-]{43}$/.test(value) ? '<handle>' : value;
    return value;
  });
}

export interface AuditRow {
  status: string;
  user_id: string | null;
  username: string | null;
  details: Record<string, unknown>;
}

export function recovery(get: () => TestApp) {
  const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}, app: App = get().app): Promise<Res> => app.inject({ method: 'POST', url, payload, headers });
  const db = () => get().s.database.db;

  const r = {
    post,
    initiate: (identifier: string, lost = 'password', headers: Record<string, string> = {}, app?: App) => post('/api/v1/auth/reset/initiate', { identifier, lost }, headers, app),
    verify: (recovery_id: string, body: Record<string, unknown>, app?: App) => post('/api/v1/auth/reset/verify-identity', { recovery_id, ...body }, {}, app),
    status: (recovery_id: string, app?: App) => post('/api/v1/auth/reset/status', { recovery_id }, {}, app),
    cancel: (recovery_id: string) => post('/api/v1/auth/reset/cancel', { recovery_id }),
    cancelWith: (cancel_token: string) => post('/api/v1/auth/reset/cancel', { cancel_token }),
    approve: (reference: string, token: string, body: Record<string, unknown> = { document_type: 'national_id', document_number_last4: '4821' }) => post(`/api/v1/admin/recoveries/${reference}/approve`, body, bearer(token)),

    /** Starts a workflow; its `recovery_id`. */
    async start(identifier: string, lost = 'password', app?: App): Promise<string> {
      return ok(await r.initiate(identifier, lost, {}, app), 202).recovery_id!;
    },

    /** The code last sent to `address` through the development outbox, once background deliveries are done. */
    async codeTo(address: string): Promise<string> {
      await get().s.recovery.settled();
      return get().s.otp.outbox.latest(address)!.code;
    },

    /** How many codes the development outbox holds for `address`, once background deliveries are done. */
    async outboxCount(address: string): Promise<number> {
      await get().s.recovery.settled();
      return get().s.otp.outbox.messages.filter((m) => m.to === address).length;
    },

    /** The code of the last mail to `address` that carries one, once every background delivery is done. */
    async mailedCode(smtp: TestSmtp, address: string): Promise<string> {
      await get().s.recovery.settled();
      const mail = smtp.to(address).filter((m) => /^Code: \d{6}$/m.test(m.text)).at(-1)!;
      return /^Code: (\d{6})$/m.exec(mail.text)![1]!;
    },

    /** Sets security answers for a user (as many as given), through the service (the setup route is tested elsewhere). */
    async withAnswers(username: string, answers: string[]): Promise<Map<string, string>> {
      const s = get().s;
      const user = (await s.users.findByLogin(username))!;
      const pool = (await s.securityQuestions.pool()).slice(0, answers.length);
      await s.securityQuestions.configure(user, pool.map((q, i) => ({ question_id: q.id, answer: answers[i]! })), CTX, 'setup');
      return new Map(pool.map((q, i) => [q.id, answers[i]!]));
    },

    /** A role holding `recovery.approve` (`branch_officer`, created once), and a signed-in operator holding it. */
    async branchOfficer(username: string): Promise<{ uuid: string; token: string }> {
      const role = await db().selectFrom('roles').select('id').where('name', '=', 'branch_officer').executeTakeFirst()
        ?? await db().insertInto('roles').values({ name: 'branch_officer', description: 'Approves recoveries at a branch' }).returning('id').executeTakeFirstOrThrow();
      const perm = await db().selectFrom('permissions').select('id').where('name', '=', 'recovery.approve').executeTakeFirstOrThrow();
      await db().insertInto('role_permissions').values({ role_id: role.id, permission_id: perm.id }).onConflict((oc) => oc.doNothing()).execute();
      const user = await seedUser(get().s, username, { roles: ['branch_officer'], email: `${username}@bank.example` });
      return { uuid: user.uuid, token: (await signIn(get().app, username)).access_token };
    },

    /** The stored workflow behind a handle (found by the handle's keyed hash, as the service finds it). */
    async workflow(id: string) {
      const hash = get().s.keys.hasher('field', 'recovery-handle').hex(id);
      return db().selectFrom('recovery_workflows').selectAll().where('handle_hash', '=', hash).executeTakeFirstOrThrow();
    },

    async proofRow(id: string, proof: string) {
      const wf = await r.workflow(id);
      return db().selectFrom('recovery_proofs').selectAll().where('workflow_id', '=', wf.id).where('proof', '=', proof).executeTakeFirstOrThrow();
    },

    /** Audit rows of one workflow (by handle, or by its id with `byId`) and event type. */
    async audited(id: string, event: string, byId = false): Promise<AuditRow[]> {
      const workflowId = byId ? id : (await r.workflow(id)).id;
      const rows = await db().selectFrom('audit_log').select(['status', 'user_id', 'username', 'details']).where('event_type', '=', event)
        .where(sql<boolean>`details->>'workflow_id' = ${workflowId}`).execute();
      return rows as AuditRow[];
    },

    /** The recovery audit events recorded for a user, sorted (the clock is frozen: entries share a timestamp). */
    async eventsOf(uuid: string): Promise<string[]> {
      const rows = await db().selectFrom('audit_log').select('event_type').where('user_id', '=', uuid).where('event_type', 'like', 'RECOVERY_%').execute();
      return rows.map((row) => row.event_type).sort();
    },
  };
  return r;
}
