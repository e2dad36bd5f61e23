/**
 * Self-service account recovery: a customer who lost their password or PIN proves who they are
 * with proofs the bank's matrix accepts (src/recovery/matrix.ts), and gets the reset token of
 * `POST /api/v1/auth/reset/password` or `/reset/pin`; a workflow for lost second factors or a
 * lost device, once proved (an operator's branch approval counts as a proof: approvals.ts), waits
 * out its cooling-off (cooling-off.ts) and completes; the owner can stop any workflow from its
 * notices and lock recovery for a while (cancel.ts); a recovered device is then bound again by an
 * administrator (rebinding.ts). An operator may start a workflow for a customer at a desk
 * (`initiated_by`), and may then not approve it.
 *
 * Nobody learns from these routes whether an account exists:
 *
 * - `initiate` always answers 202 with the same body, for an unknown, disabled or real account;
 *   a workflow without a usable account is a *decoy*: it behaves as a real one in every route
 *   (sends "codes", asks questions, counts attempts, locks, expires) and never passes a proof;
 * - one active workflow per account and lost thing (a unique index over a keyed hash of the
 *   account, decoys included); a second `initiate` meanwhile gets a decoy that answers exactly
 *   like the first, so it buys no new codes and never hands out the first workflow's handle;
 * - what the answers show of contacts are masks, the same for a decoy (masks.ts);
 * - while recovery is locked for an account (its owner reported a workflow as not theirs), every
 *   initiate gets a decoy too (cancel.ts);
 * - a decoy shows a branch `reference` as a real workflow does, but no operator ever finds it.
 *
 * The `recovery_id` (`rcv_` and 32 random bytes) is stored only as a keyed hash. Holding it is
 * never enough: only proofs move a workflow. A proof has 3 attempts per workflow, reserved
 * before anything is compared; knowledge proofs are checked only once a possession proof of the
 * same alternative was given (no guessing oracle for strangers). Every step is audited without
 * codes, answers or the handle.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { auditContext, type AuditContext, type AuditEvent, type AuditLog } from '../audit/service.js';
import type { CredentialService } from '../credentials/service.js';
import type { MfaContext } from '../mfa/challenge.js';
import { PIN_CHANGE_PURPOSE, type PinService } from '../pins/service.js';
import type { BackgroundWork } from '../platform/background.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { purgeInBatches } from '../platform/db/purge.js';
import { AppError } from '../platform/errors.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { SessionService } from '../sessions/service.js';
import { PASSWORD_CHANGE_PURPOSE } from '../signin/pipeline.js';
import type { TokenService } from '../tokens/service.js';
import type { UserRow, UserStore } from '../users/store.js';
import { RecoveryErrors as E } from './errors.js';
import { emailMask, identifierKind, maskIdentifier, ON_FILE, phoneMask } from './masks.js';
import { proofsOf, type Alternative, type Proof, type RecoveryKind } from './matrix.js';
import type { ProofChecks, Subject } from './proofs.js';
import { assertProofFields, collectable, ProofSteps, type ProofInput, type StepHost, type VerifyAnswer } from './steps.js';
import { ACTIVE_STATES, FINISHED_STATES, RecoveryStore, type WorkflowRow } from './store.js';
import { present, type RecoveryView } from './view.js';
import { BranchApprovals } from './approvals.js';
import { newReference } from './reference.js';
import { CoolingOff } from './cooling-off.js';
import { CancelLinks, type CancelAnswer } from './cancel.js';
import { DeviceRebinding, type RebindAnswer } from './rebinding.js';
import { OwnRecoveryList } from './own.js';
import type { Channel } from '../access/policy.js';
import type { RecoveryNotifier } from './notify.js';
import type { RecoveryNotice } from './notices.js';
import type { FactorStore } from '../mfa/factors.js';
import type { DeviceBindings } from '../access/devices.js';

/** No account has this id (identities start at 1): lookups for an identifier that names none run against it. */
const NO_USER = 0;

/**
 * The roles whose holders may recover self-service. An account holding any other role (staff,
 * agent, administrator) recovering a password or PIN gets a workflow that answers like any other
 * and never completes (an administrator resets it); its lost factors or device are recovered only
 * through an alternative with a branch's approval.
 */
export const SELF_SERVICE_ROLES: readonly string[] = ['customer'];

/** A rejection handler: false for an error of `type` (a refusal), the error again for anything else. */
const refusedBy = (type: typeof AppError) => (err: unknown): false => {
  if (err instanceof type) return false;
  throw err;
};

