/**
 * The responses to an assessed sign-in (issue 29, section 3), as one listener of the risk
 * evaluation (`risk.onAssessed`), and the holder's "this was not me":
 *
 * - **Alerts** (alert-rules.ts): raised with `alerts.raise` in the sign-in's transaction for a
 *   session opened (the alert commits with the session, or not at all), on the pool otherwise;
 *   a failure to raise one never turns a refused password into a 500 (it is logged).
 * - **Notices**: a session opened, a right password waiting for its second factor, or a right
 *   password the response policy refused, scoring RISK_NOTIFY_SCORE or more is told to the
 *   account holder (notices.ts) by email, SMS and push, once per account, client network and
 *   window (a UNIQUE key). The notice is recorded with the event (in the session's transaction),
 *   then sent in the background once that transaction has ended, so it never delays or fails the
 *   sign-in; a job catches up what a node left unsent.
 *   Sending claims the row first: of two nodes, one sends.
 * - **"This was not me"**: the notice's single-use token, reserved atomically, ends every session
 *   of the account, locks it (lock.ts) until a recovery or an administrator lifts it, raises a
 *   `not_me` alert (critical), and is audited SIGN_IN_REPORTED_NOT_ME; all in one transaction.
 */
import type { Logger } from 'pino';
import { auditContext, type AuditContext, type AuditLog } from '../../audit/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { MfaContext } from '../../mfa/challenge.js';
import type { OtpService } from '../../mfa/otp/service.js';
import type { PushProvider } from '../../notifications/fcm.js';
import type { PushOutbox } from '../../notifications/outbox.js';
import type { BackgroundWork } from '../../platform/background.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import { safeEqual, type Hasher } from '../../platform/crypto/field-cipher.js';
import { uuidV7 } from '../../platform/crypto/uuid-v7.js';
import type { Db } from '../../platform/db/database.js';
import type { SessionService } from '../../sessions/service.js';
import type { UserStore } from '../../users/store.js';
import type { AlertService } from '../alerts/service.js';
import { placeOf as placeOfLocation } from '../signals.js';
import type { AssessedSignIn } from '../types.js';
import { alertFor } from './alert-rules.js';
import { describeDevice } from './device.js';
import { RiskResponseErrors as E } from './errors.js';
import { RECOVER_PATH, clearSecurityLock, setSecurityLock } from './lock.js';
import { signInNoticeMail, signInNoticePush, signInNoticeSms, type SignInNotice, type SignInNoticeKind } from './notices.js';
import { NoticeStore, type NoticeRow } from './store.js';
import { sql } from 'kysely';

/** A "this was not me" token: `rnm_` and 32 bytes, base64url. */
export const NOT_ME_TOKEN = /^rnm_[A-Za-z0-9_-]{43}$/;
/** How many unsent notices one run of the catch-up job claims, at most. */
const BATCH = 50;

export interface RiskResponsesDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'risk'>;
  alerts: AlertService;
  users: UserStore;
  sessions: SessionService;
  audit: AuditLog;
  mailer: Mailer;
  otp: OtpService;
  push: PushProvider | undefined;
  pushOutbox: PushOutbox;
  /** Derives a notice's token from its id, so the token itself is never stored. */
  tokenKey: Hasher;
  /** The keyed hash a token is stored and found by. */
  tokenHash: Hasher;
  background: BackgroundWork;
}

export interface NotMeAnswer {
  reported: true;
  sessions_ended: number;
  account_locked: true;
  recover_path: string;
}

export class RiskResponses {
  readonly store: NoticeStore;

  constructor(private readonly deps: RiskResponsesDeps) {
    this.store = new NoticeStore(deps.db);
  }

  private get settings() {
    return this.deps.config.risk.responses;
  }

