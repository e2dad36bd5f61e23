/**
 * A signed-in person's own recoveries: the account's recovery workflows (what was lost, where each
 * stands, whether a branch started it, whether it was blocked, the dates), its requests to reset
 * second factors (state, the reason given, the decision) and whether recovery is locked, read with
 * the person's session (`GET /api/v1/auth/recoveries`) instead of the data export. And the cancel
 * of one of their own active workflows from that session
 * (`POST /api/v1/auth/recoveries/{reference}/cancel`): a recovery someone else started is exactly
 * what a signed-in owner wants to stop.
 *
 * - Only the caller's own: a reference of another account's workflow is answered like one nobody
 *   has (404 RECOVERY_NOT_FOUND), so the route tells nothing of other accounts.
 * - The cancel ends the workflow (even `waiting`: nothing has been removed yet), audited as
 *   RECOVERY_CANCELLED `by: owner_signed_in` with the session; every contact is told, as after a
 *   cancel from a notice. With `not_me`, it is also reported (RECOVERY_REPORTED_NOT_ME, logged at
 *   warn) but recovery is NOT locked: a session can be the stolen thing (a lost phone still
 *   signed in), and a thief who could lock recovery would turn every new attempt, the owner's
 *   own at a branch included, into a decoy for a day, renewable. The lock stays with whoever holds
 *   the contacts: the "this was not me" link of a notice (cancel.ts).
 * - Not from a session (400 RECOVERY_INVALID_STATE, `details.reason`): a workflow an operator
 *   started at a branch after checking the person's identity document (`started_at_branch`: the
 *   session weighs less than that check), and a decoy (`blocked`: started while recovery was
 *   locked, or one that cannot succeed for the account; it leads nowhere, so there is nothing to
 *   stop, and its cancel sends no notice, writes no report and locks nothing). Both are listed with
 *   `cancellable: false`.
 * - Reading writes nothing: a workflow or request past its time shows as `expired` before the
 *   background job records it so.
 */
import type { Logger } from 'pino';
import { auditContext } from '../audit/service.js';
import type { MfaContext } from '../mfa/challenge.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import type { MfaResetStatus, RecoveryState } from '../platform/db/schema.js';
import type { UserRow } from '../users/store.js';
import type { CancelLinks } from './cancel.js';
import { RecoveryErrors as E } from './errors.js';
import type { RecoveryKind } from './matrix.js';
import { normalizeReference } from './reference.js';
import type { StepHost } from './steps.js';
import { ACTIVE_STATES, FINISHED_STATES, type RecoveryStore, type WorkflowRow } from './store.js';

/** The newest this many of each are listed (workflows are deleted RECORD_RETENTION_DAYS after they end). */
export const OWN_SHOWN = 100;

export interface OwnRecovery {
  reference: string | null;
  lost: RecoveryKind;
  state: RecoveryState;
  started_at_branch: boolean;
  /** A decoy: started while recovery of the account was locked, or unable to succeed for it; it leads nowhere. */
  blocked: boolean;
  created_at: string;
  expires_at: string;
  waiting_until: string | null;
  completed_at: string | null;
  ended_at: string | null;
  /** Still active, self-service and not blocked: the signed-in owner may cancel it by its reference. */
  cancellable: boolean;
}

export interface OwnFactorReset {
  request_id: string;
  status: MfaResetStatus;
  reason: string;
  requested_at: string;
  expires_at: string;
  decided_at: string | null;
  decision_note: string | null;
  completed_at: string | null;
}

export interface OwnRecoveries {
  recoveries: OwnRecovery[];
  factor_resets: OwnFactorReset[];
  recovery_locked_until: string | null;
}

export interface OwnCancelled {
  recovery: OwnRecovery;
  reported: boolean;
  recovery_locked_until: string | null;
}

export interface OwnDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'recovery'>;
  store: RecoveryStore;
  links: CancelLinks;
  host: StepHost & { current(wf: WorkflowRow): Promise<WorkflowRow> };
}

type Row = { reference: string | null; kind: RecoveryKind; state: RecoveryState; decoy: boolean; initiated_by: number | null; created_at: Date | string; expires_at: Date | string; waiting_until: Date | string | null; completed_at: Date | string | null; ended_at: Date | string | null };

const iso = (d: Date | string): string => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));

export class OwnRecoveryList {
  constructor(private readonly deps: OwnDeps) {}

