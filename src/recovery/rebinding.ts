/**
 * The access-policy side of a recovered device (`POST /api/v1/auth/reset/access-policy`). Once a
 * `device` workflow has completed its cooling-off (the account's bound devices revoked, every
 * session ended), the person asks, within 7 days, for the binding of their new device on a
 * channel: a `pending` binding that an administrator approves under the channel's access policy
 * (the device-binding approval that exists: `/api/v1/admin/device-bindings`), never the person
 * alone. The call answers the binding's state, so the app can ask again until it is approved.
 * Audited as RECOVERY_ACCESS_POLICY_REQUESTED.
 */
import { auditContext } from '../audit/service.js';
import type { DeviceBindings } from '../access/devices.js';
import type { Channel } from '../access/policy.js';
import type { MfaContext } from '../mfa/challenge.js';
import type { Clock } from '../platform/clock.js';
import { RecoveryErrors as E } from './errors.js';
import type { UserRow } from '../users/store.js';
import type { StepHost } from './steps.js';
import type { WorkflowRow } from './store.js';
import type { RecoveryView } from './view.js';

/** How long after a device recovery completed its new device may be asked for. */
const WINDOW_MS = 7 * 86_400_000;
const LABEL = 'New device (account recovery)';

export type RebindAnswer = RecoveryView & { binding: { id: string; status: 'pending' | 'approved' | 'revoked'; channel: string } | null };

export interface RebindingDeps {
  clock: Clock;
  deviceBindings: DeviceBindings;
  host: StepHost & { userOf(wf: WorkflowRow): Promise<UserRow | undefined> };
}

export class DeviceRebinding {
  constructor(private readonly deps: RebindingDeps) {}

  /** Asks for the new device's binding on `channel` (or answers the state of the one asked for). */
  async request(wf: WorkflowRow, channel: Channel, fingerprint: string, ctx: MfaContext): Promise<RebindAnswer> {
    const d = this.deps;
    if (wf.kind !== 'device') throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'not_a_device_recovery' });
    if (wf.state === 'cancelled' || wf.state === 'expired' || wf.state === 'rejected') throw E.RECOVERY_STALE({ state: wf.state });
    if (wf.state !== 'completed') throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'cooling_off_not_over' });
    const user = await d.host.userOf(wf);
    if (!user || !user.is_active || user.deleted_at !== null || (wf.completed_at?.getTime() ?? 0) + WINDOW_MS <= d.clock.now()) {
      throw E.RECOVERY_STALE({ state: wf.state });
    }
    const audit = auditContext(ctx);
    const before = await d.deviceBindings.bindingOf(user.id, fingerprint);
    if (!before) await d.deviceBindings.request(user, fingerprint, channel, LABEL, audit);
    const binding = before ?? (await d.deviceBindings.bindingOf(user.id, fingerprint)) ?? null;
    await d.host.record(wf, user, 'RECOVERY_ACCESS_POLICY_REQUESTED', 'SUCCESS', audit, {
      channel, requested: !before, binding_id: binding?.id ?? null, binding_status: binding?.status ?? 'not_requested',
    });
    return { ...(await d.host.viewOf(wf)), binding };
  }
}
