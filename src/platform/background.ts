/**
 * Work a request starts and does not wait for (a notice, a code's delivery), kept so that a
 * module closing, or a test, can wait until all of it has ended, including work that the
 * tracked work itself started. Tracked promises must not reject: catch and log first.
 */
export class BackgroundWork {
  private readonly pending = new Set<Promise<unknown>>();

  track(p: Promise<unknown>): void {
    const kept = p.finally(() => this.pending.delete(kept));
    this.pending.add(kept);
  }

  /** Resolves once everything tracked so far, and anything it tracked meanwhile, has ended. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
