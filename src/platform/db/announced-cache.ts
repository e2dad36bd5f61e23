/**
 * A value read from the database and kept on this node until a change is announced on the event
 * bus (by any node) or the bus reconnects (a notice may have been missed): the configuration
 * singletons (LDAP, SAML). A read that started before a change is not kept after it.
 */
import type { BusEvent, EventBus } from './bus.js';

export class AnnouncedCache<T> {
  private held: { value: T } | undefined;
  /** Bumped on every change, so a read that started before it is not kept after it. */
  private generation = 0;

  constructor(bus: EventBus, changed: BusEvent['type'], private readonly load: () => Promise<T>) {
    bus.subscribe((e) => {
      if (e.type === changed) this.forget();
    });
    bus.onReconnect(() => this.forget());
  }

  private forget(): void {
    this.generation++;
    this.held = undefined;
  }

  async get(): Promise<T> {
    if (this.held) return this.held.value;
    const generation = this.generation;
    const value = await this.load();
    if (generation === this.generation) this.held = { value };
    return value;
  }
}
