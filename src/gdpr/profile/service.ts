/**
 * The person's own profile: read it, correct it (rectification), and confirm a new email or
 * phone with the code sent to it (docs/decisions.md "Profile rectification").
 *
 * - Name, language and date of birth change at once (PROFILE_UPDATED names the fields, never
 *   the values).
 * - A new email or phone is an account-takeover path (codes and notices go there, and an email
 *   signs in): it needs the current password (counted as a sign-in attempt), a recent step-up
 *   when the account has a second factor, and then the code sent to the NEW address. The OLD
 *   address is told when the change is requested and when it takes effect.
 * - An address another account holds (or an email that is another account's username) is
 *   answered at the request exactly as a free one (same status, body, stored row and audit entry
 *   of the person), so the route cannot test whether an address is a customer's: but no code is
 *   sent to it (its owner is told nothing), the stored code is one nobody knows, so confirming
 *   fails as a wrong code does, and an audit entry of no account (CONTACT_CHANGE_FAILED,
 *   `identifier_taken`, the address masked, the `change_id` linking it) keeps the truth. At the
 *   confirmation the address is checked again (under the identifier's lock, with the unique
 *   blind index as the last word): 409 IDENTIFIER_CONFLICT there tells nothing the code did not.
 * - A directory or identity-provider account changes only its language and date of birth.
 * Codes: single use, `OTP_VALIDITY_MINUTES`, `OTP_MAX_ATTEMPTS` attempts each (reserved before
 * the constant-time comparison), `OTP_RESEND_SECONDS` between sends and `OTP_MAX_SENDS` an hour
 * per user and kind, as one-time codes are.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditContext, AuditEvent, AuditLog } from '../../audit/service.js';
import { AdminErrors } from '../../admin/errors.js';
import type { ExternalPasswords } from '../../credentials/external.js';
import { confirmCurrentPassword, type ReauthDeps } from '../../credentials/reauth.js';
import type { ChallengeService } from '../../mfa/challenge.js';
import type { FactorStore } from '../../mfa/factors.js';
import { DeliveryFailure } from '../../mfa/otp/delivery.js';
import { OtpErrors } from '../../mfa/otp/errors.js';
import { SEND_WINDOW_SEC } from '../../mfa/otp/service.js';
import { maskDestination } from '../../mfa/otp/templates.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import { phoneIndexValue } from '../../platform/crypto/blind-index.js';
import type { Db } from '../../platform/db/database.js';
import { CommonErrors, retryLater, type AppError } from '../../platform/errors.js';
import type { AuthContext } from '../../sessions/guard.js';
import { lockUserRow, type UserRow, type UserStore } from '../../users/store.js';
import type { ContactCodes } from './codes.js';
import type { ContactDelivery } from './delivery.js';
import type { BackgroundWork } from '../../platform/background.js';
import { ProfileErrors } from './errors.js';
import type { ContactKind } from './messages.js';
import type { Profile, ProfileStore } from './store.js';

export interface ProfileChange {
  fullName?: string;
  language?: 'en' | 'pt' | 'fr';
  dateOfBirth?: string | null;
  email?: string;
  phone?: string;
  currentPassword?: string;
}

/** A code sent to a new address: where (masked), how long it lasts, when another may be asked. */
export interface CodeSent {
  kind: ContactKind;
  destination: string;
  expires_in: number;
  resend_after: number;
}

export interface ProfileServiceDeps extends ReauthDeps {
  config: Pick<Config, 'signin' | 'rateLimits' | 'mfa'>;
  db: Db;
  clock: Clock;
  log: Logger;
  users: UserStore;
  audit: AuditLog;
  externalPasswords: ExternalPasswords;
  challenges: ChallengeService;
  factors: FactorStore;
  store: ProfileStore;
  codes: ContactCodes;
  delivery: ContactDelivery;
  /** Code deliveries under way (awaited by `settled`, and before the module closes). */
  background: BackgroundWork;
}

const EARLIEST_BIRTH = '1900-01-01';

/** 409 IDENTIFIER_CONFLICT for a new address another account holds as its email, phone or username. */
function conflict(kind: ContactKind): AppError {
  return AdminErrors.IDENTIFIER_CONFLICT({ fields: [kind] }, { message: `This ${kind === 'email' ? 'email address' : 'phone number'} belongs to another account: it cannot be yours too.` });
}

const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown }).code === '23505';

/** 422 VALIDATION_ERROR naming one body field. */
function invalid(field: string, message: string): AppError {
  return CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field, message }] }, { message: `body/${field} ${message}` });
}