/** The route a completed workflow's reset token is for. */
export const RESET_ROUTES = { password: '/api/v1/auth/reset/password', pin: '/api/v1/auth/reset/pin' } as const;

export interface RecoveryDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'recovery' | 'mfa' | 'tokens' | 'retention'>;
  log: Logger;
  /** Keyed hash of a `recovery_id` (the handle is never stored). */
  handles: Hasher;
  /** Keyed hashes of accounts and unknown identifiers (the one-active index, stand-in masks). */
  accounts: Hasher;
  users: UserStore;
  credentials: CredentialService;
  pins: PinService;
  tokens: TokenService;
  sessions: SessionService;
  audit: AuditLog;
  attempts: LoginAttempts;
  proofs: ProofChecks;
  notifier: RecoveryNotifier;
  /** Deliveries and notices under way, the notifier's too (awaited by `settled`, and before the module closes). */
  background: BackgroundWork;
  /** Keyed hash of a cancel token ("this was not me"). */
  cancelTokens: Hasher;
  factors: FactorStore;
  deviceBindings: DeviceBindings;
  /** Wakes the pages waiting on a push approval a completed recovery denies (cooling-off.ts). */
  bus: Pick<EventBus, 'publish'>;
}

export type InitiateAnswer = { recovery_id: string } & RecoveryView;

/** Whose a workflow is in the audit trail: the user, or for a decoy nobody (the identifier masked). */
interface Who {
  userId: string | null;
  username: string;
}

/** A real workflow just started for an account (never a decoy), as `onStarted` listeners hear of it. */
export interface StartedRecovery {
  userId: number;
  kind: RecoveryKind;
  startedAt: number;
  expiresAt: number;
  /** An operator started it at a branch. */
  atBranch: boolean;
}

export class RecoveryService implements StepHost {
  private readonly store = new RecoveryStore();
  private readonly startedListeners: Array<(started: StartedRecovery) => void> = [];
  private readonly steps: ProofSteps;
  /** A branch's approval or rejection, by an operator (approvals.ts). */
  readonly approvals: BranchApprovals;
  private readonly cooling: CoolingOff;
  private readonly links: CancelLinks;
  private readonly rebinding: DeviceRebinding;
  /** A signed-in person's own recoveries, and their cancel (own.ts). */
  readonly own: OwnRecoveryList;

  constructor(private readonly deps: RecoveryDeps) {
    this.steps = new ProofSteps({ ...deps, store: this.store, host: this });
    this.approvals = new BranchApprovals({ ...deps, store: this.store, steps: this.steps, host: this });
    this.cooling = new CoolingOff({ ...deps, store: this.store, host: this });
    this.links = new CancelLinks({ ...deps, store: this.store, host: this });
    this.rebinding = new DeviceRebinding({ ...deps, host: this });
    this.own = new OwnRecoveryList({ ...deps, store: this.store, links: this.links, host: this });
  }

  /**
   * The alternatives a workflow is judged by: the ones of its kind when it started (a change of
   * RECOVERY_PROOFS_* and a restart judge only later workflows), else, for a workflow started
   * before they were kept, the configuration's.
   */
  alternatives(wf: Pick<WorkflowRow, 'kind' | 'alternatives'>): readonly Alternative[] {
    return wf.alternatives ?? this.deps.config.recovery.matrix[wf.kind];
  }

