/**
 * The risk evaluation of sign-ins (issue 29, section 2), as the sign-in pipeline uses it:
 *
 *   prior()        the account's history and the recent failures, one read, started while the
 *                  password is being compared;
 *   assess()       the signals and the score (pure, plus an address lookup of a few µs);
 *   assessFailure() a wrong password: counted against the client's network, then the failure signals;
 *   record()       a successful sign-in joins the profile, in the session's transaction;
 *   announce()     the listeners (alerts, notices) hear of an assessment that raised something;
 *   decide()       what the sign-in does about it (the response policy: src/risk/decisions);
 *   blockedUntil() whether the client's network is blocked for credential stuffing.
 *
 * With RISK_EVALUATION off the pipeline calls none of this: nothing is read, kept or written.
 */
import type { GeoLookup } from '../geo/types.js';
import type { Logger } from 'pino';
import { classifyAddress, GATEWAY_CHANNELS } from '../geo/addresses.js';
import { BackgroundWork } from '../platform/background.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { EventBus } from '../platform/db/bus.js';
import { AddressBlocks, AddressBlockStore } from './decisions/address-blocks.js';
import { ALLOW, decide, type RiskDecision } from './decisions/policy.js';
import type { RiskPolicyStore } from './decisions/store.js';
import { RiskStore, type PriorSignIns, type Visit } from './profile.js';
import { assessment } from './score.js';
import { evaluateSignals, placeOf } from './signals.js';
import type { AssessedOutcome, AssessmentListener, BreachedPasswords, RiskAssessment } from './types.js';

/** The parts of a sign-in's client context the evaluation reads. */
export interface RiskClient {
  ip: string;
  ipHash: string;
  networkHash: string;
  fingerprint: string;
  channel: string;
  /** The User-Agent, for the listeners (a notice names the device); never evaluated. */
  userAgent?: string;
}

export interface RiskServiceDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'risk'>;
  geo: GeoLookup;
  /** Keyed hashes of device fingerprints and of the accounts failing from a network. */
  hasher: Hasher;
  /** The operator's breach corpus; absent, `breached_password` is off. */
  breachedPasswords?: BreachedPasswords;
  /** The response policy in force; absent, every assessment is allowed (`decide` answers `allow`). */
  policy?: RiskPolicyStore;
  /** Where address blocks reach the other nodes; absent, they stay on this node. */
  bus?: EventBus;
  log: Logger;
}

/** A decision, with how long its lock lasts when it locks. */
export type Decided = RiskDecision & { lockMinutes: number; blockedUntil: number | null };

/** Keyed hashes are cut to 128 bits: plenty to tell a user's devices apart, half the bytes. */
const HASH_HEX = 32;


export class RiskService {
  readonly enabled: boolean;
  private readonly store: RiskStore;
  private readonly listeners: AssessmentListener[] = [];

  private readonly background = new BackgroundWork();
  private readonly blocks = new AddressBlocks();
  private readonly blockStore: AddressBlockStore;

  constructor(private readonly deps: RiskServiceDeps) {
    this.enabled = deps.config.risk.enabled;
    this.store = new RiskStore({ db: deps.db, clock: deps.clock, settings: deps.config.risk });
    this.blockStore = new AddressBlockStore(deps.db);
    deps.bus?.subscribe((e) => {
      if (e.type === 'risk-address.blocked') this.blocks.block(e.network, e.until, deps.clock.now());
    });
    deps.bus?.onReconnect(() => void this.loadBlocks().catch((err: unknown) => deps.log.warn({ err }, 'address blocks not reloaded')));
  }

  /** Loads the address blocks in force (at start, and after a lost bus connection). */
  async loadBlocks(): Promise<void> {
    if (!this.enabled) return;
    const now = this.deps.clock.now();
    for (const b of await this.blockStore.current(now)) this.blocks.block(b.network, b.until, now);
  }

  /** Adds a listener (the alerts and responses): see AssessmentListener for when it is called. */
  onAssessed(listener: AssessmentListener): void {
    this.listeners.push(listener);
  }

  /**
   * Starts reading what the evaluation of `user`'s sign-in needs. The promise is marked handled,
   * so a sign-in that ends before awaiting it (a wrong password) leaves no unhandled rejection.
   */
  prior(user: { id: number; uuid: string }, ctx: Pick<RiskClient, 'networkHash' | 'channel' | 'ip'>): Promise<PriorSignIns> {
    const read = this.store.prior(user, this.network(ctx));
    read.catch(() => undefined);
    return read;
  }

  /** The assessment of a sign-in whose credentials proved right. `password`: when one was checked here, for the breach corpus (never kept). */
  assess(prior: PriorSignIns, ctx: RiskClient, password?: string): RiskAssessment {
    const now = this.deps.clock.now();
    const location = this.locate(ctx);
    const breached = password !== undefined && this.deps.breachedPasswords !== undefined ? this.deps.breachedPasswords.isBreached(password) : null;
    const indicators = evaluateSignals({
      now, location, deviceHash: this.deviceHash(ctx.fingerprint), profile: prior.profile,
      failedPasswords: prior.failedPasswords, failedSecondFactors: prior.failedSecondFactors, failingAccounts: prior.failingAccounts,
      breachedPassword: breached,
    }, this.deps.config.risk);
    return assessment(indicators, location);
  }

