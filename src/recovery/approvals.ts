/**
 * A branch's approval (`branch_approval`), the operator's proof of account recovery. The person
 * goes to a branch and reads the workflow's `reference` (shown by `status` while an alternative
 * holding a branch's approval can still be met); an operator holding `recovery.approve` finds the
 * workflow by it (or by the account, or in the queue of every workflow waiting for a branch),
 * checks an identity document, and approves or rejects.
 *
 * - Four eyes: the operator may decide neither a workflow of their own account nor one they
 *   started for a customer at the desk (`initiated_by`); another operator must (403
 *   RECOVERY_FOUR_EYES, audited).
 * - A decoy is never found by its reference (404, the same body as a reference nobody has): it
 *   names no account, so an operator can neither approve it nor learn from it.
 * - The approval is one proof of an alternative, counted as a customer's proof is (one
 *   transaction with the workflow's row locked): two operators approving at once get one
 *   approval recorded and a 409 RECOVERY_PROOF_ALREADY_GIVEN; the alternative's other proofs
 *   (say, the password) are still needed, given by the person afterwards.
 * - Audited as RECOVERY_BRANCH_APPROVED or RECOVERY_BRANCH_REJECTED with the operator, the kind
 *   of document and its number's last four characters, never more of it.
 */
import type { MfaContext } from '../mfa/challenge.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { decodeCursor, encodeCursor, isCursorTime } from '../platform/http/cursor.js';
import type { UserRow, UserStore } from '../users/store.js';
import { RecoveryErrors as E } from './errors.js';
import { emailMask, phoneMask } from './masks.js';
import { liveAlternatives, type Proof } from './matrix.js';
import { normalizeReference } from './reference.js';
import type { ProofSteps, StepHost } from './steps.js';
import { FINISHED_STATES, type RecoveryStore, type WorkflowRow } from './store.js';
import { lockedOf, passedOf } from './view.js';

const BRANCH: Proof = 'branch_approval';

export interface ApprovalDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  store: RecoveryStore;
  steps: ProofSteps;
  /** The workflow service: the steps' host, and a workflow as it stands now (expired or completed when due). */
  host: StepHost & { current(wf: WorkflowRow): Promise<WorkflowRow> };
}

/** What an operator checked: the kind of identity document and the last four characters of its number. */
export interface ApprovalInput {
  document_type: string;
  document_number_last4: string;
  note?: string;
}

/** A workflow waiting for a branch's approval, as the operator sees it before deciding. */
export interface AwaitingApproval {
  reference: string;
  lost: WorkflowRow['kind'];
  state: WorkflowRow['state'];
  user: { id: string; username: string; full_name: string | null };
  contacts: { email: string | null; phone: string | null };
  proofs: { given: Proof[]; with_approval: Proof[][] };
  initiated_by: { id: string; username: string } | null;
  created_at: string;
  expires_at: string;
}

/** A workflow after an operator's decision. */
export interface Decision {
  reference: string;
  lost: WorkflowRow['kind'];
  state: WorkflowRow['state'];
  proofs: { given: Proof[]; needed: number };
}

/** A page of the branch queue, and the cursor of the next (null: the last). */
export interface AwaitingPage {
  recoveries: AwaitingApproval[];
  next_cursor: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** At most this many candidate workflows are read for one page; past it the page may be short, with a cursor. */
const MAX_SCAN = 500;

const proving = (wf: WorkflowRow): boolean => wf.state === 'initiated' || wf.state === 'verifying';

export class BranchApprovals {
  constructor(private readonly deps: ApprovalDeps) {}

  /** The workflows waiting for a branch's approval, by reference or by the account's uuid (none: an empty list). */
  async list(q: { reference?: string; userId?: string }): Promise<AwaitingApproval[]> {
    const d = this.deps;
    let found: WorkflowRow[] = [];
    if (q.reference !== undefined) {
      const ref = normalizeReference(q.reference);
      const wf = ref === undefined ? undefined : await d.store.findByReference(d.db, ref);
      found = wf ? [wf] : [];
    } else if (q.userId !== undefined) {
      const user = await d.users.findByUuid(q.userId);
      found = user ? await d.store.provingOf(d.db, user.id) : [];
    }
    const out: AwaitingApproval[] = [];
    for (const row of found) {
      const wf = await d.host.current(row);
      const shown = await this.awaiting(wf);
      if (shown) out.push(shown);
    }
    return out;
  }

  /**
   * The branch queue: every workflow waiting for a branch's approval, oldest first, `limit` a
   * page, from `cursor` (the `next_cursor` of the previous page; 422 VALIDATION_ERROR for a
   * malformed one). Keyset on (created_at, id): no page is read by skipping the ones before.
   */
  async queue(q: { cursor?: string; limit: number }): Promise<AwaitingPage> {
    const d = this.deps;
    let position = q.cursor === undefined ? undefined : decodeCursor(q.cursor, ['at', 'id'], (c) => UUID.test(c.id) && isCursorTime(c.at));
    const now = new Date(d.clock.now());
    const shown: Array<{ item: AwaitingApproval; at: string; id: string }> = [];
    let scanned = 0;
    let exhausted = false;
    // One more than a page is looked for, to know whether a next page has anything in it.
    while (shown.length <= q.limit && scanned < MAX_SCAN) {
      const rows = await d.store.awaitingBranch(d.db, now, position, q.limit + 1);
      for (const row of rows) {
        const item = await this.awaiting(row);
        if (item) shown.push({ item, at: row.cursor_at, id: row.id });
        position = { at: row.cursor_at, id: row.id };
        if (shown.length > q.limit) break;
      }
      scanned += rows.length;
      if (rows.length <= q.limit) {
        exhausted = shown.length <= q.limit;
        break;
      }
    }
    const page = shown.slice(0, q.limit);
    const last = page.at(-1);
    let next: string | null = null;
    if (shown.length > q.limit && last) next = encodeCursor({ at: last.at, id: last.id });
    else if (!exhausted && position) next = encodeCursor(position); // read up to MAX_SCAN rows: go on from there
    return { recoveries: page.map((s) => s.item), next_cursor: next };
  }