  /**
   * Starts a workflow for whatever `identifier` names (username, email or E.164 phone number):
   * a real one for a usable account that has no active workflow of this kind, else a decoy.
   * The answer is the same either way.
   */
  async initiate(identifierRaw: string, kind: RecoveryKind, ctx: MfaContext, operator?: UserRow): Promise<InitiateAnswer> {
    const d = this.deps;
    const identifier = identifierRaw.normalize('NFKC').trim();
    const found = identifierKind(identifier) === 'phone' ? await d.users.findByPhone(identifier) : await d.users.findByLogin(identifier);
    const usable = await this.eligible(found, kind);
    const accountHash = d.accounts.hex(found ? `u:${found.id}` : `i:${identifier.toLowerCase()}`);
    const handle = `rcv_${randomBytes(32).toString('base64url')}`;
    const now = new Date(d.clock.now());
    const w = {
      handleHash: d.handles.hex(handle), kind, userId: found?.id ?? null, decoy: !usable, accountHash, now,
      loginKey: d.attempts.subjectKey(found?.id, identifier), subjectMasked: maskIdentifier(identifier),
      expiresAt: new Date(now.getTime() + d.config.recovery.ttlMinutes * 60_000),
      reference: newReference(), initiatedBy: operator?.id ?? null, alternatives: d.config.recovery.matrix[kind],
    };
    const destinations = this.destinations(identifier);
    const wf = await d.db.transaction().execute(async (trx) => {
      await this.expire(trx, now, { account: { hash: accountHash, kind } }); // a lapsed workflow must not hold the slot
      // A new initiate replaces the account's open workflow of this kind, whoever started it: a
      // stranger who starts first can never keep the owner out. The codes it could send come from
      // the account's budget (steps.ts), so replacing buys none, and the owner is told each time.
      for (const old of await this.store.supersede(trx, accountHash, kind, now)) {
        await this.record(old, found, 'RECOVERY_CANCELLED', 'SUCCESS', auditContext(ctx), { by: 'superseded' }, trx);
      }
      const first = await this.store.insert(trx, w, true);
      // Only when a parallel initiate took the slot in between: a decoy that answers alike (and holds no slot).
      const id = first ?? (await this.store.insert(trx, { ...w, decoy: true, reference: newReference() }, false))!;
      await this.store.insertProofs(trx, id, proofsOf(w.alternatives), destinations);
      const created = (await this.store.find(trx, id))!;
      await this.record(created, found, 'RECOVERY_INITIATED', 'SUCCESS', auditContext(ctx), { identifier_type: identifierKind(identifier), ...(operator ? { initiated_by: operator.uuid } : {}) }, trx);
      return created;
    });
    if (!wf.decoy && found) {
      await this.notify(found, 'started', wf);
      const started: StartedRecovery = { userId: found.id, kind, startedAt: now.getTime(), expiresAt: w.expiresAt.getTime(), atBranch: operator !== undefined };
      for (const l of this.startedListeners) l(started);
    }
    return { recovery_id: handle, ...(await this.viewOf(wf)) };
  }

  /** Adds a listener told of each real workflow started (after it committed; never of a decoy). Must not throw nor block. */
  onStarted(listener: (started: StartedRecovery) => void): void {
    this.startedListeners.push(listener);
  }

  /**
   * Where a workflow stands (404 RECOVERY_NOT_FOUND for a handle that names none). A lost
   * password or PIN an operator's approval verified hands its reset token to the holder here,
   * once (steps.ts `collect`).
   */
  async status(handle: string, ctx: MfaContext): Promise<VerifyAnswer> {
    const wf = await this.load(handle);
    return collectable(wf) ? this.steps.collect(wf, ctx) : this.viewOf(wf);
  }

  /** One proof: a request for a code or the questions, or a check (src/recovery/steps.ts). */
  async verify(handle: string, input: ProofInput, ctx: MfaContext): Promise<VerifyAnswer> {
    assertProofFields(input);
    return this.steps.verify(await this.load(handle), input, ctx);
  }

  /** Cancels an active workflow (409 RECOVERY_STALE once it has ended). */
  async cancel(handle: string, ctx: MfaContext): Promise<RecoveryView> {
    const d = this.deps;
    const wf = await this.load(handle);
    if (FINISHED_STATES.includes(wf.state)) throw E.RECOVERY_STALE({ state: wf.state });
    const now = new Date(d.clock.now());
    const user = await this.userOf(wf);
    const cancelled = await d.db.transaction().execute(async (trx) => {
      if (!(await this.store.transition(trx, wf.id, ACTIVE_STATES, 'cancelled', now))) return false;
      await this.record(wf, user, 'RECOVERY_CANCELLED', 'SUCCESS', auditContext(ctx), { by: 'holder' }, trx);
      return true;
    });
    const after = (await this.reload(wf))!;
    if (!cancelled) throw E.RECOVERY_STALE({ state: after.state }); // a parallel step ended it first
    return this.viewOf(after);
  }

  /** The owner's one-click "this was not me" from a notice (cancel.ts). */
  async cancelByToken(token: string, ctx: MfaContext): Promise<CancelAnswer> {
    return this.links.cancel(token, ctx);
  }

  /** A completed device recovery asks for its new device's binding (rebinding.ts). */
  async accessPolicy(handle: string, channel: Channel, fingerprint: string, ctx: MfaContext): Promise<RebindAnswer> {
    return this.rebinding.request(await this.load(handle), channel, fingerprint, ctx);
  }

