/**
 * SQL of account recovery (`recovery_workflows`, `recovery_proofs`, migration 031). Every
 * check-and-change is one conditional statement, so parallel requests and nodes agree without
 * application locks: the partial unique index decides which of two initiates holds an account's
 * slot, an attempt is reserved by an UPDATE that refuses past the limit, a send by an UPDATE that
 * refuses inside the resend interval, and a transition only from the states it may leave.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';
import type { RecoveryState } from '../platform/db/schema.js';
import { parseAlternatives, type Alternative, type Proof, type RecoveryKind } from './matrix.js';

export const ACTIVE_STATES: readonly RecoveryState[] = ['initiated', 'verifying', 'verified', 'waiting'];
export const FINISHED_STATES: readonly RecoveryState[] = ['completed', 'cancelled', 'expired', 'rejected'];

export interface WorkflowRow {
  id: string;
  kind: RecoveryKind;
  state: RecoveryState;
  user_id: number | null;
  decoy: boolean;
  account_hash: string;
  login_key: string;
  subject_masked: string;
  created_at: Date;
  expires_at: Date;
  completed_at: Date | null;
  /** What the person reads to a branch operator (null: started before branch approvals existed). */
  reference: string | null;
  /** The operator who started it at a desk (null: the person did). */
  initiated_by: number | null;
  /** `waiting`: when it takes effect unless cancelled. */
  waiting_until: Date | null;
  /** The alternatives of its kind when it started (null: started before they were kept; the configuration's then). */
  alternatives: Alternative[] | null;
}

export interface ProofRow {
  proof: Proof;
  attempts: number;
  passed_at: Date | null;
  sends: number;
  last_sent_at: Date | null;
  code_expires_at: Date | null;
  destination_masked: string | null;
  /** Internal ids of the security questions asked (none asked yet: null). */
  question_ids: number[] | null;
}

export interface NewWorkflow {
  handleHash: string;
  kind: RecoveryKind;
  userId: number | null;
  decoy: boolean;
  accountHash: string;
  loginKey: string;
  subjectMasked: string;
  now: Date;
  expiresAt: Date;
  reference: string;
  initiatedBy: number | null;
  /** The alternatives of its kind, as configured now: the workflow keeps them. */
  alternatives: readonly Alternative[];
}

/** Alternatives as the setting writes them (`a+b|c+d`). */
export const writeAlternatives = (alternatives: readonly Alternative[]): string => alternatives.map((a) => a.join('+')).join('|');

/** Alternatives kept by a workflow; null when none were kept or they no longer read as a valid setting. */
function readAlternatives(kind: RecoveryKind, raw: string | null): Alternative[] | null {
  if (raw === null) return null;
  const parsed = parseAlternatives(kind, raw);
  return parsed.problems.length > 0 ? null : parsed.alternatives;
}

const WORKFLOW_COLUMNS = ['id', 'kind', 'state', 'user_id', 'decoy', 'account_hash', 'login_key', 'subject_masked', 'created_at', 'expires_at', 'completed_at', 'reference', 'initiated_by', 'waiting_until', 'alternatives'] as const;
const PROOF_COLUMNS = ['proof', 'attempts', 'passed_at', 'sends', 'last_sent_at', 'code_expires_at', 'destination_masked', 'question_ids'] as const;

const date = (d: Date | string): Date => new Date(d);
const dateOrNull = (d: Date | string | null): Date | null => (d === null ? null : new Date(d));

function toWorkflow(r: Record<(typeof WORKFLOW_COLUMNS)[number], unknown>): WorkflowRow {
  return {
    id: r.id as string, kind: r.kind as RecoveryKind, state: r.state as RecoveryState, user_id: r.user_id as number | null, decoy: r.decoy as boolean,
    account_hash: r.account_hash as string, login_key: r.login_key as string, subject_masked: r.subject_masked as string,
    created_at: date(r.created_at as Date), expires_at: date(r.expires_at as Date), completed_at: dateOrNull(r.completed_at as Date | null),
    reference: r.reference as string | null, initiated_by: r.initiated_by as number | null, waiting_until: dateOrNull(r.waiting_until as Date | null),
    alternatives: readAlternatives(r.kind as RecoveryKind, r.alternatives as string | null),
  };
}

function toProof(r: Record<(typeof PROOF_COLUMNS)[number], unknown>): ProofRow {
  const ids = r.question_ids as string | null;
  return {
    proof: r.proof as Proof, attempts: Number(r.attempts), passed_at: dateOrNull(r.passed_at as Date | null), sends: Number(r.sends),
    last_sent_at: dateOrNull(r.last_sent_at as Date | null), code_expires_at: dateOrNull(r.code_expires_at as Date | null),
    destination_masked: r.destination_masked as string | null, question_ids: ids === null || ids === '' ? null : ids.split(',').map(Number),
  };
}