/** The new contacts of a change: only those that differ from the account's (an email by case, a phone by its digits). */
export function newContacts(user: Pick<UserRow, 'email' | 'phone'>, change: ProfileChange): Array<{ kind: ContactKind; value: string }> {
  const out: Array<{ kind: ContactKind; value: string }> = [];
  const email = change.email?.trim();
  if (email !== undefined && email.toLowerCase() !== user.email?.toLowerCase()) out.push({ kind: 'email', value: email });
  if (change.phone !== undefined && phoneIndexValue(change.phone) !== (user.phone === null ? null : phoneIndexValue(user.phone))) out.push({ kind: 'phone', value: change.phone });
  return out;
}

/** A date of birth is a real day, not in the future, not before 1900 (the schema checked its form). */
export function checkDateOfBirth(value: string, nowMs: number): void {
  const today = new Date(nowMs).toISOString().slice(0, 10);
  if (value > today) throw invalid('date_of_birth', `must not be in the future (today is ${today})`);
  if (value < EARLIEST_BIRTH) throw invalid('date_of_birth', `must not be before ${EARLIEST_BIRTH}`);
}

export class ProfileService {
  constructor(private readonly deps: ProfileServiceDeps) {}

  async read(userId: number): Promise<Profile | undefined> {
    return this.deps.store.profileOf(this.deps.db, userId, new Date(this.deps.clock.now()));
  }

  /**
   * Applies name, language and date of birth, and sends a code to each new address; everything
   * is checked before anything is written, and written in one transaction. Codes go out after
   * the answer (a failed one is void and audited). An
   * address another account holds goes through the same steps, except that no code is sent.
   */
  async update(auth: AuthContext, user: UserRow, change: ProfileChange, ctx: AuditContext): Promise<{ changed: string[]; sent: CodeSent[] }> {
    const d = this.deps;
    const contacts = newContacts(user, change);
    await this.assertOwnFields(user, change);
    if (change.dateOfBirth) checkDateOfBirth(change.dateOfBirth, d.clock.now());
    if (contacts.length > 0) await this.reauthenticate(auth, user, change, contacts.map((c) => c.kind), ctx);
    const now = new Date(d.clock.now());
    const cfg = d.config.mfa;
    const codes = contacts.map((c) => {
      const id = randomUUID();
      const code = d.codes.generate();
      return { ...c, id, code, destination: maskDestination(c.kind, c.value), codeHash: d.codes.hash(code, id) };
    });
    const withheld = new Set<string>();
    const changed = await d.db.transaction().execute(async (trx) => {
      await lockUserRow(trx, user.id);
      const changed = await this.applyFields(trx, user, change, now, ctx);
      for (const c of codes) {
        const taken = await this.isTaken(trx, user.id, c.kind, c.value);
        await this.throttle(trx, user.id, c.kind, now);
        // Taken: the row stores the hash of a secret no one holds (no 6-digit code matches it).
        const codeHash = taken ? d.codes.hash(randomBytes(32).toString('hex'), c.id) : c.codeHash;
        await d.store.replace(trx, { ...c, codeHash, userId: user.id, expiresAt: new Date(now.getTime() + cfg.otpValiditySec * 1000) }, now);
        const old = c.kind === 'email' ? user.email : user.phone;
        await this.audit(user, 'CONTACT_CHANGE_REQUESTED', ctx, { kind: c.kind, change_id: c.id, from: old ? maskDestination(c.kind, old) : null, to: c.destination }, trx);
        if (taken) {
          withheld.add(c.id);
          await this.auditWithheld(c, ctx, trx);
        }
      }
      return changed;
    });
    const sent: CodeSent[] = [];
    for (const c of codes) {
      // Codes go out after the answer, free addresses' and none to taken ones alike: an answer that
      // waited for the mail server only for a free address would tell the two apart by its time.
      if (withheld.has(c.id)) await d.store.markSent(c.id); // reads as a sent code, in the person's export too
      else d.background.track(this.deliver(user, c, ctx));
      // The person's old address is told either way: a notice only for free addresses would answer the question.
      await d.delivery.notify(user, { stage: 'requested', kind: c.kind, newMasked: c.destination }, `contact-${c.id}-requested`);
      sent.push({ kind: c.kind, destination: c.destination, expires_in: cfg.otpValiditySec, resend_after: cfg.otpResendSec });
    }
    return { changed, sent };
  }