  /** Expires every active workflow past its expiry, audited; how many (a background job). */
  async expireDue(): Promise<number> {
    const d = this.deps;
    return d.db.transaction().execute((trx) => this.expire(trx, new Date(d.clock.now())));
  }

  /** Completes every workflow whose cooling-off has ended (a background job). */
  async completeDue(stopping?: AbortSignal): Promise<number> {
    return this.cooling.completeDue(stopping);
  }

  /** The cooling-off of an account (customers' or staff's). */
  coolingOff(trx: Db, user: UserRow): Promise<{ hours: number; basis: 'customer' | 'staff' }> {
    return this.cooling.hoursFor(trx, user);
  }

  /** Deletes workflows that ended more than RECORD_RETENTION_DAYS ago, in batches (a background job). */
  async purgeEnded(stopping?: AbortSignal): Promise<number> {
    const d = this.deps;
    const cutoff = new Date(d.clock.now() - d.config.retention.recordDays * 86_400_000);
    await d.db.deleteFrom('recovery_locks').where('locked_until', '<', new Date(d.clock.now())).execute();
    return purgeInBatches((limit) => this.store.purgeEnded(d.db, cutoff, limit), stopping);
  }

  /** Resolves once every background delivery and notice started so far has ended. */
  async settled(): Promise<void> {
    await this.deps.background.settled();
  }

  /** Keeps a background promise until it settles (it must never reject). */
  track(p: Promise<unknown>): void {
    this.deps.background.track(p);
  }

  /** The workflow of `handle` (404), expired first when its time is up. */
  private async load(handle: string): Promise<WorkflowRow> {
    const wf = await this.store.findByHandle(this.deps.db, this.deps.handles.hex(handle));
    if (!wf) throw E.RECOVERY_NOT_FOUND();
    return this.current(wf);
  }

  /** A workflow as it stands now: completed when its cooling-off has ended, expired when its time is up. */
  async current(wf: WorkflowRow): Promise<WorkflowRow> {
    const d = this.deps;
    if (wf.state === 'waiting') {
      if (wf.waiting_until !== null && wf.waiting_until.getTime() <= d.clock.now()) await this.cooling.complete(wf);
      return (await this.reload(wf))!;
    }
    if (!ACTIVE_STATES.includes(wf.state) || wf.expires_at.getTime() > d.clock.now()) return wf;
    await d.db.transaction().execute((trx) => this.expire(trx, new Date(d.clock.now()), { id: wf.id }));
    return (await this.reload(wf))!;
  }

  async reload(wf: WorkflowRow, db: Db = this.deps.db): Promise<WorkflowRow | undefined> {
    return this.store.find(db, wf.id);
  }

  /** Marks due workflows expired inside `trx` and audits each; how many. */
  private async expire(trx: Db, now: Date, only: Parameters<RecoveryStore['expireDue']>[2] = {}): Promise<number> {
    const rows = await this.store.expireDue(trx, now, only);
    for (const wf of rows) await this.record(wf, await this.userOf(wf, trx), 'RECOVERY_EXPIRED', 'SUCCESS', {}, {}, trx);
    return rows.length;
  }

  /**
   * A real account that may recover this: active, a person, and holding what it lost (a local
   * password; a PIN). The same lookups run when no account was found (for an id none has): the
   * answer's time must not tell the two apart.
   */
  private async eligible(user: UserRow | undefined, kind: RecoveryKind): Promise<boolean> {
    const d = this.deps;
    const id = user?.id ?? NO_USER;
    // Staff, agents and administrators do not recover a password or PIN self-service (a SIM swap
    // and a mailbox are not enough for the keys of the bank): that workflow answers alike and
    // never completes. Their lost factors or device are recovered only with a branch's approval
    // (`privileged` in `subject`, steps.ts).
    const privileged = await this.privileged(id);
    const customerOnly = !privileged || kind === 'mfa' || kind === 'device';
    let holds = true;
    if (kind === 'password') {
      // A directory's password is recovered with the directory, not here.
      const [state, local] = await Promise.all([d.credentials.state(id), d.credentials.assertLocalPassword(id).then(() => true, refusedBy(AppError))]);
      holds = state !== undefined && local;
    } else if (kind === 'pin') {
      holds = (await d.pins.hashOf(id)) !== undefined;
    }
    // An owner who reported a workflow as not theirs locked recovery for a while: a decoy meanwhile.
    const locked = (await this.links.lockedUntil(id)) !== null;
    return user !== undefined && user.is_active && user.deleted_at === null && !user.is_service_account && customerOnly && holds && !locked;
  }

