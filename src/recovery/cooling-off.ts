/**
 * The cooling-off of a recovered second factor or device. A verified `mfa` or `device` workflow
 * does not take effect at once: it waits (`waiting`) RECOVERY_COOLING_OFF_HOURS (24 by default)
 * for a customer, RECOVERY_COOLING_OFF_HOURS_STAFF (72) for an account holding any other role,
 * while every contact of the account is told and can stop it. A thief who has the password and
 * a stolen identity must then also outlast the real owner's attention for a day or more.
 *
 * When the time has passed, a one-node job (or any `status` or `verify-identity` call that finds
 * it so) completes it, once (the workflow's row locked, a conditional transition):
 *
 * - `mfa`: every possession factor of the account is removed (authenticator, one-time code
 *   methods, push code device, backup codes); security answers stay (knowledge, not a thing one
 *   loses with a phone). The next sign-in of an account whose role or channel requires a second
 *   factor goes to the forced enrolment (a setup token, 403 MFA_SETUP_INCOMPLETE);
 * - `device`: every approved device binding of the account is revoked; the person then asks for
 *   the new device's binding (`POST /api/v1/auth/reset/access-policy`);
 * - both: every passkey of the account is deleted with the `passkey` factor (audited
 *   PASSKEY_DELETED, reason `mfa_recovery` or `device_recovery`): it may live on the lost device;
 * - both: the push-approval key and factor are removed and its pending requests denied
 *   (`factor_removed`); once that commits, the pages held on them (the long poll of `complete`)
 *   are woken at once, on every node;
 * - both: every session and refresh family of the account ends; audited RECOVERY_COMPLETED, and
 *   every contact is told.
 */
import type { Logger } from 'pino';
import type { DeviceBindings } from '../access/devices.js';
import type { FactorStore } from '../mfa/factors.js';
import { removeAllPasskeys } from '../passkeys/store.js';
import { removePushApprovalFactor } from '../push-approval/store.js';
import { settledNotices } from '../push-approval/waiters.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { SessionService } from '../sessions/service.js';
import type { UserRow, UserStore } from '../users/store.js';
import type { RecoveryStore, WorkflowRow } from './store.js';
import type { StepHost } from './steps.js';

/** How many due workflows one run of the job completes, at most. */
const BATCH = 100;

export interface CoolingOffDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'recovery'>;
  users: UserStore;
  factors: FactorStore;
  sessions: SessionService;
  deviceBindings: DeviceBindings;
  /** Wakes the pages waiting on a push approval the recovery denies. */
  bus: Pick<EventBus, 'publish'>;
  log: Pick<Logger, 'warn'>;
  store: RecoveryStore;
  host: StepHost;
}

export class CoolingOff {
  constructor(private readonly deps: CoolingOffDeps) {}

  /** The cooling-off of `user`'s account: the staff's when it holds any role besides `customer`. */
  async hoursFor(trx: Db, user: UserRow): Promise<{ hours: number; basis: 'customer' | 'staff' }> {
    const { roles } = await this.deps.users.grants(user.id, trx);
    const staff = roles.some((r) => r !== 'customer');
    const cfg = this.deps.config.recovery;
    return staff ? { hours: cfg.coolingOffHoursStaff, basis: 'staff' } : { hours: cfg.coolingOffHours, basis: 'customer' };
  }

  /** Completes every workflow whose cooling-off has ended; how many (a background job). */
  async completeDue(stopping?: AbortSignal): Promise<number> {
    const d = this.deps;
    let done = 0;
    for (;;) {
      const due = await d.store.waitingDue(d.db, new Date(d.clock.now()), BATCH);
      for (const wf of due) if (await this.complete(wf)) done++;
      if (due.length < BATCH || stopping?.aborted) return done;
    }
  }

  /** Completes one workflow whose cooling-off has ended; false when it was not (any more) due. */
  async complete(wf: WorkflowRow): Promise<boolean> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const out = await d.db.transaction().execute(async (trx) => {
      const locked = await d.store.lock(trx, wf.id);
      if (!locked || locked.state !== 'waiting' || locked.waiting_until === null || locked.waiting_until.getTime() > now.getTime()) return undefined;
      const user = locked.user_id === null ? undefined : await d.users.findById(locked.user_id, trx);
      if (!user) {
        await d.store.transition(trx, locked.id, ['waiting'], 'expired', now); // the account is gone
        return undefined;
      }
      const effects: Record<string, unknown> = {};
      if (locked.kind === 'mfa') effects.factors_removed = await d.factors.active(user.id, trx);
      // Passkeys go with either recovery: they live on the lost phone or device.
      const passkeys = await removeAllPasskeys(trx, user.id);
      // So does the push-approval key: it lives on the lost phone.
      const approval = await removePushApprovalFactor(trx, user.id, now);
      if (approval.removed) effects.push_approval_removed = true;
      if (locked.kind === 'mfa') {
        await d.factors.removeAll(trx, user.id, now);
      } else {
        effects.devices_revoked = await d.deviceBindings.revokeAllOf(trx, user.id, now);
      }
      if (passkeys.length > 0) {
        effects.passkeys_removed = passkeys.length;
        await d.host.record(locked, user, 'PASSKEY_DELETED', 'SUCCESS', {}, { reason: `${locked.kind}_recovery`, passkey_ids: passkeys, passkeys_left: 0 }, trx);
      }
      const ended = await d.sessions.endAllForUser(trx, user.id, 'account_recovery');
      await d.store.transition(trx, locked.id, ['waiting'], 'completed', now);
      await d.host.record(locked, user, 'RECOVERY_COMPLETED', 'SUCCESS', {}, { ...effects, sessions_ended: ended.length }, trx);
      return { user, ended, denied: approval.denied };
    });
    if (!out) return false;
    await this.settled(out.denied);
    await d.sessions.announce(out.ended);
    if (wf.kind === 'device') await d.deviceBindings.changed(out.user.id);
    await d.host.notify(out.user, 'completed', wf);
    return true;
  }

  /**
   * Tells every node (this one first) that these push-approval requests left `pending`, so the
   * pages held on them answer now (403 PUSH_APPROVAL_DENIED, `factor_removed`) rather than when
   * their wait ends. After the commit; a lost notice only delays such a page to the end of its wait.
   */
  private async settled(requestIds: readonly string[]): Promise<void> {
    for (const notice of settledNotices(requestIds)) {
      await this.deps.bus.publish(notice).catch((err: unknown) => this.deps.log.warn({ err }, 'push-approval requests denied by a recovery not announced; held pages see it when their wait ends'));
    }
  }
}