  /** The listener of the risk evaluation (see AssessmentListener): `db` is the session's transaction for `signed_in`. */
  async onAssessed(e: AssessedSignIn, db: Db): Promise<void> {
    const d = this.deps;
    const inSession = e.outcome === 'signed_in';
    const alert = alertFor(e, { ...this.settings, windowMinutes: d.config.risk.windowMinutes });
    if (alert) {
      if (inSession) await d.alerts.raise(db, alert);
      else await d.alerts.raise(db, alert).catch((err: unknown) => d.log.error({ err, rule: alert.rule }, 'security alert not raised'));
    }
    // A right password the response policy refused is always told, whatever its score: the
    // password is known to someone else, and only its holder can change it.
    if (e.outcome === 'failed' || e.user === null || (e.outcome !== 'refused' && e.assessment.score < this.settings.notifyScore)) return;
    const queued = this.queueNotice(e, db);
    // Only the session's transaction may fail the sign-in (it would roll back anyway); a notice
    // that cannot be recorded for a sign-in without a session (a second factor due, a refusal) is logged.
    const id = inSession ? await queued : await queued.catch((err: unknown) => void d.log.error({ err, user_id: e.user?.uuid }, 'sign-in notice not recorded'));
    if (id) d.background.track(this.sendWhenCommitted(id, e.user.id));
  }

  /** Records the notice of `e` unless one of its account, network and window exists; its id, or null. */
  private async queueNotice(e: AssessedSignIn, db: Db): Promise<string | null> {
    const d = this.deps;
    const s = this.settings;
    const place = placeOfLocation(e.assessment.location);
    const device = describeDevice(e.userAgent);
    const id = uuidV7(e.at);
    const window = Math.floor(e.at / (d.config.risk.windowMinutes * 60_000));
    const recorded = await this.store.record(db, {
      id, dedupe_key: `${e.user!.uuid}:${e.networkHash}:${window}`, user_id: e.user!.id, outcome: e.outcome as SignInNoticeKind,
      occurred_at: new Date(e.at), country: place?.country ?? null, city: place?.city ?? null, browser: device.browser, system: device.system,
      channel: e.channel, audit_id: e.auditId, score: e.assessment.score,
      token_hash: s.notMeUrl === undefined ? null : d.tokenHash.hex(this.tokenOf(id)),
      expires_at: new Date(e.at + s.notMeDays * 86_400_000), used_at: null, sent_at: null, created_at: new Date(d.clock.now()),
    });
    return recorded ? id : null;
  }

  /** The token of notice `id`: a keyed hash of the id, so only this service can make it. */
  private tokenOf(id: string): string {
    return `rnm_${Buffer.from(this.deps.tokenKey.hex(`not-me:${id}`), 'hex').toString('base64url')}`;
  }

  /**
   * Sends notice `id` once the transaction that recorded it has ended. A sign-in's transaction
   * holds the account's row lock from the session's creation to its end: waiting for a share of
   * it orders this after the commit (and finds nothing after a rollback). Never rejects.
   */
  private async sendWhenCommitted(id: string, userId: number): Promise<void> {
    const d = this.deps;
    try {
      const row = await d.db.transaction().execute(async (trx) => {
        await sql`SELECT 1 FROM users WHERE id = ${userId} FOR SHARE`.execute(trx);
        return this.store.claim(trx, id, new Date(d.clock.now()));
      });
      if (row) await this.send(row);
    } catch (err) {
      d.log.error({ err, notice_id: id }, 'sign-in notice not sent');
    }
  }

  /** The job's catch-up: notices a node recorded and did not send (it stopped). */
  async sendDue(): Promise<number> {
    const rows = await this.store.claimDue(new Date(this.deps.clock.now()), BATCH);
    for (const row of rows) await this.send(row);
    return rows.length;
  }

  /** Tells every contact of the account: email, SMS, push (those it has and the bank configured). A channel that fails is logged at warn. */
  private async send(row: NoticeRow): Promise<void> {
    const d = this.deps;
    const user = await d.users.findById(row.user_id);
    if (!user) return;
    const url = this.settings.notMeUrl;
    const notice: SignInNotice = {
      kind: row.outcome, language: user.language, username: user.username, fullName: user.full_name, at: new Date(row.occurred_at),
      country: row.country, city: row.city, device: { browser: row.browser, system: row.system }, channel: row.channel,
      ...(url !== undefined && row.token_hash !== null ? { notMeLink: `${url}#${this.tokenOf(row.id)}` } : {}),
    };
    const failed = (via: string) => (err: unknown): void => d.log.warn({ err, user_id: user.uuid, notice_id: row.id, via }, 'sign-in notice not delivered');
    await Promise.all([
      d.mailer.configured && user.email ? d.mailer.send(signInNoticeMail(user.email, notice)).catch(failed('email')) : null,
      user.phone ? d.otp.sendRecoveryNotice(user, signInNoticeSms(notice), `risk-notice-${row.id}`).catch(failed('sms')) : null,
      d.push ? d.pushOutbox.enqueue(d.db, user.id, signInNoticePush(notice)).catch(failed('push')) : null,
    ]);
  }

