/**
 * A bounded cache that keeps what is used: two generations of at most `size` entries each. A
 * hit in the old generation moves the entry to the young one; when the young one is full it
 * becomes the old one and the previous old one is dropped whole. That is close to LRU for a
 * fraction of its bookkeeping (no reordering on every hit), and memory stays under 2 x size.
 */
export class TwoGenerationCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly size: number) {}

  get(key: K): V | undefined {
    const hit = this.young.get(key);
    if (hit !== undefined) return hit;
    const aged = this.old.get(key);
    if (aged !== undefined) this.set(key, aged);
    return aged;
  }

  set(key: K, value: V): void {
    if (this.size <= 0) return;
    if (this.young.size >= this.size) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
  }
}