  /** A wrong secret for `subjectKey` (the lockout's counter key): recorded, then its failure signals. */
  async assessFailure(subjectKey: string, userUuid: string | null, ctx: RiskClient): Promise<RiskAssessment> {
    const counts = await this.store.failure(this.hash(`account:${subjectKey}`), this.network(ctx), userUuid);
    const location = this.locate(ctx);
    const indicators = evaluateSignals({
      now: this.deps.clock.now(), location, deviceHash: null, profile: null,
      failedPasswords: counts.failedPasswords, failedSecondFactors: 0, failingAccounts: counts.failingAccounts, breachedPassword: null,
    }, this.deps.config.risk);
    return assessment(indicators, location);
  }

  /** Adds this successful sign-in to the account's profile, in `trx` (the session's transaction). */
  async record(trx: Db, userId: number, ctx: RiskClient, risk: RiskAssessment): Promise<void> {
    const place = placeOf(risk.location);
    const visit: Visit = {
      at: this.deps.clock.now(), deviceHash: this.deviceHash(ctx.fingerprint), country: place?.country ?? null, asn: place?.asn ?? null,
      latitude: place?.latitude ?? null, longitude: place?.longitude ?? null, accuracyKm: place?.accuracy_km ?? null,
    };
    await this.store.recordSuccess(trx, userId, visit);
  }

  /** Tells every listener of an assessment that raised at least one indicator. */
  /**
   * `announce` after the answer, for a wrong password: what the listeners do (an alert's write)
   * must not make a known account's 401 slower than an unknown one's. `settled()` awaits it.
   */
  announceLater(outcome: AssessedOutcome, risk: RiskAssessment, user: { id: number; uuid: string; username: string } | null, ctx: RiskClient): void {
    this.background.track(this.announce(outcome, risk, user, ctx, null, this.deps.db)
      .catch((err: unknown) => this.deps.log.warn({ err, outcome }, 'risk listeners failed on a failed sign-in')));
  }

  /** Resolves once the listeners of every failed sign-in so far have run. */
  settled(): Promise<void> {
    return this.background.settled();
  }

  async announce(outcome: AssessedOutcome, risk: RiskAssessment, user: { id: number; uuid: string; username: string } | null, ctx: RiskClient, auditId: string | null, db: Db): Promise<void> {
    if (risk.indicators.length === 0 || this.listeners.length === 0) return;
    const event = {
      outcome, assessment: risk, user: user === null ? null : { id: user.id, uuid: user.uuid, username: user.username },
      channel: ctx.channel, ipHash: ctx.ipHash, networkHash: ctx.networkHash, userAgent: ctx.userAgent ?? '', auditId, at: this.deps.clock.now(),
    };
    for (const listener of this.listeners) await listener(event, db);
  }

  /**
   * What the sign-in does about `risk` (the response policy's rules for its channel). A decision
   * that blocks the client's network blocks it on every node (`blockedUntil` of the answer: set
   * only for the call that started the block, which audits it; null when it was in force already,
   * or the network cannot be blocked: internal, a gateway). `failed`: a wrong password, for which
   * only blocks matter.
   */
  async decide(risk: RiskAssessment, ctx: Pick<RiskClient, 'networkHash' | 'channel' | 'ip'>, failed = false): Promise<Decided> {
    if (!this.deps.policy || risk.indicators.length === 0) return { ...ALLOW, lockMinutes: 0, blockedUntil: null };
    const { policy } = await this.deps.policy.current();
    const decision = decide(policy, risk, ctx.channel, failed);
    let blockedUntil: number | null = null;
    const network = decision.blockAddress ? this.network(ctx) : null;
    if (network !== null) {
      const now = this.deps.clock.now();
      const until = now + policy.address_block_minutes * 60_000;
      this.blocks.block(network, until, now);
      if (await this.blockStore.record(network, until, now)) {
        blockedUntil = until;
        await this.deps.bus?.publish({ type: 'risk-address.blocked', network, until });
      }
    }
    return { ...decision, lockMinutes: policy.account_lock_minutes, blockedUntil };
  }

  /** Unix ms until which the client's network is refused every sign-in, or null. No database read. */
  blockedUntil(ctx: Pick<RiskClient, 'networkHash' | 'channel' | 'ip'>): number | null {
    if (!this.enabled || this.blocks.size === 0) return null;
    const network = this.network(ctx);
    return network === null ? null : this.blocks.blockedUntil(network, this.deps.clock.now());
  }

  /** The clean-up job: network failures older than the window, and ended address blocks. */
  async purge(): Promise<number> {
    return (await this.store.purge()) + (await this.blockStore.purge(this.deps.clock.now()));
  }

  /** Where the client is, as far as the evaluation is concerned (null behind a gateway). */
  private locate(ctx: Pick<RiskClient, 'ip' | 'channel'>) {
    return GATEWAY_CHANNELS.has(ctx.channel) ? null : this.deps.geo.lookup(ctx.ip);
  }

  /**
   * The client's network for the stuffing count: null behind a gateway, and for an internal
   * address (a branch's NAT, or every client when TRUST_PROXY is missing and all come from the
   * balancer): many people share it, so many accounts failing from it is not an attack's mark.
   */
  private network(ctx: Pick<RiskClient, 'networkHash' | 'channel' | 'ip'>): string | null {
    return GATEWAY_CHANNELS.has(ctx.channel) || classifyAddress(ctx.ip)?.internal === true ? null : ctx.networkHash;
  }

  private deviceHash(fingerprint: string): string | null {
    return fingerprint === '' ? null : this.hash(`device:${fingerprint}`);
  }

  private hash(value: string): string {
    return this.deps.hasher.hex(value).slice(0, HASH_HEX);
  }
}
