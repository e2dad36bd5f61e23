/**
 * Device binding (issue 10, section 2): the devices an administrator has approved for a user.
 * A channel whose policy says `require_bound_device` accepts only those; a sign-in from another
 * device is refused (403 POLICY_RESTRICTED rule `device`) and leaves a pending request that an
 * administrator approves or revokes (`/api/v1/admin/device-bindings`). First bindings and
 * re-bindings alike are an administrator's decision, never the user's alone: the phone is
 * the agent's proof of presence, and whoever holds a stolen one holds its second factors too.
 *
 * Devices are known by a keyed hash of their fingerprint (`X-Device-Fingerprint` or the
 * sign-in's `device_fingerprint`). Each node caches a user's approved hashes, so a validate is
 * a map lookup; an approval or revocation on any node reaches every node through the event bus.
 */
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { RequestActor } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { lockUserRow } from '../users/store.js';
import { AccessErrors } from './errors.js';
import type { Channel } from './policy.js';

export type BindingStatus = 'pending' | 'approved' | 'revoked';

export interface DeviceBinding {
  /** The public id (the uuid); the table's integer `id` stays internal. */
  id: string;
  user_id: string;
  username: string;
  label: string;
  channel: string;
  status: BindingStatus;
  requested_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
}


/** Pending requests one user may have open: a thief cycling fingerprints cannot flood the queue. */
export const MAX_PENDING_PER_USER = 5;
/** Users whose approved devices a node keeps in memory; past this the oldest are dropped. */
const CACHE_USERS = 50_000;

export interface DeviceBindingDeps {
  db: Db;
  hasher: Hasher;
  bus: EventBus;
  clock: Clock;
  audit: AuditLog;
  sessions: SessionService;
}

export class DeviceBindings {
  private readonly approved = new Map<number, ReadonlySet<string>>();
  /** Bumped by every invalidation, so a load that raced one is not cached. */
  private generation = 0;

  constructor(private readonly deps: DeviceBindingDeps) {
    deps.bus.subscribe((e) => {
      if (e.type === 'device-bindings.changed') this.forget(e.userId);
    });
    deps.bus.onReconnect(() => this.forget());
  }

  private fingerprintHash(fingerprint: string): string {
    return this.deps.hasher.hex(fingerprint);
  }

  /** Whether `fingerprint` is one of the user's approved devices. An empty fingerprint never is. */
  async isApproved(userId: number, fingerprint: string): Promise<boolean> {
    if (fingerprint === '') return false;
    return (await this.approvedHashes(userId)).has(this.fingerprintHash(fingerprint));
  }

  private async approvedHashes(userId: number): Promise<ReadonlySet<string>> {
    const cached = this.approved.get(userId);
    if (cached) return cached;
    const generation = this.generation;
    const rows = await this.deps.db.selectFrom('device_bindings').select('fingerprint_hash')
      .where('user_id', '=', userId).where('status', '=', 'approved').execute();
    const set = new Set(rows.map((r) => r.fingerprint_hash));
    if (generation === this.generation) {
      if (this.approved.size >= CACHE_USERS) this.approved.delete(this.approved.keys().next().value as number);
      this.approved.set(userId, set);
    }
    return set;
  }

  private forget(userId?: number): void {
    this.generation++;
    if (userId === undefined) this.approved.clear();
    else this.approved.delete(userId);
  }

