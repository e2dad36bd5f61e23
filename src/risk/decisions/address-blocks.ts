/**
 * Networks blocked for credential stuffing (`block_address`), on this node. Not a table: a block
 * is re-derived on every node from what all nodes record (the failures per network, read with
 * every evaluated attempt), so another node blocks a stuffing network at its first attempt from
 * it, and a restarted node at the first attempt after the restart. Bounded: past `MAX_BLOCKS`
 * networks the one whose block ends first makes room (a flood of networks cannot grow memory).
 */
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
