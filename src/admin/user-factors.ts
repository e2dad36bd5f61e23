/**
 * What second factors an account has, as an operator sees it before an MFA reset: each factor
 * with when it was enrolled and, where the store knows it, when it was last used. Read straight
 * from the factors' own tables (the map is src/gdpr/export/registry.ts), selecting only dates,
 * counts, names and states: no column that holds a secret, a hash, a code, an answer, a key or a
 * push token is ever selected, so none can reach an answer by mistake.
 *
 * "Last used" per factor: the authenticator app's last accepted time step (its start; the code
 * that confirmed the enrolment is the first, so an enrolled app always has one); a code by email,
 * text message or push, the last one entered for a sign-in or a step-up; a push approval, the last
 * approved request that was used; a backup code or a passkey, its own `used_at` / `last_used_at`.
 * Security questions record no use (a challenge is spent by any answer, right or wrong), so they
 * have none. Codes and push requests are deleted some days after they expire (OTP_CODES_KEPT_MS,
 * REQUESTS_KEPT_MS), and their uses with them: for those factors "last used" is the last use in
 * that time (`uses_kept_days`), and null says "none in that time", not "never".
 */
import type { Db } from '../platform/db/database.js';
import type { MfaMethod } from '../platform/db/schema.js';
import { OTP_CODES_KEPT_MS } from '../mfa/otp/store.js';
import { REQUESTS_KEPT_MS } from '../push-approval/service.js';

/** The authenticator app's time step (src/mfa/totp/totp.ts TOTP_DEFAULTS; not configurable). */
const TOTP_PERIOD_MS = 30_000;
const DAY_MS = 86_400_000;
/** For how many days back the uses of codes (email, SMS, push) and of push approvals are known. */
export const CODE_USES_KEPT_DAYS = OTP_CODES_KEPT_MS / DAY_MS;
export const APPROVAL_USES_KEPT_DAYS = REQUESTS_KEPT_MS / DAY_MS;

type When = Date | string | null;
const iso = (d: When): string | null => (d === null ? null : new Date(d).toISOString());

export interface FactorDates {
  enrolled_at: string;
  last_used_at: string | null;
}

/** A factor whose uses are known only while its codes (or requests) are kept. */
export interface KeptUses extends FactorDates {
  uses_kept_days: number;
}

export interface UserFactors {
  /** The enrolled (active) factors by name, as the sign-in challenge and `GET /api/v1/2fa/factors` name them. */
  enrolled: MfaMethod[];
  authenticator_app: FactorDates | null;
  backup_codes: { left: number; issued: number; issued_at: string | null; last_used_at: string | null };
  email_codes: KeptUses | null;
  sms_codes: KeptUses | null;
  push_codes: (KeptUses & { device_name: string | null }) | null;
  push_approval: (KeptUses & { device_name: string | null; paused_until: string | null }) | null;
  passkeys: Array<{ name: string; created_at: string; last_used_at: string | null; synced: boolean; suspended: boolean }>;
  security_questions: { count: number; set_at: string | null; questions: string[] };
}

export class UserFactorReader {
  constructor(private readonly deps: { db: Db }) {}

  async of(userId: number): Promise<UserFactors> {
    const db = this.deps.db;
    const rows = await db.selectFrom('mfa_factors').select(['method', 'created_at', 'confirmed_at', 'last_used_step'])
      .where('user_id', '=', userId).where('status', '=', 'active').orderBy('method').execute();
    const active = new Map(rows.map((r) => [r.method, r]));
    const enrolledAt = (m: MfaMethod): string | null => {
      const r = active.get(m);
      return r ? iso(r.confirmed_at ?? r.created_at) : null;
    };
    const codesUsed = await this.codesLastUsed(userId);
    const dates = (m: 'email' | 'sms' | 'push'): KeptUses | null => {
      const at = enrolledAt(m);
      return at === null ? null : { enrolled_at: at, last_used_at: codesUsed.get(m) ?? null, uses_kept_days: CODE_USES_KEPT_DAYS };
    };
    const totp = active.get('totp');
    const push = dates('push');
    return {
      enrolled: rows.map((r) => r.method),
      authenticator_app: totp ? { enrolled_at: enrolledAt('totp')!, last_used_at: totp.last_used_step === null ? null : new Date(Number(totp.last_used_step) * TOTP_PERIOD_MS).toISOString() } : null,
      backup_codes: await this.backupCodes(userId),
      email_codes: dates('email'),
      sms_codes: dates('sms'),
      push_codes: push ? { ...push, device_name: await this.codeDevice(userId) } : null,
      push_approval: active.has('push_approval') ? await this.pushApproval(userId, enrolledAt('push_approval')!) : null,
      passkeys: await this.passkeys(userId),
      security_questions: await this.securityQuestions(userId),
    };
  }

