/**
 * "This was not me": the one-click cancel of a recovery by the account's real owner, from any
 * notice (start, cooling-off, completion). Each notice carries its own cancel token (`rcx_` and
 * 32 random bytes), stored only as a keyed hash, good once, until the workflow has been over for
 * 7 days. The link puts it in the URL's fragment (`…/recovery/cancel#rcx_…`): browsers never send
 * a fragment to a server, so it reaches no access log or proxy; the page's script reads it and
 * POSTs it (cancel-page.ts).
 *
 * A cancel by token ends the workflow (even `waiting`: nothing has been removed yet), ends
 * nothing else (the owner keeps their sessions and signs in as usual), raises a security alert
 * (audited RECOVERY_REPORTED_NOT_ME, and logged at warn with the user's uuid) and locks recovery
 * for the account for RECOVERY_LOCK_HOURS (24): an `initiate` meanwhile gets a decoy that answers
 * exactly like a real workflow, so whoever tries again learns nothing. A token of a workflow that
 * has ended already still raises the alert and the lock.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { auditContext } from '../audit/service.js';
import type { MfaContext } from '../mfa/challenge.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { UserStore } from '../users/store.js';
import { RecoveryErrors as E } from './errors.js';
import type { StepHost } from './steps.js';
import { ACTIVE_STATES, type RecoveryStore, type WorkflowRow } from './store.js';
import type { RecoveryView } from './view.js';

/** How long after its workflow ended a cancel token still raises the alert. */
const AFTER_END_MS = 7 * 86_400_000;

export type CancelAnswer = RecoveryView & { reported: true; recovery_locked_until: string };

export interface CancelDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'recovery'>;
  users: UserStore;
  /** Keyed hash of a cancel token. */
  cancelTokens: Hasher;
  store: RecoveryStore;
  host: StepHost;
}

export class CancelLinks {
  constructor(private readonly deps: CancelDeps) {}

  /** A new cancel link for a notice of `wf` (undefined when RECOVERY_CANCEL_URL is unset). */
  async mint(wf: WorkflowRow): Promise<string | undefined> {
    const d = this.deps;
    const base = d.config.recovery.cancelUrl;
    if (base === undefined) return undefined;
    const token = `rcx_${randomBytes(32).toString('base64url')}`;
    await d.db.insertInto('recovery_cancel_tokens').values({ token_hash: d.cancelTokens.hex(token), workflow_id: wf.id, created_at: new Date(d.clock.now()), used_at: null }).execute();
    return `${base}#${token}`;
  }

  /** Until when recovery is locked for the account (null: it is not). Runs alike for an id no account has. */
  async lockedUntil(userId: number, db: Db = this.deps.db): Promise<Date | null> {
    const r = await db.selectFrom('recovery_locks').select('locked_until').where('user_id', '=', userId).executeTakeFirst();
    const until = r ? new Date(r.locked_until) : null;
    return until !== null && until.getTime() > this.deps.clock.now() ? until : null;
  }

  /** Locks recovery for the account until `until` (a later report moves it). */
  async lock(trx: Db, userId: number, until: Date): Promise<void> {
    await trx.insertInto('recovery_locks').values({ user_id: userId, locked_until: until })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ locked_until: until })).execute();
  }

  /** The owner's "this was not me": 404 for a token that names nothing (or too old), 409 once used. */
  async cancel(token: string, ctx: MfaContext): Promise<CancelAnswer> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const until = new Date(now.getTime() + d.config.recovery.lockHours * 3_600_000);
    const out = await d.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('recovery_cancel_tokens as t').innerJoin('recovery_workflows as w', 'w.id', 't.workflow_id')
        .select(['t.workflow_id', 't.used_at', 'w.ended_at']).where('t.token_hash', '=', d.cancelTokens.hex(token)).forUpdate('t').executeTakeFirst();
      if (!row || (row.ended_at !== null && new Date(row.ended_at).getTime() + AFTER_END_MS <= now.getTime())) return { error: E.RECOVERY_NOT_FOUND() };
      const wf = (await d.store.lock(trx, row.workflow_id))!;
      if (row.used_at !== null) return { error: E.RECOVERY_CANCEL_TOKEN_USED({ state: wf.state }) };
      await trx.updateTable('recovery_cancel_tokens').set({ used_at: now }).where('token_hash', '=', d.cancelTokens.hex(token)).execute();
      const user = wf.user_id === null ? undefined : await d.users.findById(wf.user_id, trx);
      const cancelled = await d.store.transition(trx, wf.id, ACTIVE_STATES, 'cancelled', now);
      if (wf.user_id !== null) await this.lock(trx, wf.user_id, until);
      const audit = auditContext(ctx);
      await d.host.record(wf, user, 'RECOVERY_REPORTED_NOT_ME', 'SUCCESS', audit, { state: wf.state, cancelled, recovery_locked_until: until.toISOString() }, trx);
      if (cancelled) await d.host.record(wf, user, 'RECOVERY_CANCELLED', 'SUCCESS', audit, { by: 'owner_notice' }, trx);
      return { wf, user, cancelled };
    });
    if ('error' in out) throw out.error;
    d.log.warn({ user_id: out.user?.uuid ?? null, workflow_id: out.wf.id, lost: out.wf.kind, cancelled: out.cancelled }, 'account recovery reported as not the owner\'s: recovery locked for the account');
    if (out.user && out.cancelled) await d.host.notify(out.user, 'cancelled', out.wf);
    const view = await d.host.viewOf((await d.host.reload(out.wf))!);
    return { ...view, reported: true, recovery_locked_until: until.toISOString() };
  }
}