  /**
   * The holder's "this was not me": 404 NOT_ME_TOKEN_INVALID for a token that names nothing,
   * 409 NOT_ME_TOKEN_USED once used, 410 NOT_ME_TOKEN_EXPIRED past RISK_NOT_ME_DAYS. The token is
   * found by its keyed hash (an index lookup reveals nothing about the token itself) and then
   * compared in constant time; its reservation is the first write, so a burst does the work once.
   */
  async notMe(token: string, ctx: MfaContext): Promise<NotMeAnswer> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const hash = d.tokenHash.hex(token);
    const out = await d.db.transaction().execute(async (trx) => {
      const notice = await this.store.reserve(trx, hash, now);
      if (!notice || notice.token_hash === null || !safeEqual(notice.token_hash, hash)) return undefined;
      const user = (await d.users.findById(notice.user_id, trx))!;
      await setSecurityLock(trx, user.id, now);
      const ended = await d.sessions.endAllForUser(trx, user.id, 'reported_not_me');
      await d.audit.record({
        ...auditContext(ctx), eventType: 'SIGN_IN_REPORTED_NOT_ME', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { notice_id: notice.id, reported_audit_id: notice.audit_id, reported_at: new Date(notice.occurred_at).toISOString(), country: notice.country, sessions_ended: ended.length, account_locked: true },
      }, trx);
      await d.alerts.raise(trx, {
        rule: 'not_me', severity: 'critical', userId: user.uuid, auditId: notice.audit_id, channel: notice.channel, ipHash: null,
        location: notice.country === null ? null : { country: notice.country, ...(notice.city === null ? {} : { city: notice.city }) },
        score: notice.score, indicators: [], dedupeKey: `not_me:${notice.id}`,
      });
      return { user, ended };
    });
    if (!out) throw await this.refusal(hash, now);
    await d.sessions.announce(out.ended);
    d.log.warn({ user_id: out.user.uuid, sessions_ended: out.ended.length }, 'a sign-in was reported as not the account holder\'s: every session ended, the account locked');
    return { reported: true, sessions_ended: out.ended.length, account_locked: true, recover_path: RECOVER_PATH };
  }

  private async refusal(hash: string, now: Date): Promise<Error> {
    const row = await this.store.byToken(hash);
    if (!row) return E.NOT_ME_TOKEN_INVALID();
    if (row.used_at !== null) return E.NOT_ME_TOKEN_USED({ used_at: new Date(row.used_at).toISOString() });
    return new Date(row.expires_at).getTime() <= now.getTime() ? E.NOT_ME_TOKEN_EXPIRED({ expired_at: new Date(row.expires_at).toISOString() }) : E.NOT_ME_TOKEN_INVALID();
  }

  /** An administrator lifts the lock; audited ACCOUNT_SECURITY_UNLOCKED. Returns when it had been set (null: it was not locked). */
  async unlock(userId: number, user: { uuid: string; username: string }, actor: { uuid: string | null; username: string | null }, ctx: AuditContext): Promise<Date | null> {
    const d = this.deps;
    return d.db.transaction().execute(async (trx) => {
      const was = await clearSecurityLock(trx, userId);
      if (was !== null) {
        await d.audit.record({
          ...ctx, eventType: 'ACCOUNT_SECURITY_UNLOCKED', status: 'SUCCESS', userId: user.uuid, username: user.username,
          details: { by: 'administrator', unlocked_by: actor.username, unlocked_by_id: actor.uuid, locked_at: was.toISOString() },
        }, trx);
      }
      return was;
    });
  }

  /** Deletes the notices whose link expired (the clean-up job). */
  purge(): Promise<number> {
    return this.store.purge(new Date(this.deps.clock.now()));
  }

  /** Resolves once every notice being sent has been. */
  settled(): Promise<void> {
    return this.deps.background.settled();
  }
}