  /** The last code entered for a sign-in or a step-up, by method. */
  private async codesLastUsed(userId: number): Promise<Map<string, string>> {
    const rows = await this.deps.db.selectFrom('mfa_otp_codes').select(['method', (eb) => eb.fn.max('consumed_at').as('at')])
      .where('user_id', '=', userId).where('purpose', 'in', ['signin', 'stepup']).where('consumed_at', 'is not', null).groupBy('method').execute();
    return new Map(rows.filter((r) => r.at !== null).map((r) => [r.method, iso(r.at as When)!]));
  }

  private async backupCodes(userId: number): Promise<UserFactors['backup_codes']> {
    const r = await this.deps.db.selectFrom('mfa_backup_codes')
      .select((eb) => [
        eb.fn.countAll<string>().as('issued'),
        eb.fn.count<string>('id').filterWhere('used_at', 'is', null).as('left'),
        eb.fn.max('created_at').as('issued_at'),
        eb.fn.max('used_at').as('last_used_at'),
      ])
      .where('user_id', '=', userId).executeTakeFirstOrThrow();
    return { left: Number(r.left), issued: Number(r.issued), issued_at: iso(r.issued_at as When), last_used_at: iso(r.last_used_at as When) };
  }

  /** The name the holder gave the phone one-time codes by push go to. */
  private async codeDevice(userId: number): Promise<string | null> {
    const r = await this.deps.db.selectFrom('device_tokens').select('device_name').where('user_id', '=', userId).where('receives_codes', '=', true).executeTakeFirst();
    return r?.device_name ?? null;
  }

  private async pushApproval(userId: number, enrolledAt: string): Promise<UserFactors['push_approval']> {
    const db = this.deps.db;
    const key = await db.selectFrom('push_approval_keys as k').leftJoin('device_tokens as d', 'd.id', 'k.device_token_id')
      .select(['d.device_name', 'k.paused_until']).where('k.user_id', '=', userId).executeTakeFirst();
    const used = await db.selectFrom('push_approval_requests').select((eb) => eb.fn.max('completed_at').as('at'))
      .where('user_id', '=', userId).where('state', '=', 'approved').executeTakeFirst();
    return { enrolled_at: enrolledAt, last_used_at: iso((used?.at ?? null) as When), uses_kept_days: APPROVAL_USES_KEPT_DAYS, device_name: key?.device_name ?? null, paused_until: iso(key?.paused_until ?? null) };
  }

  private async passkeys(userId: number): Promise<UserFactors['passkeys']> {
    const rows = await this.deps.db.selectFrom('passkeys').select(['name', 'created_at', 'last_used_at', 'device_type', 'suspended_at'])
      .where('user_id', '=', userId).orderBy('created_at').execute();
    return rows.map((r) => ({ name: r.name, created_at: iso(r.created_at)!, last_used_at: iso(r.last_used_at), synced: r.device_type === 'multiDevice', suspended: r.suspended_at !== null }));
  }

  /** How many, since when, and the questions' text (the bank's own catalogue): never an answer or its hash. */
  private async securityQuestions(userId: number): Promise<UserFactors['security_questions']> {
    const rows = await this.deps.db.selectFrom('user_security_answers as a').innerJoin('security_questions as q', 'q.id', 'a.question_id')
      .select(['q.text', 'a.created_at']).where('a.user_id', '=', userId).orderBy('q.id').execute();
    const latest = rows.reduce<string | null>((m, r) => {
      const at = iso(r.created_at)!;
      return m === null || at > m ? at : m;
    }, null);
    return { count: rows.length, set_at: latest, questions: rows.map((r) => r.text) };
  }
}