export class RecoveryStore {
  /**
   * Inserts a workflow. As the account's one active workflow of its kind when `holdsSlot`: then
   * undefined when the account already has one (the conflict target names the partial index's
   * predicate literally, as PostgreSQL infers a partial unique index only from it).
   */
  async insert(trx: Db, w: NewWorkflow, holdsSlot: boolean): Promise<string | undefined> {
    const values = sql`(${w.handleHash}, ${w.kind}, 'initiated', ${w.userId}, ${w.decoy}, ${w.accountHash}, ${holdsSlot}, ${w.loginKey}, ${w.subjectMasked}, ${w.now}, ${w.expiresAt}, ${w.reference}, ${w.initiatedBy}, ${writeAlternatives(w.alternatives)})`;
    const conflict = holdsSlot ? sql`ON CONFLICT (account_hash, kind) WHERE holds_slot AND state IN ('initiated', 'verifying', 'verified', 'waiting') DO NOTHING` : sql``;
    const r = await sql<{ id: string }>`
      INSERT INTO recovery_workflows (handle_hash, kind, state, user_id, decoy, account_hash, holds_slot, login_key, subject_masked, created_at, expires_at, reference, initiated_by, alternatives)
      VALUES ${values} ${conflict}
      RETURNING id`.execute(trx);
    return r.rows[0]?.id;
  }

  /** One row per proof the workflow's kind offers; `destinations` are the masks codes would go to. */
  async insertProofs(trx: Db, workflowId: string, proofs: readonly Proof[], destinations: Partial<Record<Proof, string>>): Promise<void> {
    await trx.insertInto('recovery_proofs')
      .values(proofs.map((proof) => ({ workflow_id: workflowId, proof, passed_at: null, last_sent_at: null, code_expires_at: null, destination_masked: destinations[proof] ?? null, question_ids: null })))
      .execute();
  }

