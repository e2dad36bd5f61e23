/**
 * The pipeline's access-policy step (`AccessPolicyCheck`) and the bearer guard's
 * (`SessionPolicy`): who may use each channel and every enabled policy, compiled once per node
 * and grouped by channel, so a check is a few table lookups and no database work. A change made
 * on any node reaches every node through the event bus (NOTIFY) at once, and a periodic reload
 * (`access policy sync`, every 30 s) covers a lost notification.
 */
import type { Logger } from 'pino';
import { auditContext, type AuditContext, type AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { AppError } from '../platform/errors.js';
import type { EventBus } from '../platform/db/bus.js';
import type { AttemptLimits } from '../policy/lockout.js';
import type { SessionLimits } from '../sessions/service.js';
import type { SessionCheck } from '../sessions/guard.js';
import type { AccessPolicyCheck, ClientContext, PolicyCheckOptions } from '../signin/pipeline.js';
import type { Grants, UserRow } from '../users/store.js';
import { DEFAULT_CHANNEL_ROLES, mayUse, type AllowedRoles, type ChannelAccessStore } from './channels.js';
import type { DeviceBindings } from './devices.js';
import { AccessErrors } from './errors.js';
import { brokenRule, compileRules, refuseAll, type AccessRequest, type Channel, type CompiledPolicy, type FactorMethod, type PolicyRule } from './policy.js';
import type { PolicyStore } from './store.js';

/** The tightest of the values the policies set (`Math.min` for counts, `Math.max` for lock lengths), or undefined when none does. */
function strictest(values: Array<number | undefined>, pick: (...v: number[]) => number): number | undefined {
  const set = values.filter((v): v is number => v !== undefined);
  return set.length === 0 ? undefined : pick(...set);
}

/** A validate refused again for the same session and rule within this long is not audited again. */
export const REFUSAL_AUDIT_EVERY_MS = 60_000;
/** Sessions whose last audited refusal a node remembers; past this it forgets them all. */
const REMEMBERED_REFUSALS = 10_000;

/** A refusal: the rule broken, and the policy that has it (none for who may use the channel). */
export interface Broken {
  rule: PolicyRule;
  /** The policy's uuid. */
  policyId: string | null;
}

export class AccessPolicyEngine implements AccessPolicyCheck {
  private byChannel = new Map<string, CompiledPolicy[]>();
  /** Who may use each channel (src/access/channels.ts); a channel not listed: anyone. */
  private channelRoles: ReadonlyMap<string, AllowedRoles> = new Map(Object.entries(DEFAULT_CHANNEL_ROLES));
  /** `${sessionId}:${rule}` -> when a validate refusal of it was last audited on this node. */
  private readonly refusalsAudited = new Map<string, number>();
  private reloading: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: { store: PolicyStore; channels: ChannelAccessStore; devices: DeviceBindings; clock: Clock; audit: AuditLog; bus: EventBus; log: Logger }) {
    deps.bus.subscribe((e) => {
      if (e.type === 'access-policies.changed') this.reloadInBackground();
    });
    deps.bus.onReconnect(() => this.reloadInBackground());
  }

  /**
   * Reads and compiles every enabled policy. Reloads never overlap: one asked for while another
   * runs runs once after it, so the last change is never missed. A stored policy that no longer
   * compiles refuses everyone it covers (fail closed) and is logged.
   */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        const next = new Map<string, CompiledPolicy[]>();
        for (const row of await this.deps.store.list({ enabledOnly: true })) {
          let compiled: CompiledPolicy;
          try {
            compiled = { id: row.uuid, channel: row.channel, role: row.role, ...compileRules(row.rules, row.role) };
          } catch (err) {
            this.deps.log.error({ err, policy_id: row.uuid }, `Access policy ${row.uuid} ("${row.name}") does not compile: it refuses every sign-in it covers until fixed`);
            compiled = refuseAll(row.uuid, row.channel, row.role);
          }
          next.set(row.channel, [...(next.get(row.channel) ?? []), compiled]);
        }
        const channelRoles = new Map((await this.deps.channels.list()).map((c) => [c.channel, c.allowedRoles] as const));
        this.byChannel = next;
        this.channelRoles = channelRoles;
      } while (this.again);
    })().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** A reload nobody awaits: a failure is logged (the previous policies stay) and the 30 s sync retries. */
  private reloadInBackground(): void {
    this.reload().catch((err: unknown) => this.deps.log.error({ err }, 'Access policy reload failed; keeping the previous policies until the next sync'));
  }

  /** Resolves once no reload is running (tests: a change announced by NOTIFY has been applied). */
  whenIdle(): Promise<void> {
    return this.reloading ?? Promise.resolve();
  }

  /** The enabled policies of `channel` that cover a holder of `roles`. */
  private applicable(channel: Channel | string, roles: readonly string[]): CompiledPolicy[] {
    const all = this.byChannel.get(channel);
    if (!all) return [];
    return all.filter((p) => p.role === null || roles.includes(p.role));
  }

  /** Whether what `channel` allows depends on the user's roles: who may use it, or a policy narrowed to a role. */
  rolesMatter(channel: string): boolean {
    return (this.channelRoles.get(channel) ?? null) !== null || (this.byChannel.get(channel) ?? []).some((p) => p.role !== null);
  }

  /**
   * The first rule broken, with its policy, or null: who may use the channel first, then each
   * policy. The device is looked up (a cached set per user) only when a policy covering the
   * request requires a bound one.
   */
  private async evaluate(channel: string, roles: readonly string[], userId: number, fingerprint: string, request: Omit<AccessRequest, 'deviceBound'>): Promise<Broken | null> {
    return this.firstBroken(channel, roles, request, () => this.deps.devices.isApproved(userId, fingerprint));
  }

  /** `evaluate`'s rules, with the device's standing asked of `deviceBound` (only when a policy requires a bound one). */
  private async firstBroken(channel: string, roles: readonly string[], request: Omit<AccessRequest, 'deviceBound'>, isBound: () => Promise<boolean>): Promise<Broken | null> {
    if (!mayUse(this.channelRoles.get(channel) ?? null, roles)) return { rule: 'channel', policyId: null };
    const policies = this.applicable(channel, roles);
    if (policies.length === 0) return null;
    const deviceBound = policies.some((p) => p.requireBoundDevice) ? await isBound() : true;
    for (const p of policies) {
      const rule = brokenRule(p, { ...request, deviceBound });
      if (rule) return { rule, policyId: p.id };
    }
    return null;
  }

  /**
   * What the sign-in check would answer for a holder of `roles` on `channel` (the
   * administrators' tester, src/access/evaluate-routes.ts): the same rules in the same order,
   * with the device's standing given instead of looked up; nothing is audited or recorded.
   */
  simulate(channel: string, roles: readonly string[], request: AccessRequest): Promise<Broken | null> {
    return this.firstBroken(channel, roles, request, () => Promise.resolve(request.deviceBound));
  }

  /** Whether a policy of `channel` covering a holder of `roles` requires a second factor (LoginFactor). */
  requiresSecondFactor(channel: string, roles: readonly string[]): boolean {
    return this.applicable(channel, roles).some((p) => p.requireSecondFactor);
  }

  /**
   * The second factors that count on `channel` for a holder of `roles`: those every policy that
   * names some allows (policies only narrow), or null when none names any.
   */
  factorMethods(channel: string, roles: readonly string[]): readonly FactorMethod[] | null {
    let allowed: readonly FactorMethod[] | null = null;
    for (const p of this.applicable(channel, roles)) {
      if (p.factorMethods) allowed = allowed === null ? p.factorMethods : allowed.filter((m) => p.factorMethods!.includes(m));
    }
    return allowed;
  }

  /**
   * A sign-in that holds no factor this channel accepts: audited as POLICY_VIOLATION (rule
   * `factor`), answered 403 POLICY_RESTRICTED. The user enrols an accepted factor where they
   * can pass the one they hold (another channel), never with the password alone here.
   */
  async refuseFactor(user: UserRow, roles: readonly string[], ctx: ClientContext): Promise<AppError> {
    const policyId = this.applicable(ctx.channel, roles).find((p) => p.factorMethods)?.id ?? null;
    await this.deps.audit.record({ ...auditContext(ctx), userId: user.uuid, username: user.username, eventType: 'POLICY_VIOLATION', status: 'FAILURE', details: { rule: 'factor', policy_id: policyId } });
    return AccessErrors.POLICY_RESTRICTED({ rule: 'factor' });
  }

  /**
   * The failed-attempt limit and lock length of sign-ins on `channel`: the strictest of the
   * channel-wide policies (a role policy cannot set them); absent: the server's.
   */
  attemptLimits(channel: string): AttemptLimits {
    const policies = this.applicable(channel, []);
    return {
      maxAttempts: strictest(policies.map((p) => p.limits.maxFailedAttempts), Math.min),
      lockoutMinutes: strictest(policies.map((p) => p.limits.lockoutMinutes), Math.max),
    };
  }

  /** A new session's inactivity timeout and per-channel session limit: the strictest of the policies covering the user. */
  sessionLimits(channel: string, roles: readonly string[]): SessionLimits {
    const policies = this.applicable(channel, roles);
    return {
      inactivitySec: strictest(policies.map((p) => p.limits.inactivitySec), Math.min),
      maxConcurrent: strictest(policies.map((p) => p.limits.maxConcurrentSessions), Math.min),
    };
  }

  /**
   * The sign-in's check. An unbound device leaves a pending binding for an administrator. With
   * `secondStep` (the request that finishes a second factor) geofences are not looked at again:
   * that request carries no location, and the password step checked it minutes before.
   */
  async check(user: UserRow, grants: Grants, ctx: ClientContext, opts: PolicyCheckOptions = {}): Promise<void> {
    const location = opts.secondStep ? 'not_checked' as const : ctx.location;
    const broken = await this.evaluate(ctx.channel, grants.roles, user.id, ctx.fingerprint, { ip: ctx.ip, now: this.deps.clock.now(), location });
    if (!broken) return;
    if (broken.rule === 'device') await this.deps.devices.request(user, ctx.fingerprint, ctx.channel, ctx.userAgent, auditContext(ctx));
    await this.refuse(broken, { ...auditContext(ctx), userId: user.uuid, username: user.username });
  }

  /**
   * The check of every request of a live session (the bearer guard, refresh, validate): who may
   * use its channel, its channel's IP, schedule and device rules, and its geofences when the
   * request reports a location (`POST /auth/agent/validate`); a request without one is not
   * held to geofences. Nothing is read from the database unless a policy requires a bound
   * device (then a cached set).
   */
  async checkSession(s: SessionCheck): Promise<void> {
    const now = this.deps.clock.now();
    const broken = await this.evaluate(s.channel, s.roles, s.userId, s.fingerprint, { ip: s.ip, now, location: s.location ?? 'not_checked' });
    if (!broken) return;
    // A session refused after hours would otherwise write an audit row for every request the
    // services behind it validate: once a minute per session and rule is the record.
    const key = `${s.sessionId}:${broken.rule}`;
    const last = this.refusalsAudited.get(key);
    const audit = last === undefined || now - last >= REFUSAL_AUDIT_EVERY_MS;
    if (audit) {
      if (this.refusalsAudited.size >= REMEMBERED_REFUSALS) this.refusalsAudited.clear();
      this.refusalsAudited.set(key, now);
    }
    await this.refuse(broken, { ip: s.ip, deviceFingerprint: s.fingerprint || null, userAgent: s.userAgent, channel: s.channel, userId: s.userUuid, username: null }, audit);
  }

  private async refuse(broken: Broken, who: AuditContext & { userId: string; username: string | null }, audit = true): Promise<never> {
    if (audit) await this.deps.audit.record({ ...who, eventType: 'POLICY_VIOLATION', status: 'FAILURE', details: { rule: broken.rule, policy_id: broken.policyId } });
    // Only the rule: which policy, which blocks or hours would help an attacker more than the user.
    throw AccessErrors.POLICY_RESTRICTED({ rule: broken.rule });
  }
}
