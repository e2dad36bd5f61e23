/**
 * Passkeys: registration by a signed-in owner, the owner's and administrators' management, and
 * the check of an assertion that passwordless sign-in (strategy.ts), the second factor and the
 * step-up share. The `passkey` second factor is active while the user has at least one passkey:
 * registering the first activates it, deleting the last removes it, in the same transaction.
 */
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { AlertService } from '../risk/alerts/service.js';
import type { FactorStore } from '../mfa/factors.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import type { UserRow } from '../users/store.js';
import { TokenErrors } from '../tokens/errors.js';
import { lockUserRow } from '../users/store.js';
import { PasskeyErrors } from './errors.js';
import type { PasskeyNotifier } from './notices.js';
import { counterWentBack, type ChallengeBinding, type PasskeyRow, type PasskeyStore } from './store.js';
import { checkAssertion, checkRegistration, creationOptions, requestOptions, type AuthenticationResponseJSON, type RegistrationResponseJSON } from './webauthn.js';

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  suspended_at: string | null;
  device_type: PasskeyRow['deviceType'];
  backed_up: boolean;
  transports: string[];
  aaguid: string;
}

/** What the owner and administrators see: never the public key or the credential id. */
export function present(p: PasskeyRow): PasskeyView {
  return {
    id: p.id, name: p.name, created_at: p.createdAt.toISOString(), last_used_at: p.lastUsedAt?.toISOString() ?? null, suspended_at: p.suspendedAt?.toISOString() ?? null,
    device_type: p.deviceType, backed_up: p.backedUp, transports: p.transports, aaguid: p.aaguid,
  };
}

/** An assertion's outcome: the passkey it proved, or why not (`cloned`: a right signature with a counter that went back). */
export type AssertionOutcome =
  | { ok: true; passkey: PasskeyRow }
  | { ok: false; reason: 'challenge' | 'unknown_credential' | 'cloned' | 'suspended' | string; passkey?: PasskeyRow };

/** Who acted, for the audit trail: the owner (the request's context) or an administrator. */
export interface Acting {
  ctx: AuditContext;
  /** An administrator acting on another's passkeys. */
  admin?: { uuid: string; username: string };
}

export interface PasskeyServiceDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'webauthn'>;
  store: PasskeyStore;
  factors: Pick<FactorStore, 'activate' | 'active'>;
  audit: AuditLog;
  /** Raises the `passkey_clone` security alert (high) when a cloned authenticator is seen. */
  alerts?: Pick<AlertService, 'raise'>;
  /** Tells the holder when a passkey is added or removed (notices.ts). */
  notices?: PasskeyNotifier;
}


export class PasskeyService {
  constructor(private readonly deps: PasskeyServiceDeps) {}

  get store(): PasskeyStore {
    return this.deps.store;
  }

  /** Resolves once the notices sent so far have gone (or failed): for closing, and tests. */
  async settled(): Promise<void> {
    await this.deps.notices?.settled();
  }

  async list(user: Pick<UserRow, 'id'>): Promise<PasskeyView[]> {
    return (await this.deps.store.list(user.id)).map(present);
  }

  async registrationOptions(user: UserRow) {
    const d = this.deps;
    const options = await creationOptions(d.config.webauthn, { uuid: user.uuid, username: user.username, displayName: user.full_name ?? user.username }, await d.store.list(user.id));
    const challengeId = await d.store.createChallenge({ purpose: 'register', userId: user.id }, options.challenge);
    return { challenge_id: challengeId, options };
  }

  /**
   * Verifies a registration answer and stores the passkey; the first one activates the `passkey`
   * factor. `firstFactor` (a set-up `two_factor_token`, which exists only while the account has
   * no factor): the passkey is stored only if the account still has none, checked under its row
   * lock, so a burst of answers with one set-up token adds one passkey (the others: 401
   * TOKEN_REVOKED).
   */
  async register(user: UserRow, challengeId: string, name: string, response: RegistrationResponseJSON, ctx: AuditContext, opts: { firstFactor?: boolean } = {}): Promise<PasskeyView> {
    const d = this.deps;
    const challenge = await d.store.consumeChallenge(challengeId, { purpose: 'register', userId: user.id });
    if (challenge === undefined) throw PasskeyErrors.PASSKEY_CHALLENGE_INVALID();
    const checked = await checkRegistration(d.config.webauthn, response, challenge);
    if ('refused' in checked) {
      await d.audit.record({ ...ctx, eventType: 'PASSKEY_REGISTERED', status: 'FAILURE', userId: user.uuid, username: user.username, mfaMethod: 'passkey', details: { reason: checked.refused } });
      throw PasskeyErrors.PASSKEY_REGISTRATION_FAILED({ reason: checked.refused });
    }
    const stored = await d.db.transaction().execute(async (trx) => {
      if (opts.firstFactor === true) {
        await lockUserRow(trx, user.id);
        if ((await d.factors.active(user.id, trx)).length > 0) throw TokenErrors.TOKEN_REVOKED({ reason: 'a second factor was set up with this token already' });
      }
      const row = await d.store.insert(trx, { ...checked, userId: user.id, name: name.trim() });
      if (!row) return undefined;
      await d.factors.activate(trx, user, 'passkey', new Date(d.clock.now()));
      await d.audit.record({ ...ctx, eventType: 'PASSKEY_REGISTERED', status: 'SUCCESS', userId: user.uuid, username: user.username, mfaMethod: 'passkey', details: { passkey_id: row.id, device_type: row.deviceType, backed_up: row.backedUp, aaguid: row.aaguid } }, trx);
      return row;
    });
    if (!stored) throw PasskeyErrors.PASSKEY_ALREADY_REGISTERED();
    d.notices?.tell(user, { kind: 'added', at: stored.createdAt }, `passkey-added-${stored.id}`);
    return present(stored);
  }

