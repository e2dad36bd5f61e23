/**
 * The pipeline's access-policy step (`AccessPolicyCheck`): every enabled policy, compiled once
 * per node and grouped by channel, so a check is a few table lookups and no database work.
 * A change made on any node reaches every node through the event bus (NOTIFY) at once, and a
 * periodic reload (`access policy sync`, every 30 s) covers a lost notification.
 */
import type { Logger } from 'pino';
import { auditContext, type AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { AccessPolicyCheck, ClientContext } from '../signin/pipeline.js';
import type { Grants, UserRow } from '../users/store.js';
import { AccessErrors } from './errors.js';
import { brokenRule, compileRules, refuseAll, type AccessRequest, type Channel, type CompiledPolicy, type PolicyRule } from './policy.js';
import type { PolicyStore } from './store.js';

export class AccessPolicyEngine implements AccessPolicyCheck {
  private byChannel = new Map<string, CompiledPolicy[]>();
  private reloading: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: { store: PolicyStore; clock: Clock; audit: AuditLog; bus: EventBus; log: Logger }) {
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
            compiled = { id: row.id, channel: row.channel, role: row.role, ...compileRules(row.rules) };
          } catch (err) {
            this.deps.log.error({ err, policy_id: row.id }, `Access policy ${row.id} ("${row.name}") does not compile: it refuses every sign-in it covers until fixed`);
            compiled = refuseAll(row.id, row.channel, row.role);
          }
          next.set(row.channel, [...(next.get(row.channel) ?? []), compiled]);
        }
        this.byChannel = next;
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

  /** The first rule broken by a request on `channel` by a holder of `roles`, with its policy, or null. */
  private evaluate(channel: Channel | string, roles: readonly string[], request: AccessRequest): { rule: PolicyRule; policyId: number } | null {
    for (const p of this.byChannel.get(channel) ?? []) {
      if (p.role !== null && !roles.includes(p.role)) continue;
      const rule = brokenRule(p, request);
      if (rule) return { rule, policyId: p.id };
    }
    return null;
  }

  async check(user: UserRow, grants: Grants, ctx: ClientContext): Promise<void> {
    const broken = this.evaluate(ctx.channel, grants.roles, { ip: ctx.ip, now: this.deps.clock.now() });
    if (!broken) return;
    await this.deps.audit.record({
      ...auditContext(ctx), eventType: 'POLICY_VIOLATION', status: 'FAILURE', userId: user.uuid, username: user.username,
      details: { rule: broken.rule, policy_id: broken.policyId },
    });
    // Only the rule: which policy, which blocks or hours would help an attacker more than the user.
    throw AccessErrors.POLICY_RESTRICTED({ rule: broken.rule });
  }
}