  /**
   * Records that the user tried an unbound device: a pending request, unless the device is
   * known already (pending, approved or revoked: a revoked phone stays revoked until an
   * administrator approves it again) or the user has MAX_PENDING_PER_USER open. Audited when new.
   */
  async request(user: { id: number; uuid: string; username: string }, fingerprint: string, channel: Channel | string, label: string, ctx: AuditContext): Promise<void> {
    if (fingerprint === '') return;
    const d = this.deps;
    await d.db.transaction().execute(async (trx) => {
      // The user's row is the lock: parallel sign-ins from several new devices count one after
      // another, so the cap holds (a count then an insert alone would let a burst past it).
      await lockUserRow(trx, user.id);
      const open = await trx.selectFrom('device_bindings').select((eb) => eb.fn.countAll<string>().as('n'))
        .where('user_id', '=', user.id).where('status', '=', 'pending').executeTakeFirstOrThrow();
      if (Number(open.n) >= MAX_PENDING_PER_USER) return;
      const row = await trx.insertInto('device_bindings')
        .values({ user_id: user.id, fingerprint_hash: this.fingerprintHash(fingerprint), label: label.slice(0, 200), channel, status: 'pending', requested_at: new Date(d.clock.now()) })
        .onConflict((oc) => oc.columns(['user_id', 'fingerprint_hash']).doNothing())
        .returning('uuid').executeTakeFirst();
      if (!row) return;
      await d.audit.record({ ...ctx, eventType: 'DEVICE_BINDING_REQUESTED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { binding_id: row.uuid, label } }, trx);
    });
  }

  async list(filter: { status?: BindingStatus; userUuid?: string; limit: number; offset: number }): Promise<{ bindings: DeviceBinding[]; total: number }> {
    let q = this.deps.db.selectFrom('device_bindings as b').innerJoin('users as u', 'u.id', 'b.user_id');
    if (filter.status) q = q.where('b.status', '=', filter.status);
    if (filter.userUuid) q = q.where('u.uuid', '=', filter.userUuid);
    const [rows, count] = await Promise.all([
      q.select(['b.uuid as id', 'u.uuid as user_id', 'u.username', 'b.label', 'b.channel', 'b.status', 'b.requested_at', 'b.decided_at', 'b.decided_by'])
        .orderBy('b.requested_at', 'desc').orderBy('b.id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { bindings: rows.map((r) => ({ ...r, requested_at: new Date(r.requested_at), decided_at: r.decided_at === null ? null : new Date(r.decided_at) })), total: Number(count.n) };
  }

  /** Approves a pending or revoked binding (re-binding a device is the same decision). `uuid`: its public id. */
  async approve(uuid: string, actor: RequestActor, ctx: AuditContext): Promise<DeviceBinding> {
    return this.decide(uuid, 'approved', actor, ctx);
  }

  /** Revokes a binding (or refuses a pending request) and ends the user's sessions on that device. */
  async revoke(uuid: string, actor: RequestActor, ctx: AuditContext): Promise<DeviceBinding> {
    return this.decide(uuid, 'revoked', actor, ctx);
  }

  /**
   * Account recovery of a lost device (src/recovery): revokes every approved binding of the user
   * inside `trx` (the caller ends the sessions, and calls `changed` once committed); how many.
   */
  async revokeAllOf(trx: Db, userId: number, now: Date): Promise<number> {
    const rows = await trx.updateTable('device_bindings').set({ status: 'revoked', decided_at: now, decided_by: null })
      .where('user_id', '=', userId).where('status', '=', 'approved').returning('id').execute();
    return rows.length;
  }

  /** The binding of one device of a user (its public id, status and channel), if any. */
  async bindingOf(userId: number, fingerprint: string): Promise<{ id: string; status: BindingStatus; channel: string } | undefined> {
    const r = await this.deps.db.selectFrom('device_bindings').select(['uuid', 'status', 'channel'])
      .where('user_id', '=', userId).where('fingerprint_hash', '=', this.fingerprintHash(fingerprint)).executeTakeFirst();
    return r && { id: r.uuid, status: r.status as BindingStatus, channel: r.channel };
  }

  /** Tells every node that a user's bindings changed (their caches drop it). */
  async changed(userId: number): Promise<void> {
    await this.deps.bus.publish({ type: 'device-bindings.changed', userId });
  }

  private async decide(uuid: string, status: 'approved' | 'revoked', actor: RequestActor, ctx: AuditContext): Promise<DeviceBinding> {
    const d = this.deps;
    const { binding, userId, ended } = await d.db.transaction().execute(async (trx) => {
      // Locked: two administrators deciding at once are applied one after the other.
      const row = await trx.selectFrom('device_bindings as b').innerJoin('users as u', 'u.id', 'b.user_id')
        .select(['b.id as binding_id', 'b.uuid', 'b.user_id as internal_id', 'b.fingerprint_hash', 'u.uuid as user_id', 'u.username', 'b.label', 'b.channel', 'b.status', 'b.requested_at'])
        .where('b.uuid', '=', uuid).forUpdate('b').executeTakeFirst();
      if (!row) throw AccessErrors.DEVICE_BINDING_NOT_FOUND();
      if (actor.uuid !== null && actor.uuid === row.user_id) throw AccessErrors.DEVICE_BINDING_SELF_APPROVAL();
      if (row.status === status) throw AccessErrors.DEVICE_BINDING_UNCHANGED({ status });
      const now = new Date(d.clock.now());
      await trx.updateTable('device_bindings').set({ status, decided_at: now, decided_by: actor.uuid }).where('id', '=', row.binding_id).execute();
      let endedIds: string[] = [];
      if (status === 'revoked') {
        const sessions = await trx.selectFrom('sessions').select(['session_id', 'device_fingerprint'])
          .where('user_id', '=', row.internal_id).where('is_active', '=', true).execute();
        endedIds = sessions.filter((s) => s.device_fingerprint !== '' && this.fingerprintHash(s.device_fingerprint) === row.fingerprint_hash).map((s) => s.session_id);
        if (endedIds.length > 0) await d.sessions.endMany(trx, endedIds, 'device_revoked', row.internal_id);
      }
      await d.audit.record({
        ...ctx, eventType: status === 'approved' ? 'DEVICE_BINDING_APPROVED' : 'DEVICE_BINDING_REVOKED', status: 'SUCCESS',
        userId: actor.uuid, username: actor.username,
        details: { binding_id: row.uuid, user_id: row.user_id, username: row.username, label: row.label, previous_status: row.status, sessions_ended: endedIds.length },
      }, trx);
      const binding: DeviceBinding = {
        id: row.uuid, user_id: row.user_id, username: row.username, label: row.label, channel: row.channel, status,
        requested_at: new Date(row.requested_at), decided_at: now, decided_by: actor.uuid,
      };
      return { binding, userId: row.internal_id, ended: endedIds };
    });
    await d.bus.publish({ type: 'device-bindings.changed', userId }); // this node's cache too, at once
    await d.sessions.announce(ended);
    return binding;
  }
}