  async rename(user: UserRow, id: string, name: string, ctx: AuditContext): Promise<PasskeyView> {
    const row = await this.deps.store.rename(user.id, id, name.trim());
    if (!row) throw PasskeyErrors.PASSKEY_NOT_FOUND();
    await this.deps.audit.record({ ...ctx, eventType: 'PASSKEY_RENAMED', status: 'SUCCESS', userId: user.uuid, username: user.username, mfaMethod: 'passkey', details: { passkey_id: id } });
    return present(row);
  }

  /** Deletes one passkey; the last one takes the `passkey` factor with it. */
  async delete(user: UserRow, id: string, acting: Acting): Promise<{ deleted: true; passkeys_left: number }> {
    const d = this.deps;
    const left = await d.db.transaction().execute(async (trx) => {
      const out = await d.store.delete(trx, user.id, id);
      if (!out) return undefined;
      if (out.left === 0) await trx.deleteFrom('mfa_factors').where('user_id', '=', user.id).where('method', '=', 'passkey').execute();
      await d.audit.record({
        ...acting.ctx, eventType: 'PASSKEY_DELETED', status: 'SUCCESS', userId: user.uuid, username: user.username, mfaMethod: 'passkey',
        details: { passkey_id: id, passkeys_left: out.left, ...(acting.admin ? { by_admin: acting.admin.uuid, admin_username: acting.admin.username } : {}) },
      }, trx);
      return out.left;
    });
    if (left === undefined) throw PasskeyErrors.PASSKEY_NOT_FOUND();
    d.notices?.tell(user, { kind: 'removed', at: new Date(d.clock.now()), byAdmin: acting.admin !== undefined }, `passkey-removed-${id}`);
    return { deleted: true, passkeys_left: left };
  }

  /** Request options bound to `binding`; for a user, `allowCredentials` lists their passkeys. */
  async assertionOptions(binding: ChallengeBinding) {
    const d = this.deps;
    const allowed = binding.userId === null ? [] : (await d.store.list(binding.userId)).filter((p) => p.suspendedAt === null);
    const options = await requestOptions(d.config.webauthn, allowed);
    return { challenge_id: await d.store.createChallenge(binding, options.challenge), options };
  }

  /**
   * Spends the challenge, then checks the answer by the passkey it names (of `binding.userId`
   * when the challenge has one), then moves its counter forward. A counter that went back is
   * audited PASSKEY_CLONE_DETECTED, refused, and the passkey suspended (refused from then on,
   * whichever copy answers: the clone may count higher than the original); a `passkey_clone`
   * security alert (high) is raised once per passkey.
   */
  async verifyAssertion(challengeId: string, binding: ChallengeBinding, response: AuthenticationResponseJSON, ctx: AuditContext): Promise<AssertionOutcome> {
    const challenge = await this.deps.store.consumeChallenge(challengeId, binding);
    if (challenge === undefined) return { ok: false, reason: 'challenge' };
    return this.verifyAnswer(challenge, binding, response, ctx);
  }

  /** `verifyAssertion` once the challenge was spent (`challenge`: its value). */
  async verifyAnswer(challenge: string, binding: ChallengeBinding, response: AuthenticationResponseJSON, ctx: AuditContext): Promise<AssertionOutcome> {
    const d = this.deps;
    const passkey = typeof response.id === 'string' ? await d.store.byCredential(response.id) : undefined;
    if (!passkey || (binding.userId !== null && passkey.userId !== binding.userId)) return { ok: false, reason: 'unknown_credential' };
    if (passkey.suspendedAt !== null) return { ok: false, reason: 'suspended', passkey };
    const checked = await checkAssertion(d.config.webauthn, response, challenge, passkey);
    if ('refused' in checked) return { ok: false, reason: checked.refused, passkey };
    const next = { signCount: checked.newCounter, backedUp: checked.backedUp, deviceType: checked.deviceType };
    if (counterWentBack(passkey.signCount, checked.newCounter) || !(await d.store.recordUse(passkey.id, next))) {
      const owner = await d.db.selectFrom('users').select(['uuid', 'username']).where('id', '=', passkey.userId).executeTakeFirst();
      const suspended = await d.store.suspend(passkey.id);
      await d.audit.record({
        ...ctx, eventType: 'PASSKEY_CLONE_DETECTED', status: 'DETECTED', userId: owner?.uuid ?? null, username: owner?.username ?? null, mfaMethod: 'passkey',
        details: { passkey_id: passkey.id, stored_counter: passkey.signCount, presented_counter: checked.newCounter, purpose: binding.purpose, suspended: true },
      });
      if (suspended && d.alerts) {
        await d.alerts.raise(d.db, {
          rule: 'passkey_clone', severity: 'high', userId: owner?.uuid ?? null, auditId: null, channel: ctx.channel ?? null, ipHash: null,
          location: null, score: null, indicators: [], dedupeKey: `passkey_clone:${passkey.id}`,
        });
      }
      return { ok: false, reason: 'cloned', passkey };
    }
    return { ok: true, passkey: { ...passkey, signCount: next.signCount, backedUp: next.backedUp, deviceType: next.deviceType, lastUsedAt: new Date(d.clock.now()) } };
  }
}
