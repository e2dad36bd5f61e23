/**
 * The risk response policy in force: the administrators' saved one (`risk_policy`, a singleton),
 * else the operator's defaults (RISK_STEP_UP_SCORE, RISK_REFUSE_SCORE, RISK_ADDRESS_BLOCK_MINUTES).
 * Each node keeps what it read until a change is announced on the event bus, so a sign-in reads no
 * table for it.
 */
import type { RiskResponsesConfig } from '../../platform/config-risk.js';
import type { Clock } from '../../platform/clock.js';
import { AnnouncedCache } from '../../platform/db/announced-cache.js';
import type { EventBus } from '../../platform/db/bus.js';
import type { Db } from '../../platform/db/database.js';
import { ADVISORY_LOCKS } from '../../platform/db/locks.js';
import { sql } from 'kysely';
import { defaultPolicy, type RiskPolicy } from './policy.js';

export type PolicySource = 'database' | 'environment';

export interface PolicyInForce {
  policy: RiskPolicy;
  source: PolicySource;
  updated_at: Date | null;
  updated_by: string | null;
}

export class RiskPolicyStore {
  private readonly cache: AnnouncedCache<PolicyInForce>;

  constructor(private readonly deps: { db: Db; clock: Clock; bus: EventBus; defaults: RiskResponsesConfig }) {
    this.cache = new AnnouncedCache(deps.bus, 'risk-policy.changed', () => this.load());
  }

  current(): Promise<PolicyInForce> {
    return this.cache.get();
  }

  private async load(): Promise<PolicyInForce> {
    const row = await this.deps.db.selectFrom('risk_policy').selectAll().where('singleton_key', '=', 'SINGLETON').executeTakeFirst();
    if (!row) return { policy: defaultPolicy(this.deps.defaults), source: 'environment', updated_at: null, updated_by: null };
    const policy = (typeof row.policy === 'string' ? JSON.parse(row.policy) : row.policy) as RiskPolicy;
    return { policy, source: 'database', updated_at: new Date(row.updated_at), updated_by: row.updated_by };
  }

  /**
   * The policy in force as `trx` sees it, after taking the policy's lock until `trx` ends: of two
   * administrators saving at once, the second waits and sees the first's policy as its "before".
   */
  async lockCurrent(trx: Db): Promise<RiskPolicy> {
    await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.riskPolicy})`.execute(trx);
    const row = await trx.selectFrom('risk_policy').select('policy').where('singleton_key', '=', 'SINGLETON').executeTakeFirst();
    return row ? ((typeof row.policy === 'string' ? JSON.parse(row.policy) : row.policy) as RiskPolicy) : defaultPolicy(this.deps.defaults);
  }

  async save(trx: Db, policy: RiskPolicy, actor: string | null): Promise<void> {
    const values = { policy: JSON.stringify(policy), updated_at: new Date(this.deps.clock.now()), updated_by: actor };
    await trx.insertInto('risk_policy').values({ singleton_key: 'SINGLETON', ...values })
      .onConflict((oc) => oc.column('singleton_key').doUpdateSet(values)).execute();
  }

  /** Back to the operator's defaults. True when a saved policy was removed. */
  async clear(trx: Db): Promise<boolean> {
    return (await trx.deleteFrom('risk_policy').where('singleton_key', '=', 'SINGLETON').executeTakeFirst()).numDeletedRows > 0n;
  }

  /** Tells every node (this one too) to read the policy again. */
  async announce(): Promise<void> {
    await this.deps.bus.publish({ type: 'risk-policy.changed' });
  }
}