  /** Approves: the workflow's `branch_approval` is given; answers the workflow as it stands after. */
  async approve(reference: string, operator: UserRow, input: ApprovalInput, ctx: MfaContext): Promise<Decision> {
    const d = this.deps;
    const wf = await this.decidable(reference, operator, 'RECOVERY_BRANCH_APPROVED', ctx);
    const s = await d.host.subject(wf, ctx);
    if (!s.user) throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'account_unusable' });
    const details = {
      operator_id: operator.uuid, operator_username: operator.username,
      document_type: input.document_type, document_number_last4: input.document_number_last4, ...(input.note ? { note: input.note } : {}),
    };
    await d.steps.pass(s, BRANCH, { event: 'RECOVERY_BRANCH_APPROVED', details });
    return this.decision(wf);
  }

  /** Rejects: the workflow ends as `rejected`; the person may start again (and is seen again). */
  async reject(reference: string, operator: UserRow, reason: string, ctx: MfaContext): Promise<Decision> {
    const d = this.deps;
    const wf = await this.decidable(reference, operator, 'RECOVERY_BRANCH_REJECTED', ctx);
    const s = await d.host.subject(wf, ctx);
    const now = new Date(d.clock.now());
    const done = await d.db.transaction().execute(async (trx) => {
      if (!(await d.store.transition(trx, wf.id, ['initiated', 'verifying'], 'rejected', now))) return false;
      await d.host.record(wf, s.user, 'RECOVERY_BRANCH_REJECTED', 'SUCCESS', s.audit, { operator_id: operator.uuid, operator_username: operator.username, reason }, trx);
      return true;
    });
    const after = (await d.host.reload(wf))!;
    if (!done) throw FINISHED_STATES.includes(after.state) ? E.RECOVERY_STALE({ state: after.state }) : E.RECOVERY_INVALID_STATE({ state: after.state, reason: 'already_verified' });
    return this.decision(after);
  }

  private async decision(wf: WorkflowRow): Promise<Decision> {
    const after = (await this.deps.host.reload(wf))!;
    const view = await this.deps.host.viewOf(after);
    return { reference: after.reference!, lost: after.kind, state: after.state, proofs: { given: view.proofs.given, needed: view.proofs.needed } };
  }

  /**
   * The workflow an operator may decide now: 404 for a reference no real workflow has; 403
   * four eyes (audited); 400 when its kind takes no branch approval or it is verified already;
   * 409 once it has ended.
   */
  private async decidable(typed: string, operator: UserRow, event: 'RECOVERY_BRANCH_APPROVED' | 'RECOVERY_BRANCH_REJECTED', ctx: MfaContext): Promise<WorkflowRow> {
    const d = this.deps;
    const ref = normalizeReference(typed);
    const row = ref === undefined ? undefined : await d.store.findByReference(d.db, ref);
    if (!row) throw E.RECOVERY_NOT_FOUND();
    const wf = await d.host.current(row);
    const reason = wf.user_id === operator.id ? 'own_account' : wf.initiated_by === operator.id ? 'started_by_you' : undefined;
    if (reason !== undefined) {
      const s = await d.host.subject(wf, ctx);
      await d.host.record(wf, s.user, event, 'FAILURE', s.audit, { operator_id: operator.uuid, operator_username: operator.username, error_code: 'RECOVERY_FOUR_EYES', reason });
      throw E.RECOVERY_FOUR_EYES({ reason });
    }
    if (!d.host.alternatives(wf).some((a) => a.includes(BRANCH))) throw E.RECOVERY_PROOF_NOT_OFFERED({ proof: BRANCH });
    if (FINISHED_STATES.includes(wf.state)) throw E.RECOVERY_STALE({ state: wf.state });
    if (!proving(wf)) throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'already_verified' });
    return wf;
  }

  /**
   * The workflow as an operator sees it, when it waits for a branch's approval: still being
   * proved, an alternative holding one can be met, none given yet.
   */
  private async awaiting(wf: WorkflowRow): Promise<AwaitingApproval | undefined> {
    const d = this.deps;
    if (wf.decoy || wf.reference === null || wf.user_id === null || !proving(wf)) return undefined;
    const rows = await d.store.proofs(d.db, wf.id);
    const passed = passedOf(rows);
    const open = liveAlternatives(d.host.alternatives(wf), passed, lockedOf(rows)).filter((a) => a.includes(BRANCH));
    if (open.length === 0 || passed.has(BRANCH)) return undefined;
    const user = await d.users.findById(wf.user_id);
    if (!user) return undefined;
    const starter = wf.initiated_by === null ? undefined : await d.users.findById(wf.initiated_by);
    return {
      reference: wf.reference, lost: wf.kind, state: wf.state,
      user: { id: user.uuid, username: user.username, full_name: user.full_name ?? null },
      contacts: { email: user.email ? emailMask(user.email) : null, phone: user.phone ? phoneMask(user.phone) : null },
      proofs: { given: [...passed], with_approval: open.map((a) => [...a]) },
      initiated_by: starter ? { id: starter.uuid, username: starter.username } : null,
      created_at: wf.created_at.toISOString(), expires_at: wf.expires_at.toISOString(),
    };
  }
}
