/**
 * Bank branches ("entities") and the links of users to them. A branch is never deleted (users and
 * the audit trail refer to it): it is deactivated, and a deactivated branch links no new user.
 */
import type { Selectable } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { EntitiesTable } from '../platform/db/schema.js';

export type EntityRow = Selectable<EntitiesTable>;

export class EntityStore {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** The new branch, or 'code_taken' (the transaction stays usable: nothing is raised). */
  async create(trx: Db, code: string, name: string): Promise<EntityRow | 'code_taken'> {
    const now = new Date(this.deps.clock.now());
    const row = await trx.insertInto('entities').values({ code, name, created_at: now, updated_at: now })
      .onConflict((oc) => oc.doNothing()).returningAll().executeTakeFirst();
    return row ?? 'code_taken';
  }

  /** Changes the branch whose public id is `uuid`. */
  async update(trx: Db, uuid: string, change: { name?: string; isActive?: boolean }): Promise<EntityRow | undefined> {
    return trx.updateTable('entities').set({
      ...(change.name === undefined ? {} : { name: change.name }),
      ...(change.isActive === undefined ? {} : { is_active: change.isActive }),
      updated_at: new Date(this.deps.clock.now()),
    }).where('uuid', '=', uuid).returningAll().executeTakeFirst();
  }

  /** The branch whose public id is `uuid`. */
  async byUuid(uuid: string, trx: Db = this.deps.db): Promise<EntityRow | undefined> {
    return trx.selectFrom('entities').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  }

  /** The branch with `code` (any case), active or not. */
  async byCode(code: string, trx: Db = this.deps.db): Promise<EntityRow | undefined> {
    return trx.selectFrom('entities').selectAll().where((eb) => eb(eb.fn('lower', ['code']), '=', code.toLowerCase())).executeTakeFirst();
  }

  async list(opts: { active?: boolean; limit: number; offset: number }): Promise<{ total: number; entities: EntityRow[] }> {
    let q = this.deps.db.selectFrom('entities');
    if (opts.active !== undefined) q = q.where('is_active', '=', opts.active);
    const [{ total }] = await q.select((eb) => eb.fn.countAll<number>().as('total')).execute() as [{ total: number | string }];
    const entities = await q.selectAll().orderBy('code').orderBy('id').limit(opts.limit).offset(opts.offset).execute();
    return { total: Number(total), entities };
  }

  /** Links the user to the branch (once; a second link is a no-op). */
  async link(trx: Db, userId: number, entityId: number): Promise<void> {
    await trx.insertInto('user_entities').values({ user_id: userId, entity_id: entityId, created_at: new Date(this.deps.clock.now()) })
      .onConflict((oc) => oc.columns(['user_id', 'entity_id']).doNothing()).execute();
  }

  /** The branches with these codes (any case), active or not. */
  async byCodes(codes: string[], trx: Db = this.deps.db): Promise<EntityRow[]> {
    if (codes.length === 0) return [];
    return trx.selectFrom('entities').selectAll().where((eb) => eb(eb.fn('lower', ['code']), 'in', codes.map((c) => c.toLowerCase()))).execute();
  }

  /** Makes the user's branches exactly `entityIds`: other links go, new ones are made. */
  async setLinks(trx: Db, userId: number, entityIds: number[]): Promise<void> {
    let gone = trx.deleteFrom('user_entities').where('user_id', '=', userId);
    if (entityIds.length > 0) gone = gone.where('entity_id', 'not in', entityIds);
    await gone.execute();
    for (const id of entityIds) await this.link(trx, userId, id);
  }

  /** The codes of the user's branches. */
  async codesOf(userId: number, trx: Db = this.deps.db): Promise<string[]> {
    const rows = await trx.selectFrom('user_entities').innerJoin('entities', 'entities.id', 'user_entities.entity_id')
      .select('entities.code').where('user_entities.user_id', '=', userId).orderBy('entities.code').execute();
    return rows.map((r) => r.code);
  }
}
