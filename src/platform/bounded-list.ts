/** The newest `size` items, oldest first: what a development outbox keeps, bounded for a long session. */
export class BoundedList<T> {
  private readonly kept: T[] = [];

  constructor(readonly size: number) {}

  get items(): readonly T[] {
    return this.kept;
  }

  push(item: T): void {
    this.kept.push(item);
    if (this.kept.length > this.size) this.kept.splice(0, this.kept.length - this.size);
  }
}
