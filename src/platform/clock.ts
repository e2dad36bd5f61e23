/**
 * Time source. Every rule that depends on time (token expiry, lockout windows, inactivity,
 * TOTP steps) reads the injected clock, so tests freeze and advance time instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private t: number = Date.UTC(2026, 0, 15, 9, 0, 0)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}

export const seconds = (clock: Clock): number => Math.floor(clock.now() / 1000);