  /**
   * Confirms a new email or phone with its code: the attempt is reserved first (one conditional
   * update), the comparison is constant-time, and the use is a conditional update only one
   * request wins. The address is checked free again under its lock, and the unique blind index
   * has the last word (409, never 500). The old address is told. A change asked for an address
   * another account held has a code nobody holds: it fails as a wrong code does.
   */
  async confirm(user: UserRow, kind: ContactKind, code: string, ctx: AuditContext): Promise<void> {
    const d = this.deps;
    const row = await d.store.current(user.id, kind);
    if (!row) throw ProfileErrors.CONTACT_CHANGE_NOT_PENDING({ kind });
    const fail = async (error: AppError, reason: string, extra: Record<string, unknown> = {}): Promise<never> => {
      await this.audit(user, 'CONTACT_CHANGE_FAILED', ctx, { kind, change_id: row.id, reason, ...extra });
      throw error;
    };
    if (row.consumed_at !== null) return fail(OtpErrors.OTP_INVALID(), 'already_used');
    if (new Date(row.expires_at).getTime() <= d.clock.now()) return fail(OtpErrors.OTP_EXPIRED(), 'expired');
    const attempt = await d.store.spendAttempt(row.id, d.config.mfa.otpMaxAttempts);
    if (!attempt) return (await d.store.isSpentOrReplaced(row.id)) ? fail(OtpErrors.OTP_INVALID(), 'already_used') : fail(OtpErrors.OTP_ATTEMPTS_EXCEEDED(), 'attempts_exceeded');
    if (!d.codes.matches(code, row.id, attempt.code_hash)) {
      return fail(OtpErrors.OTP_INVALID({ attempts_remaining: Math.max(0, d.config.mfa.otpMaxAttempts - attempt.attempts) }), 'invalid_code', { attempts: attempt.attempts });
    }
    const now = new Date(d.clock.now());
    let before: UserRow;
    try {
      before = await d.db.transaction().execute(async (trx) => {
        await lockUserRow(trx, user.id);
        if (!(await d.store.consume(trx, row.id, now))) throw OtpErrors.OTP_INVALID();
        const current = (await d.users.findById(user.id, trx))!;
        await this.assertFree(trx, user.id, kind, attempt.value);
        await d.users.updateProfile(trx, user.id, kind === 'email' ? { email: attempt.value } : { phone: attempt.value }, now).catch((err: unknown) => {
          throw isUniqueViolation(err) ? conflict(kind) : err; // another account took it between the check and the write
        });
        const old = kind === 'email' ? current.email : current.phone;
        await this.audit(user, 'CONTACT_CHANGED', ctx, { kind, change_id: row.id, from: old ? maskDestination(kind, old) : null, to: row.destination_masked }, trx);
        return current;
      });
    } catch (err) {
      if ((err as AppError).code !== AdminErrors.IDENTIFIER_CONFLICT.code) throw err;
      await d.store.void(row.id, now); // it can never take effect now: the person asks again with another address
      return fail(err as AppError, 'identifier_conflict');
    }
    await d.delivery.notify(before, { stage: 'changed', kind, newMasked: row.destination_masked }, `contact-${row.id}-changed`);
  }

  /** Clean-up job. */
  purgeOld(stopping?: AbortSignal): Promise<number> {
    return this.deps.store.purgeOld(this.deps.clock.now(), stopping);
  }

  /** 409 PROFILE_MANAGED_EXTERNALLY for a provider's field of a directory or identity-provider account. */
  private async assertOwnFields(user: UserRow, change: ProfileChange): Promise<void> {
    const fields = (['full_name', 'email', 'phone'] as const).filter((f) => change[f === 'full_name' ? 'fullName' : f] !== undefined);
    if (fields.length === 0) return;
    const link = await this.deps.externalPasswords.linkOf(user.id);
    if (link) throw ProfileErrors.PROFILE_MANAGED_EXTERNALLY({ fields, idp_type: link.idpType });
  }

  /** Current password (a sign-in attempt's cost and lockout), and a recent step-up when the account has a second factor. */
  private async reauthenticate(auth: AuthContext, user: UserRow, change: ProfileChange, kinds: ContactKind[], ctx: AuditContext): Promise<void> {
    const d = this.deps;
    if (change.currentPassword === undefined) throw invalid('current_password', `is required to change the ${kinds.join(' and ')}`);
    for (const kind of kinds) {
      if (!d.delivery.available(kind)) throw OtpErrors.OTP_DELIVERY_FAILED({ kind, reason: 'not_configured' }, { message: `Codes cannot be sent by ${kind === 'email' ? 'email' : 'text message'} at the moment; the ${kind} cannot be changed.` });
    }
    await d.challenges.requireRecentStepUp(auth, await d.factors.active(user.id));
    await confirmCurrentPassword(d, user, change.currentPassword, ctx, 'contact_change');
  }

