/**
 * The mixed load of `npm run soak`. Customer sessions arrive at random (exponential gaps, a mean
 * of `sessionsPerSec`), whatever the service's speed, as customers would. A session: a sign-in
 * (the password; then the authenticator code for a customer with TOTP), `validatesPerSession`
 * validates (what the platform's other services ask for each call the app makes) and
 * `faqPerSession` FAQ searches in random order with a think time between steps, one refresh half
 * way (the rest validate the new access token), and a logout for half of the sessions. Alongside,
 * the administrator sends `pushPerSec` notifications to customers with registered phones. Every
 * route's requests go to the nodes in turn, as a round-robin load balancer would send them, so a
 * session's steps land on both nodes.
 */
import { FAQ_QUERIES } from './faq.js';
import { sleep } from './proc.js';
import type { Recorder, Route } from './soak-record.js';
import { SOAK_PASSWORD, totpStep, type SoakUser } from './soak-seed.js';

export interface LoadShape {
  seconds: number;
  sessionsPerSec: number;
  validatesPerSession: number;
  faqPerSession: number;
  /** Mean pause between a session's steps (each pause 0.5 to 1.5 times it). */
  thinkMs: number;
  /** Sessions running at once at most; an arrival beyond is dropped and counted. */
  maxSessions: number;
  pushPerSec: number;
}

export interface LoadCounts {
  sessions: number;
  /** Arrivals dropped: `maxSessions` were running (the service could not keep up). */
  dropped: number;
  /** Arrivals with no customer free (all busy, or their TOTP step used): skipped. */
  noCustomer: number;
  /** Messages the send answers said were queued. */
  pushQueued: number;
}