  async findByHandle(db: Db, handleHash: string): Promise<WorkflowRow | undefined> {
    const r = await db.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS).where('handle_hash', '=', handleHash).executeTakeFirst();
    return r && toWorkflow(r);
  }

  async find(db: Db, id: string): Promise<WorkflowRow | undefined> {
    const r = await db.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS).where('id', '=', id).executeTakeFirst();
    return r && toWorkflow(r);
  }

  /** The real (never a decoy's) workflow of a branch reference; locked until `trx` ends when `lock`. */
  async findByReference(db: Db, reference: string, lock = false): Promise<WorkflowRow | undefined> {
    const q = db.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS).where('reference', '=', reference).where('decoy', '=', false);
    const r = await (lock ? q.forUpdate() : q).executeTakeFirst();
    return r && toWorkflow(r);
  }

  /** An account's real workflows still being proved (a branch approval may be waited for), oldest first. */
  async provingOf(db: Db, userId: number): Promise<WorkflowRow[]> {
    const rows = await db.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS).where('user_id', '=', userId).where('decoy', '=', false)
      .where('state', 'in', ['initiated', 'verifying']).orderBy('created_at').orderBy('id').execute();
    return rows.map(toWorkflow);
  }

  /**
   * The branch queue: real workflows of an account still being proved, not past their expiry,
   * whose kind offers a branch's approval that is not given yet (a `branch_approval` proof row
   * not passed: the row exists only when the workflow's alternatives name it). Oldest first by
   * (created_at, id), after the position `after` (keyset: a deep page costs what the first does);
   * each row carries its position, `cursor_at`, UTC to the microsecond.
   */
  async awaitingBranch(db: Db, now: Date, after: { at: string; id: string } | undefined, limit: number): Promise<Array<WorkflowRow & { cursor_at: string }>> {
    let q = db.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS)
      .select(sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'))
      .where('decoy', '=', false).where('user_id', 'is not', null).where('reference', 'is not', null)
      .where('state', 'in', ['initiated', 'verifying']).where('expires_at', '>', now)
      .where((eb) => eb.exists(eb.selectFrom('recovery_proofs as p').select('p.proof').whereRef('p.workflow_id', '=', 'recovery_workflows.id')
        .where('p.proof', '=', 'branch_approval').where('p.passed_at', 'is', null)));
    if (after !== undefined) {
      const at = sql<Date>`${after.at}::timestamptz`;
      q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', after.id)])]));
    }
    const rows = await q.orderBy('created_at').orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ ...toWorkflow(r), cursor_at: r.cursor_at }));
  }

  /** The workflow, its row locked until `trx` ends: its transitions one after another. */
  async lock(trx: Db, id: string): Promise<WorkflowRow | undefined> {
    const r = await trx.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
    return r && toWorkflow(r);
  }

  async proofs(db: Db, workflowId: string): Promise<Map<Proof, ProofRow>> {
    const rows = await db.selectFrom('recovery_proofs').select(PROOF_COLUMNS).where('workflow_id', '=', workflowId).execute();
    return new Map(rows.map((r) => [r.proof as Proof, toProof(r)]));
  }

  /**
   * Reserves one attempt at a proof before anything is compared: undefined when the proof is
   * given already or out of attempts. A burst of parallel guesses gets at most `max` through.
   */
  async reserveAttempt(db: Db, workflowId: string, proof: Proof, max: number): Promise<number | undefined> {
    const r = await db.updateTable('recovery_proofs').set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('workflow_id', '=', workflowId).where('proof', '=', proof).where('passed_at', 'is', null).where('attempts', '<', max)
      .returning('attempts').executeTakeFirst();
    return r?.attempts;
  }

  /**
   * Records a code sent, unless one was sent less than `resendSec` ago or `maxSends` were sent
   * (false then): one statement, so two parallel requests cannot both pass the throttle.
   */
  async reserveSend(db: Db, workflowId: string, proof: Proof, s: { now: Date; resendSec: number; maxSends: number; codeExpiresAt: Date; destination: string }): Promise<boolean> {
    const r = await db.updateTable('recovery_proofs')
      .set((eb) => ({ sends: eb('sends', '+', 1), last_sent_at: s.now, code_expires_at: s.codeExpiresAt, destination_masked: s.destination }))
      .where('workflow_id', '=', workflowId).where('proof', '=', proof).where('passed_at', 'is', null).where('sends', '<', s.maxSends)
      .where((eb) => eb.or([eb('last_sent_at', 'is', null), eb('last_sent_at', '<=', new Date(s.now.getTime() - s.resendSec * 1000))]))
      // Still proving when the code goes out: a cancel or expiry just before sends nothing.
      .where((eb) => eb.exists(eb.selectFrom('recovery_workflows as w').select('w.id').whereRef('w.id', '=', 'recovery_proofs.workflow_id')
        .where('w.state', 'in', ['initiated', 'verifying']).where('w.expires_at', '>', s.now)))
      .returning('sends').executeTakeFirst();
    return r !== undefined;
  }

  /**
   * Reserves a code of `proof` from the account's budget (`maxSends` in the window since `since`,
   * every workflow of the account together) and on the workflow's proof row (`reserveSend`), as
   * one: the account's reservations of a proof run one after another (a transaction-scoped
   * advisory lock on the account's keyed hash and the proof, in the one-time codes' lock space),
   * so a parallel burst across the account's workflows cannot all pass the count.
   */
  async reserveAccountSend(db: Db, accountHash: string, workflowId: string, proof: Proof, s: Parameters<RecoveryStore['reserveSend']>[3] & { since: Date }): Promise<'reserved' | 'budget_spent' | 'refused'> {
    return db.transaction().execute(async (trx) => {
      await this.lockBudget(trx, accountHash, proof);
      if ((await this.accountSends(trx, accountHash, proof, s.since)) >= s.maxSends) return 'budget_spent';
      return (await this.reserveSend(trx, workflowId, proof, s)) ? 'reserved' : 'refused';
    });
  }

  /** Until `trx` ends, no other reservation of `proof` codes for the account runs (on any node). */
  async lockBudget(trx: Db, accountHash: string, proof: Proof): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.otpSend}::int, hashtext(${`recovery-account:${accountHash}:${proof}`}))`.execute(trx);
  }

  /** Records the questions asked, unless some were recorded first; the ones that stand. */
  async setQuestions(db: Db, workflowId: string, ids: readonly number[]): Promise<number[]> {
    await db.updateTable('recovery_proofs').set({ question_ids: ids.join(',') })
      .where('workflow_id', '=', workflowId).where('proof', '=', 'security_questions').where('question_ids', 'is', null).execute();
    return (await this.proofs(db, workflowId)).get('security_questions')?.question_ids ?? [...ids];
  }

  /** Records a proof given; false when it was given already (a parallel step was first). */
  async markPassed(trx: Db, workflowId: string, proof: Proof, now: Date): Promise<boolean> {
    const r = await trx.updateTable('recovery_proofs').set({ passed_at: now }).where('workflow_id', '=', workflowId).where('proof', '=', proof).where('passed_at', 'is', null)
      .returning('proof').executeTakeFirst();
    return r !== undefined;
  }

  /** Moves a workflow from one of `from` to `to`; false when it was in none of them. */
  async transition(trx: Db, id: string, from: readonly RecoveryState[], to: RecoveryState, now: Date): Promise<boolean> {
    const finished = FINISHED_STATES.includes(to);
    const r = await trx.updateTable('recovery_workflows')
      .set({
        state: to,
        ...(to === 'verified' || to === 'completed' ? { verified_at: now } : {}),
        ...(to === 'completed' ? { completed_at: now } : {}),
        ...(finished ? { ended_at: now } : {}),
      })
      .where('id', '=', id).where('state', 'in', [...from])
      .returning('id').executeTakeFirst();
    return r !== undefined;
  }

  /**
   * A verified workflow starts its cooling-off: `waiting` until `until` (which is also when it
   * would expire, were it never completed); false when it was not being proved.
   */
  async startWaiting(trx: Db, id: string, now: Date, until: Date, hours: number): Promise<boolean> {
    const r = await trx.updateTable('recovery_workflows')
      .set({ state: 'waiting', verified_at: now, waiting_until: until, cooling_off_hours: hours, expires_at: until })
      .where('id', '=', id).where('state', 'in', ['initiated', 'verifying'])
      .returning('id').executeTakeFirst();
    return r !== undefined;
  }

  /** Workflows whose cooling-off has ended (at most `limit`, the longest due first). */
  async waitingDue(db: Db, now: Date, limit: number): Promise<WorkflowRow[]> {
    const rows = await db.selectFrom('recovery_workflows').select(WORKFLOW_COLUMNS).where('state', '=', 'waiting').where('waiting_until', '<=', now)
      .orderBy('waiting_until').limit(limit).execute();
    return rows.map(toWorkflow);
  }

  /** Marks active workflows past their expiry expired (one, an account's of a kind, or all); returns them. */
  async expireDue(db: Db, now: Date, only: { id?: string; account?: { hash: string; kind: RecoveryKind } } = {}): Promise<WorkflowRow[]> {
    // A workflow `waiting` is never expired: its cooling-off ends in completion (or a cancel).
    let q = db.updateTable('recovery_workflows').set({ state: 'expired', ended_at: now })
      .where('state', 'in', ACTIVE_STATES.filter((st) => st !== 'waiting')).where('expires_at', '<=', now);
    if (only.id !== undefined) q = q.where('id', '=', only.id);
    if (only.account !== undefined) q = q.where('account_hash', '=', only.account.hash).where('kind', '=', only.account.kind);
    return (await q.returning(WORKFLOW_COLUMNS).execute()).map(toWorkflow);
  }

  /**
   * Codes of `proof` sent for an account in workflows touched since `since`, every workflow of the
   * account together (a budget that cancelling and starting again does not renew).
   */
  async accountSends(db: Db, accountHash: string, proof: Proof, since: Date): Promise<number> {
    const r = await db.selectFrom('recovery_proofs as p').innerJoin('recovery_workflows as w', 'w.id', 'p.workflow_id')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('p.sends'), eb.lit(0)).as('n'))
      .where('w.account_hash', '=', accountHash).where('p.proof', '=', proof).where('p.last_sent_at', '>', since)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Ends the account's open workflow of `kind` (the one holding its slot) as `cancelled`; returns it. */
  async supersede(trx: Db, accountHash: string, kind: RecoveryKind, now: Date): Promise<WorkflowRow[]> {
    const r = await trx.updateTable('recovery_workflows').set({ state: 'cancelled', ended_at: now })
      .where('account_hash', '=', accountHash).where('kind', '=', kind).where('holds_slot', '=', true).where('state', 'in', [...ACTIVE_STATES])
      .returning(WORKFLOW_COLUMNS).execute();
    return r.map(toWorkflow);
  }

  /** Deletes at most `limit` workflows (with their proofs) that ended before `cutoff`; how many. */
  async purgeEnded(db: Db, cutoff: Date, limit: number): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      WITH due AS (SELECT id FROM recovery_workflows WHERE ended_at < ${cutoff} ORDER BY ended_at LIMIT ${limit}),
      gone AS (DELETE FROM recovery_workflows WHERE id IN (SELECT id FROM due) RETURNING id)
      SELECT count(*)::int AS n FROM gone`.execute(db);
    return rows[0]?.n ?? 0;
  }
}
