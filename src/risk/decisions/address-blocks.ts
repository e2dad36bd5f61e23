/**
 * Networks blocked for credential stuffing (`block_address`). Every node holds the blocks in force
 * in memory (`AddressBlocks`), so a sign-in reads no table to be refused; the table
 * (`AddressBlockStore`) is what nodes share: a new block is recorded there and announced on the
 * event bus, and a node that starts, or lost the bus, loads them again. Bounded: past
 * `MAX_BLOCKS` networks the one whose block ends first makes room (a flood of networks cannot
 * grow memory).
 */
import type { Db } from '../../platform/db/database.js';

export const MAX_BLOCKS = 10_000;

export class AddressBlocks {
  private readonly until = new Map<string, number>();

  /** Unix ms until which `network` is blocked, or null. */
  blockedUntil(network: string, now: number): number | null {
    const until = this.until.get(network);
    if (until === undefined) return null;
    if (until > now) return until;
    this.until.delete(network);
    return null;
  }

  /** Blocks `network` until `until` (a later block of the same network extends it). True when it was not blocked before. */
  block(network: string, until: number, now: number): boolean {
    const was = this.blockedUntil(network, now);
    if (was === null && this.until.size >= MAX_BLOCKS) this.evict(now);
    this.until.set(network, Math.max(until, was ?? 0));
    return was === null;
  }

  get size(): number {
    return this.until.size;
  }

  private evict(now: number): void {
    let first: [string, number] | null = null;
    for (const [network, until] of this.until) {
      if (until <= now) {
        this.until.delete(network);
        return;
      }
      if (first === null || until < first[1]) first = [network, until];
    }
    if (first) this.until.delete(first[0]);
  }
}

/**
 * The blocks shared by every node (`risk_address_blocks`): a block is recorded once (the node
 * whose insert creates it, or replaces an ended one, is the one that audits it), then announced
 * on the event bus; each node loads the current ones at start and after a lost bus connection.
 */
export class AddressBlockStore {
  constructor(private readonly db: Db) {}

  /** Records `network` blocked until `until`; true when this call started the block (none was in force). */
  async record(network: string, until: number, now: number): Promise<boolean> {
    const at = new Date(now);
    const row = await this.db.insertInto('risk_address_blocks').values({ network_hash: network, blocked_until: new Date(until), created_at: at })
      .onConflict((oc) => oc.column('network_hash').doUpdateSet({ blocked_until: new Date(until), created_at: at }).where('risk_address_blocks.blocked_until', '<=', at))
      .returning('network_hash').executeTakeFirst();
    return row !== undefined;
  }

  /** The blocks in force at `now`. */
  async current(now: number): Promise<Array<{ network: string; until: number }>> {
    const rows = await this.db.selectFrom('risk_address_blocks').select(['network_hash', 'blocked_until']).where('blocked_until', '>', new Date(now)).execute();
    return rows.map((r) => ({ network: r.network_hash, until: new Date(r.blocked_until).getTime() }));
  }

  /** Deletes the blocks that have ended. */
  async purge(now: number): Promise<number> {
    const r = await this.db.deleteFrom('risk_address_blocks').where('blocked_until', '<=', new Date(now)).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
