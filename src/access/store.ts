/** The `access_policies` table. */
import type { Db } from '../platform/db/database.js';
import type { Channel, PolicyRules } from './policy.js';

export interface PolicyRow {
  /** Internal: order and keys. Never in an answer. */
  id: number;
  /** The public id: routes take it, answers and audit entries give it. */
  uuid: string;
  name: string;
  channel: Channel;
  role: string | null;
  enabled: boolean;
  rules: PolicyRules;
  created_at: Date;
  updated_at: Date;
}

export interface PolicyInput {
  name: string;
  channel: Channel;
  role: string | null;
  enabled: boolean;
  rules: PolicyRules;
}

const COLUMNS = ['id', 'uuid', 'name', 'channel', 'role', 'enabled', 'rules', 'created_at', 'updated_at'] as const;

function parse(row: { id: number; uuid: string; name: string; channel: string; role: string | null; enabled: boolean; rules: unknown; created_at: Date | string; updated_at: Date | string }): PolicyRow {
  const rules = (typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules) as PolicyRules;
  return { ...row, channel: row.channel as Channel, rules, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at) };
}

export class PolicyStore {
  constructor(private readonly db: Db) {}

  async list(opts: { enabledOnly?: boolean } = {}): Promise<PolicyRow[]> {
    let q = this.db.selectFrom('access_policies').select(COLUMNS).orderBy('id');
    if (opts.enabledOnly) q = q.where('enabled', '=', true);
    return (await q.execute()).map(parse);
  }

  /** By its public id (the uuid). */
  async get(uuid: string): Promise<PolicyRow | undefined> {
    const row = await this.db.selectFrom('access_policies').select(COLUMNS).where('uuid', '=', uuid).executeTakeFirst();
    return row ? parse(row) : undefined;
  }

  /** The new row, or undefined when the name is taken. */
  async create(trx: Db, p: PolicyInput, now: Date): Promise<PolicyRow | undefined> {
    const row = await trx.insertInto('access_policies')
      .values({ name: p.name, channel: p.channel, role: p.role, enabled: p.enabled, rules: JSON.stringify(p.rules), created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning(COLUMNS).executeTakeFirst();
    return row ? parse(row) : undefined;
  }

  /** The updated row; undefined when there is none; 'name_taken' when another policy has the name. */
  async update(trx: Db, uuid: string, p: PolicyInput, now: Date): Promise<PolicyRow | undefined | 'name_taken'> {
    try {
      const row = await trx.updateTable('access_policies')
        .set({ name: p.name, channel: p.channel, role: p.role, enabled: p.enabled, rules: JSON.stringify(p.rules), updated_at: now })
        .where('uuid', '=', uuid).returning(COLUMNS).executeTakeFirst();
      return row ? parse(row) : undefined;
    } catch (err) {
      // The unique index decides (also between two renames to one name at once).
      if ((err as { code?: unknown }).code === '23505') return 'name_taken';
      throw err;
    }
  }

  async delete(trx: Db, uuid: string): Promise<PolicyRow | undefined> {
    const row = await trx.deleteFrom('access_policies').where('uuid', '=', uuid).returning(COLUMNS).executeTakeFirst();
    return row ? parse(row) : undefined;
  }

  async roleExists(name: string): Promise<boolean> {
    return (await this.db.selectFrom('roles').select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
  }
}