  /** Name, language and date of birth: written when they differ, audited with the field names. */
  private async applyFields(trx: Db, user: UserRow, change: ProfileChange, now: Date, ctx: AuditContext): Promise<string[]> {
    const d = this.deps;
    const current = (await d.users.findById(user.id, trx))!;
    const dob = change.dateOfBirth === undefined ? undefined : await d.store.dateOfBirth(trx, user.id);
    const patch = {
      ...(change.fullName !== undefined && change.fullName !== current.full_name ? { fullName: change.fullName } : {}),
      ...(change.language !== undefined && change.language !== (current.language ?? 'en') ? { language: change.language } : {}),
      ...(change.dateOfBirth !== undefined && change.dateOfBirth !== dob ? { dateOfBirth: change.dateOfBirth } : {}),
    };
    const changed = [...('fullName' in patch ? ['full_name'] : []), ...('language' in patch ? ['language'] : []), ...('dateOfBirth' in patch ? ['date_of_birth'] : [])];
    if (changed.length === 0) return [];
    await d.store.setFields(trx, user.id, patch, now);
    await this.audit(user, 'PROFILE_UPDATED', ctx, { fields: changed }, trx);
    return changed;
  }

  /** Whether another account holds the address as its email, phone or username (under its lock, as a creation takes it). */
  private async isTaken(trx: Db, userId: number, kind: ContactKind, value: string): Promise<boolean> {
    const taken = await this.deps.users.contactsTakenLocked(trx, userId, kind === 'email' ? value : null, kind === 'phone' ? value : null);
    return taken.email || taken.phone || taken.crossed.length > 0;
  }

  /** 409 IDENTIFIER_CONFLICT unless no other account holds the address. */
  private async assertFree(trx: Db, userId: number, kind: ContactKind, value: string): Promise<void> {
    if (await this.isTaken(trx, userId, kind, value)) throw conflict(kind);
  }

  /**
   * The truth about a change asked for an address another account holds: an entry of no account
   * (the person's own trail and export show only CONTACT_CHANGE_REQUESTED, as for a free
   * address), the address masked, joined to the request by `change_id`.
   */
  private async auditWithheld(c: { id: string; kind: ContactKind; destination: string }, ctx: AuditContext, trx: Db): Promise<void> {
    await this.deps.audit.record({ ...ctx, eventType: 'CONTACT_CHANGE_FAILED', status: 'FAILURE', userId: null, username: null, details: { kind: c.kind, change_id: c.id, reason: 'identifier_taken', to: c.destination, code_sent: false } }, trx);
  }

  /** The one-time codes' send limits, per user and kind (the user's row lock serialises the count). */
  private async throttle(trx: Db, userId: number, kind: ContactKind, now: Date): Promise<void> {
    const cfg = this.deps.config.mfa;
    const sent = await this.deps.store.sentSince(trx, userId, kind, new Date(now.getTime() - SEND_WINDOW_SEC * 1000));
    if (sent.length >= cfg.otpMaxSends) {
      throw retryLater(OtpErrors.OTP_SEND_LIMIT, (new Date(sent[cfg.otpMaxSends - 1]!.created_at).getTime() + SEND_WINDOW_SEC * 1000 - now.getTime()) / 1000);
    }
    const last = sent.find((s) => s.delivery_status !== 'failed');
    const wait = last ? new Date(last.created_at).getTime() + cfg.otpResendSec * 1000 - now.getTime() : 0;
    if (wait > 0) throw retryLater(OtpErrors.OTP_RESEND_THROTTLED, wait / 1000);
  }

  /**
   * Sends a stored code, after the answer: a failure voids it (the person asks again after
   * `OTP_RESEND_SECONDS`) and is audited CONTACT_CHANGE_FAILED; it never rejects.
   */
  private async deliver(user: UserRow, c: { id: string; kind: ContactKind; value: string; code: string; destination: string }, ctx: AuditContext): Promise<void> {
    const d = this.deps;
    try {
      await d.delivery.sendCode(c.kind, c.value, user, c.code, c.id);
      await d.store.markSent(c.id);
    } catch (err) {
      await d.store.markFailed(c.id, new Date(d.clock.now())).catch(() => undefined);
      const why = err instanceof DeliveryFailure ? { via: err.via, error: err.reason } : { error: 'unexpected' };
      d.log.warn({ err, user_id: user.uuid, kind: c.kind, change_id: c.id }, 'contact change code not delivered');
      await this.audit(user, 'CONTACT_CHANGE_FAILED', ctx, { kind: c.kind, change_id: c.id, reason: 'delivery_failed', ...why }).catch(() => undefined);
    }
  }

  /** Resolves once every code delivery started so far has ended. */
  async settled(): Promise<void> {
    await this.deps.background.settled();
  }

  private async audit(user: UserRow, eventType: AuditEvent, ctx: AuditContext, details: Record<string, unknown>, trx?: Db): Promise<void> {
    await this.deps.audit.record({ ...ctx, eventType, status: eventType === 'CONTACT_CHANGE_FAILED' ? 'FAILURE' : 'SUCCESS', userId: user.uuid, username: user.username, details }, trx);
  }
}