  /**
   * What the answers say a code went to: the mask of the identifier typed when it is that kind of
   * contact, else the same "on file" words for every account (masks.ts). Never the account's own
   * contacts: their masks would tell a real account from a made-up one.
   */
  private destinations(identifier: string): Partial<Record<Proof, string>> {
    const kind = identifierKind(identifier);
    return {
      email_code: kind === 'email' ? emailMask(identifier) : ON_FILE.email_code,
      sms_code: kind === 'phone' ? phoneMask(identifier) : ON_FILE.sms_code,
    };
  }

  /**
   * The account a workflow names, a decoy's too (a disabled or staff account's, for the audit
   * trail); undefined for a made-up one or an account gone since. The same lookup runs either way.
   */
  async userOf(wf: WorkflowRow, db: Db = this.deps.db): Promise<UserRow | undefined> {
    return this.deps.users.findById(wf.user_id ?? NO_USER, db);
  }

  /** Who a check is for: the account only for a real workflow and while it can still sign in (else a decoy's checks). */
  async subject(wf: WorkflowRow, ctx: MfaContext): Promise<Subject> {
    const user = await this.userOf(wf);
    const usable = !wf.decoy && user !== undefined && user.is_active && user.deleted_at === null;
    return { wf, user: usable ? user : undefined, named: user, privileged: await this.privileged(user?.id ?? NO_USER), ctx, audit: auditContext(ctx) };
  }

  /** Whether the account holds a role beyond SELF_SERVICE_ROLES (the same lookup for an id none has). */
  private async privileged(userId: number): Promise<boolean> {
    const { roles } = await this.deps.users.grants(userId);
    return roles.some((r) => !SELF_SERVICE_ROLES.includes(r));
  }

  /** The workflow as the API shows it. */
  async viewOf(wf: WorkflowRow, db: Db = this.deps.db): Promise<RecoveryView> {
    return present(wf, this.alternatives(wf), await this.store.proofs(db, wf.id));
  }

  /**
   * Audits a step of `wf`: the account it names, a decoy's too (what a fraud team follows:
   * attempts on disabled, staff or busy accounts; the caller never sees the audit trail), or for
   * an identifier that names none, the identifier masked; never a code, answer or the handle.
   */
  async record(wf: WorkflowRow, user: UserRow | undefined, eventType: AuditEvent, status: 'SUCCESS' | 'FAILURE', ctx: AuditContext, details: Record<string, unknown>, trx: Db = this.deps.db): Promise<void> {
    const who: Who = user ? { userId: user.uuid, username: user.username } : { userId: null, username: wf.subject_masked };
    await this.deps.audit.record({ ...ctx, eventType, status, ...who, details: { workflow_id: wf.id, lost: wf.kind, decoy: wf.decoy, ...details } }, trx);
  }

  /** The reset token a completed password or PIN workflow hands out (once). */
  async resetToken(kind: 'password' | 'pin', user: UserRow): Promise<{ reset_token: string; reset_token_expires_in: number; reset_with: string }> {
    const d = this.deps;
    const issued = await d.tokens.issue('reset', { user_id: user.uuid, purpose: kind === 'password' ? PASSWORD_CHANGE_PURPOSE : PIN_CHANGE_PURPOSE, recovered: true });
    return { reset_token: issued.token, reset_token_expires_in: d.config.tokens.resetTtlSec, reset_with: RESET_ROUTES[kind] };
  }

  /**
   * Tells every contact of the account (notify.ts), with a new cancel link, all in the background:
   * a real workflow's answer must take no longer than a decoy's, which tells nobody.
   */
  async notify(user: UserRow, notice: RecoveryNotice, wf: WorkflowRow, extra: { until?: Date } = {}): Promise<void> {
    const d = this.deps;
    this.track((async () => {
      const cancelLink = notice === 'cancelled' || notice === 'stopped' ? undefined : await this.links.mint(wf);
      d.notifier.notify(user, notice, wf.kind, { ...extra, ...(cancelLink ? { cancelLink } : {}) });
    })().catch((err: unknown) => d.log.warn({ err, user_id: user.uuid, notice }, 'account recovery notice not sent')));
  }
}
