/**
 * Administration of access policies: every change is validated by compiling it (a policy that
 * does not compile is never stored), written with its audit row in one transaction, and then
 * announced on the event bus, so every node's engine reloads; this node's before the answer.
 */
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { CommonErrors } from '../platform/errors.js';
import type { RequestActor } from '../sessions/guard.js';
import { mayUse, type AllowedRoles, type ChannelAccess, type ChannelAccessStore } from './channels.js';
import type { AccessPolicyEngine } from './engine.js';
import { AccessErrors } from './errors.js';
import { compileRules, type Channel } from './policy.js';
import { InvalidRuleError } from './rules/errors.js';
import type { PolicyInput, PolicyRow, PolicyStore } from './store.js';

/** The channels whose sign-in can report a location (the app's: `POST /auth/login/mobile`). */
const LOCATED_CHANNELS: readonly Channel[] = ['mobile', 'agent'];

/** The administrator making a change, as their own session shows them: a change must not shut them out. */
export interface Caller {
  roles: readonly string[];
  channel: string;
}

export class AccessPolicyAdmin {
  constructor(private readonly deps: { db: Db; store: PolicyStore; channels: ChannelAccessStore; engine: AccessPolicyEngine; audit: AuditLog; bus: EventBus; clock: Clock }) {}

  async create(input: PolicyInput, actor: RequestActor, ctx: AuditContext): Promise<PolicyRow> {
    await this.validate(input);
    const d = this.deps;
    const row = await d.db.transaction().execute(async (trx) => {
      const created = await d.store.create(trx, input, new Date(d.clock.now()));
      if (!created) throw AccessErrors.ACCESS_POLICY_EXISTS({ name: input.name });
      await this.audit(trx, 'ACCESS_POLICY_CREATED', created, actor, ctx);
      return created;
    });
    await this.announce();
    return row;
  }

  async update(uuid: string, input: PolicyInput, actor: RequestActor, ctx: AuditContext): Promise<PolicyRow> {
    await this.validate(input);
    const d = this.deps;
    const row = await d.db.transaction().execute(async (trx) => {
      const updated = await d.store.update(trx, uuid, input, new Date(d.clock.now()));
      if (updated === 'name_taken') throw AccessErrors.ACCESS_POLICY_EXISTS({ name: input.name });
      if (!updated) throw AccessErrors.ACCESS_POLICY_NOT_FOUND();
      await this.audit(trx, 'ACCESS_POLICY_UPDATED', updated, actor, ctx);
      return updated;
    });
    await this.announce();
    return row;
  }

  async delete(uuid: string, actor: RequestActor, ctx: AuditContext): Promise<void> {
    const d = this.deps;
    await d.db.transaction().execute(async (trx) => {
      const deleted = await d.store.delete(trx, uuid);
      if (!deleted) throw AccessErrors.ACCESS_POLICY_NOT_FOUND();
      await this.audit(trx, 'ACCESS_POLICY_DELETED', deleted, actor, ctx);
    });
    await this.announce();
  }

  async get(uuid: string): Promise<PolicyRow> {
    const row = await this.deps.store.get(uuid);
    if (!row) throw AccessErrors.ACCESS_POLICY_NOT_FOUND();
    return row;
  }

  /**
   * Sets who may use `channel` (null: anyone), audited with what it replaced. Sessions of users
   * it leaves out are refused from their next request. An administrator cannot shut out the
   * session they make the change from (422): another administrator, or another channel, must.
   */
  async setChannelRoles(channel: Channel, allowedRoles: AllowedRoles, caller: Caller, actor: RequestActor, ctx: AuditContext): Promise<ChannelAccess> {
    const field = (message: string) => CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'allowed_roles', message }] });
    const unknown = [];
    for (const role of allowedRoles ?? []) if (!(await this.deps.store.roleExists(role))) unknown.push(role);
    if (unknown.length > 0) throw field(`no role is named ${unknown.map((r) => JSON.stringify(r)).join(', ')}`);
    if (channel === caller.channel && !mayUse(allowedRoles, caller.roles)) throw field(`would refuse your own ${channel} session; keep one of your roles (${caller.roles.join(', ')}) or make the change from another channel`);
    const d = this.deps;
    const after = await d.db.transaction().execute(async (trx) => {
      const before = await d.channels.lock(trx, channel);
      const row = await d.channels.set(trx, channel, allowedRoles, actor.uuid, new Date(d.clock.now()));
      await d.audit.record({
        ...ctx, eventType: 'CHANNEL_ACCESS_CHANGED', status: 'SUCCESS', userId: actor.uuid, username: actor.username,
        details: { channel, allowed_roles: allowedRoles, before: before.allowedRoles, before_was_default: !before.configured },
      }, trx);
      return row;
    });
    await this.announce();
    return after;
  }

  /** 422 VALIDATION_ERROR naming the field, for rules that do not compile or a role that does not exist. */
  private async validate(input: PolicyInput): Promise<void> {
    try {
      compileRules(input.rules, input.role);
    } catch (err) {
      if (err instanceof InvalidRuleError) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: err.field, message: err.reason }] });
      throw err;
    }
    // Web and USSD sign-ins carry no location, so a geofence there would refuse everyone it covers.
    if (input.rules.geofences !== undefined && !LOCATED_CHANNELS.includes(input.channel)) {
      throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'rules.geofences', message: `the ${input.channel} channel reports no location; geofences apply to ${LOCATED_CHANNELS.join(' and ')}` }] });
    }
    if (input.role !== null && !(await this.deps.store.roleExists(input.role))) {
      throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'role', message: `no role is named ${JSON.stringify(input.role)}` }] });
    }
  }

  private async audit(trx: Db, eventType: 'ACCESS_POLICY_CREATED' | 'ACCESS_POLICY_UPDATED' | 'ACCESS_POLICY_DELETED', row: PolicyRow, actor: RequestActor, ctx: AuditContext): Promise<void> {
    await this.deps.audit.record({
      ...ctx, eventType, status: 'SUCCESS', userId: actor.uuid, username: actor.username,
      details: { policy_id: row.uuid, name: row.name, channel: row.channel, role: row.role, enabled: row.enabled, rules: row.rules },
    }, trx);
  }

  /**
   * Tells every node that the policies changed. The bus delivers to this node at once (its
   * engine starts reloading), so the answer waits for that reload instead of starting another.
   */
  private async announce(): Promise<void> {
    await this.deps.bus.publish({ type: 'access-policies.changed' });
    await this.deps.engine.whenIdle();
  }
}