  /** The person's workflows and reset requests, newest first, and the recovery lock. */
  async list(userId: number): Promise<OwnRecoveries> {
    const d = this.deps;
    const [workflows, resets, locked] = await Promise.all([
      d.db.selectFrom('recovery_workflows').select(['reference', 'kind', 'state', 'decoy', 'initiated_by', 'created_at', 'expires_at', 'waiting_until', 'completed_at', 'ended_at'])
        .where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(OWN_SHOWN).execute(),
      d.db.selectFrom('mfa_reset_requests').select(['id', 'status', 'reason', 'requested_at', 'expires_at', 'decided_at', 'decision_note', 'completed_at'])
        .where('user_id', '=', userId).orderBy('requested_at', 'desc').orderBy('id', 'desc').limit(OWN_SHOWN).execute(),
      d.links.lockedUntil(userId),
    ]);
    const now = d.clock.now();
    return {
      recoveries: workflows.map((w) => this.present(w as Row)),
      factor_resets: resets.map((r) => ({
        request_id: r.id, status: r.status === 'pending' && new Date(r.expires_at).getTime() <= now ? 'expired' : r.status, reason: r.reason,
        requested_at: iso(r.requested_at), expires_at: iso(r.expires_at), decided_at: isoOrNull(r.decided_at), decision_note: r.decision_note, completed_at: isoOrNull(r.completed_at),
      })),
      recovery_locked_until: locked ? locked.toISOString() : null,
    };
  }

  /**
   * The owner cancels one of their own workflows: 404 RECOVERY_NOT_FOUND for a reference their
   * account has none under (another account's too), 409 RECOVERY_STALE once it has ended, 400
   * RECOVERY_INVALID_STATE for a decoy (`blocked`) or one a branch started (`started_at_branch`).
   * `notMe` reports it; it never locks recovery (see the file's comment).
   */
  async cancel(user: UserRow, typed: string, notMe: boolean, ctx: MfaContext, sessionId: string): Promise<OwnCancelled> {
    const d = this.deps;
    const ref = normalizeReference(typed);
    const found = ref === undefined ? undefined
      : await d.db.selectFrom('recovery_workflows').select('id').where('reference', '=', ref).where('user_id', '=', user.id).executeTakeFirst();
    const row = found ? await d.store.find(d.db, found.id) : undefined;
    if (!row) throw E.RECOVERY_NOT_FOUND();
    const wf = await d.host.current(row); // expired, or completed, when its time has come
    if (FINISHED_STATES.includes(wf.state)) throw E.RECOVERY_STALE({ state: wf.state });
    if (wf.decoy) throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'blocked' });
    if (wf.initiated_by !== null) throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'started_at_branch' });
    const now = new Date(d.clock.now());
    const audit = auditContext(ctx);
    const lockedUntil = isoOrNull(await d.links.lockedUntil(user.id));
    const cancelled = await d.db.transaction().execute(async (trx) => {
      if (!(await d.store.transition(trx, wf.id, ACTIVE_STATES, 'cancelled', now))) return false;
      if (notMe) {
        await d.host.record(wf, user, 'RECOVERY_REPORTED_NOT_ME', 'SUCCESS', audit, { state: wf.state, cancelled: true, recovery_locked_until: lockedUntil, locked: false, by: 'owner_signed_in', session_id: sessionId }, trx);
      }
      await d.host.record(wf, user, 'RECOVERY_CANCELLED', 'SUCCESS', audit, { by: 'owner_signed_in', session_id: sessionId, reported_not_me: notMe }, trx);
      return true;
    });
    const after = (await d.host.reload(wf))!;
    if (!cancelled) throw E.RECOVERY_STALE({ state: after.state }); // a parallel step ended it first
    if (notMe) d.log.warn({ user_id: user.uuid, workflow_id: wf.id, lost: wf.kind, cancelled: true, session_id: sessionId }, 'account recovery reported as not the owner\'s (signed in): recovery not locked (only a notice\'s link locks it)');
    await d.host.notify(user, 'stopped', after); // no lock was set: the email does not say one was
    const shown = await d.db.selectFrom('recovery_workflows').select(['reference', 'kind', 'state', 'decoy', 'initiated_by', 'created_at', 'expires_at', 'waiting_until', 'completed_at', 'ended_at'])
      .where('id', '=', wf.id).executeTakeFirstOrThrow();
    return { recovery: this.present(shown as Row), reported: notMe, recovery_locked_until: isoOrNull(await d.links.lockedUntil(user.id)) };
  }

  private present(w: Row): OwnRecovery {
    const lapsed = ACTIVE_STATES.includes(w.state) && w.state !== 'waiting' && new Date(w.expires_at).getTime() <= this.deps.clock.now();
    return {
      reference: w.reference, lost: w.kind, state: lapsed ? 'expired' : w.state, started_at_branch: w.initiated_by !== null, blocked: w.decoy,
      created_at: iso(w.created_at), expires_at: iso(w.expires_at), waiting_until: isoOrNull(w.waiting_until), completed_at: isoOrNull(w.completed_at),
      ended_at: lapsed ? iso(w.expires_at) : isoOrNull(w.ended_at),
      cancellable: !lapsed && ACTIVE_STATES.includes(w.state) && w.reference !== null && !w.decoy && w.initiated_by === null,
    };
  }
}
