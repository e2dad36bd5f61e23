/**
 * The one-time codes in `mfa_otp_codes`. A row is one code sent for one *challenge*
 * (`signin:<2fa jti>`, `stepup:<session id>`, `enroll:<user id>:<method>`). Only the newest
 * delivered-or-queued row of a challenge is live: a new code supersedes the previous one, a
 * failed delivery supersedes its own. Every check-and-change is one conditional statement, so
 * nodes and parallel requests agree without locks; only sending takes a lock (per challenge),
 * because the resend throttle is a read followed by an insert.
 */
import { sql, type Insertable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { MfaOtpCodesTable, OtpMethod } from '../../platform/db/schema.js';
import { ADVISORY_LOCKS } from '../../platform/db/locks.js';

/** How long a code is kept after it expires (purgeOld); its use is known that long (src/admin/user-factors.ts). */
export const OTP_CODES_KEPT_MS = 7 * 24 * 3_600_000;

export interface SentCode {
  created_at: Date;
  delivery_status: 'queued' | 'sent' | 'failed';
}

export interface CurrentCode {
  id: string;
  method: OtpMethod;
  /** Push enrolment: the device the code went to, and its description. */
  device_token_id: number | null;
  destination_masked: string;
  expires_at: Date;
  consumed_at: Date | null;
}

export interface AttemptedCode {
  attempts: number;
  code_hash: string;
  expires_at: Date;
}

export class OtpStore {
  constructor(private readonly db: Db) {}

  /** Until `trx` ends, no other send for `challenge` runs (on any node). */
  async lockChallenge(trx: Db, challenge: string): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.otpSend}::int, hashtext(${challenge}))`.execute(trx);
  }

  /** Codes sent for `challenge` since `since`, newest first, whatever became of them. */
  async sentSince(trx: Db, challenge: string, since: Date): Promise<SentCode[]> {
    return trx.selectFrom('mfa_otp_codes').select(['created_at', 'delivery_status'])
      .where('challenge', '=', challenge).where('created_at', '>', since)
      .orderBy('created_at', 'desc').execute();
  }

  /** Supersedes the live code of the row's challenge and inserts the row (delivery `queued`). */
  async replace(trx: Db, row: Insertable<MfaOtpCodesTable>, now: Date): Promise<void> {
    await trx.updateTable('mfa_otp_codes').set({ superseded_at: now })
      .where('challenge', '=', row.challenge).where('consumed_at', 'is', null).where('superseded_at', 'is', null)
      .execute();
    await trx.insertInto('mfa_otp_codes').values(row).execute();
  }

  async markSent(id: string, ref: string, now: Date): Promise<void> {
    await this.db.updateTable('mfa_otp_codes').set({ delivery_status: 'sent', delivery_ref: ref.slice(0, 512), delivered_at: now })
      .where('id', '=', id).execute();
  }

  /** A code that never arrived is void: marked failed and superseded at once. */
  async markFailed(id: string, reason: string, now: Date): Promise<void> {
    await this.db.updateTable('mfa_otp_codes').set({ delivery_status: 'failed', delivery_error: reason.slice(0, 512), superseded_at: now })
      .where('id', '=', id).execute();
  }

  /**
   * The code a check of `challenge` is about: the live one, or else the last one used (so a
   * replay is told "already used"), or none.
   */
  async current(challenge: string): Promise<CurrentCode | undefined> {
    return this.db.selectFrom('mfa_otp_codes').select(['id', 'method', 'device_token_id', 'destination_masked', 'expires_at', 'consumed_at'])
      .where('challenge', '=', challenge).where('superseded_at', 'is', null)
      .orderBy(sql`consumed_at IS NULL`, 'desc').orderBy('created_at', 'desc')
      .limit(1).executeTakeFirst();
  }

  /**
   * Spends one attempt on a live code, before it is compared: the row update is the arbiter, so
   * a burst of parallel guesses gets at most `max` of them through. Undefined when the code is
   * spent, replaced, or out of attempts.
   */
  async spendAttempt(id: string, max: number): Promise<AttemptedCode | undefined> {
    return this.db.updateTable('mfa_otp_codes').set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id).where('consumed_at', 'is', null).where('superseded_at', 'is', null).where('attempts', '<', max)
      .returning(['attempts', 'code_hash', 'expires_at'])
      .executeTakeFirst();
  }

  /** Why `spendAttempt` found nothing: the code was used or replaced, or its attempts ran out. */
  async isSpentOrReplaced(id: string): Promise<boolean> {
    const row = await this.db.selectFrom('mfa_otp_codes').select(['consumed_at', 'superseded_at']).where('id', '=', id).executeTakeFirst();
    return !row || row.consumed_at !== null || row.superseded_at !== null;
  }

  /** Marks the code used; false when another request used (or a resend replaced) it first. */
  async consume(id: string, now: Date): Promise<boolean> {
    const row = await this.db.updateTable('mfa_otp_codes').set({ consumed_at: now })
      .where('id', '=', id).where('consumed_at', 'is', null).where('superseded_at', 'is', null)
      .returning('id').executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes codes a week after they expired (kept that long so support can see whether one was delivered). */
  async purgeOld(nowMs: number): Promise<void> {
    await this.db.deleteFrom('mfa_otp_codes').where('expires_at', '<', new Date(nowMs - OTP_CODES_KEPT_MS)).execute();
  }
}