/** A deterministic pseudo-random sequence (mulberry32): the same load every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

interface Tokens { access_token: string; refresh_token: string }

export class MixedLoad {
  readonly counts: LoadCounts = { sessions: 0, dropped: 0, noCustomer: 0, pushQueued: 0 };
  private readonly rnd = prng(26);
  private readonly turn = new Map<Route, number>();
  private nextUser = 0;
  private running = 0;
  private stopAt = Infinity;

  constructor(private readonly rec: Recorder, private readonly users: SoakUser[], private readonly shape: LoadShape, private readonly admin: { token: string }, private readonly runId: string) {}

  /** The next node for `route`: round robin per route, so each route's requests split evenly. */
  private node(route: Route): number {
    const n = this.turn.get(route) ?? 0;
    this.turn.set(route, n + 1);
    return n % this.rec.bases.length;
  }

  private think(): Promise<void> {
    return sleep(this.shape.thinkMs * (0.5 + this.rnd()));
  }

  private stopped(): boolean {
    return this.rec.now() >= this.stopAt;
  }

  /** The next free customer in turn whose sign-in can run now (a TOTP customer needs an unused step). */
  private pickCustomer(): SoakUser | undefined {
    const step = totpStep(Date.now());
    for (let k = 0; k < this.users.length; k++) {
      const u = this.users[this.nextUser++ % this.users.length]!;
      if (!u.busy && (!u.authenticator || u.lastStep < step)) return u;
    }
    return undefined;
  }

  /** Password, then the authenticator code when asked for; the tokens, or undefined (counted as errors). */
  private async signIn(u: SoakUser): Promise<Tokens | undefined> {
    const totp = u.authenticator !== undefined;
    const first = await this.rec.call(this.node('sign-in'), 'sign-in', '/api/v1/auth/login', { username: u.username, password: SOAK_PASSWORD }, {
      expected: [totp ? 401 : 200], check: (_s, j) => (totp ? j.error_code === '2FA_REQUIRED' : typeof j.access_token === 'string'),
    });
    if (!first || !totp) return first?.json as Tokens | undefined;
    await this.think();
    const now = Date.now();
    u.lastStep = totpStep(now);
    const token = (first.json.details as { two_factor_token: string }).two_factor_token;
    const second = await this.rec.call(this.node('totp'), 'totp', '/api/v1/2fa/totp/verify-login', { two_factor_token: token, code: u.authenticator!.code(now) }, { check: (_s, j) => typeof j.access_token === 'string' });
    return second?.json as Tokens | undefined;
  }

  /** The session's steps after the sign-in: validates and searches shuffled, a refresh half way. */
  private plan(): Array<'validate' | 'faq search' | 'refresh'> {
    const steps: Array<'validate' | 'faq search'> = [...Array<'validate'>(this.shape.validatesPerSession).fill('validate'), ...Array<'faq search'>(this.shape.faqPerSession).fill('faq search')];
    for (let i = steps.length - 1; i > 0; i--) {
      const j = Math.floor(this.rnd() * (i + 1));
      [steps[i], steps[j]] = [steps[j]!, steps[i]!];
    }
    const half = Math.floor(steps.length / 2);
    return [...steps.slice(0, half), 'refresh', ...steps.slice(half)];
  }

  private async session(u: SoakUser): Promise<void> {
    let tokens = await this.signIn(u);
    if (!tokens) return;
    const logout = this.rnd() < 0.5;
    for (const step of this.plan()) {
      await this.think();
      if (this.stopped()) return;
      if (step === 'faq search') {
        const query = FAQ_QUERIES[Math.floor(this.rnd() * FAQ_QUERIES.length)]!;
        await this.rec.call(this.node(step), step, '/api/v1/faq/search', { query }, { check: (_s, j) => Array.isArray(j.results) });
      } else if (step === 'refresh') {
        const r = await this.rec.call(this.node(step), step, '/api/v1/auth/refresh', { refresh_token: tokens.refresh_token }, { check: (_s, j) => typeof j.refresh_token === 'string' });
        if (!r) return;
        tokens = r.json as unknown as Tokens;
      } else {
        await this.rec.call(this.node(step), step, '/api/v1/auth/validate', {}, { token: tokens.access_token });
      }
    }
    if (logout && !this.stopped()) await this.rec.call(this.node('logout'), 'logout', '/api/v1/auth/logout', {}, { token: tokens.access_token });
  }

  private startSession(inFlight: Set<Promise<void>>): void {
    if (this.running >= this.shape.maxSessions) {
      this.counts.dropped++;
      return;
    }
    const u = this.pickCustomer();
    if (!u) {
      this.counts.noCustomer++;
      return;
    }
    u.busy = true;
    this.running++;
    this.counts.sessions++;
    const p: Promise<void> = this.session(u)
      .catch((err: unknown) => this.rec.fail(0, 'sign-in', `session: ${(err as Error).message}`))
      .finally(() => {
        u.busy = false;
        this.running--;
        inFlight.delete(p);
      });
    inFlight.add(p);
  }

  private async arrivals(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (!this.stopped()) {
      this.startSession(inFlight);
      await sleep((-Math.log(1 - this.rnd()) / this.shape.sessionsPerSec) * 1000);
    }
    await Promise.all(inFlight);
  }

  /** The administrator's sends, at a fixed pace, to the customers with phones in turn. */
  private async pushes(): Promise<void> {
    const targets = this.users.filter((u) => u.devices > 0);
    if (targets.length === 0 || this.shape.pushPerSec <= 0) return;
    const gapMs = 1000 / this.shape.pushPerSec;
    for (let seq = 0; !this.stopped(); seq++) {
      const due = performance.now() + gapMs;
      const u = targets[seq % targets.length]!;
      const body = { user_id: u.uuid, title: 'Money received', body: `Amina Njoroge sent you 2,400.00 KES. Ref TRX-${seq}`, push_data: { kind: 'transfer', soak: this.runId, seq: String(seq) } };
      const r = await this.rec.call(this.node('push send'), 'push send', '/api/v1/notifications/send', body, { token: this.admin.token, expected: [202] });
      if (r) this.counts.pushQueued += r.json.queued as number;
      await sleep(Math.max(0, due - performance.now()));
    }
  }

  /** Runs the load for `shape.seconds`; running sessions stop at their next step. */
  async run(): Promise<LoadCounts> {
    this.stopAt = this.rec.now() + this.shape.seconds;
    await Promise.all([this.arrivals(), this.pushes()]);
    return this.counts;
  }
}
