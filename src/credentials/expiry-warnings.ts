/**
 * SPEC "Password rules": a warning is emailed `warn_days` (password_restrictions, per account
 * class) before a password expires. Run hourly by every node (a scheduler job); each password is
 * warned about at most once:
 *
 * - A row is claimed with one atomic `UPDATE ... WHERE expiry_warned_at IS NULL ... RETURNING`
 *   before anything is sent. Two nodes running the job at once never claim the same row: the
 *   second UPDATE waits on the first's row lock, re-checks `expiry_warned_at IS NULL` and skips.
 * - When the SMTP server refuses the mail, the claim is released so the next run retries; a
 *   crash between claim and send loses that one warning rather than risking a duplicate (the
 *   sign-in response still carries `CHANGE_PASSWORD_SOON`).
 * - Users without an email address are not claimed; the sign-in response is their warning.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { Mailer } from '../mail/mailer.js';
import { maskEmail, passwordExpiryWarningMail } from '../mail/templates.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { UserStore } from '../users/store.js';

const BATCH = 100;

interface Claimed {
  id: number;
  user_id: number;
  expires_at: Date | string;
}

export class ExpiryWarnings {
  constructor(private readonly deps: { db: Db; clock: Clock; users: UserStore; mailer: Mailer; audit: AuditLog; log: Logger }) {}

  /** Sends every warning that is due; returns how many were sent. Safe to run on every node at once. */
  async run(): Promise<number> {
    if (!this.deps.mailer.configured) return 0; // claiming without sending would swallow the warnings
    let sent = 0;
    for (;;) {
      const claimed = await this.claim(BATCH);
      for (const row of claimed) if (await this.warn(row)) sent++;
      if (claimed.length < BATCH) return sent;
    }
  }

  /**
   * Claims up to `limit` passwords that expire within their class's `warn_days` and were not
   * warned about. The account class is the one CredentialService.accountClass computes.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = new Date(this.deps.clock.now());
    const r = await sql<Claimed>`
      UPDATE credentials SET expiry_warned_at = ${now}
      WHERE id IN (
        SELECT c.id FROM credentials c
        JOIN users u ON u.id = c.user_id
        JOIN password_restrictions pr ON pr.account_class = CASE
          WHEN u.is_service_account THEN 'service'
          WHEN EXISTS (SELECT 1 FROM user_roles ur JOIN roles ro ON ro.id = ur.role_id WHERE ur.user_id = u.id AND ro.name = 'admin') THEN 'admin'
          ELSE 'regular' END
        WHERE c.type = 'password' AND c.expiry_warned_at IS NULL AND NOT c.is_temporary
          AND c.expires_at IS NOT NULL AND c.expires_at > ${now}
          AND c.expires_at <= ${now}::timestamptz + make_interval(days => pr.warn_days)
          AND u.is_active AND u.email IS NOT NULL
        ORDER BY c.expires_at
        LIMIT ${limit}
        FOR UPDATE OF c SKIP LOCKED
      )
      AND expiry_warned_at IS NULL
      RETURNING id, user_id, expires_at`.execute(this.deps.db);
    return r.rows;
  }

  private async warn(row: Claimed): Promise<boolean> {
    const d = this.deps;
    const user = await d.users.findById(row.user_id);
    if (!user?.email) return false; // the email was removed since the claim: nothing to send to
    const expiresAt = new Date(row.expires_at);
    try {
      const { messageId } = await d.mailer.send(passwordExpiryWarningMail({ to: user.email, username: user.username, fullName: user.full_name }, expiresAt, d.clock.now()));
      await d.audit.record({
        eventType: 'PASSWORD_EXPIRY_WARNING', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { delivery: 'email', recipient: maskEmail(user.email), message_id: messageId, expires_at: expiresAt.toISOString() },
      });
      return true;
    } catch (err) {
      // Release the claim (only ours: a newer password has already cleared it) so a later run retries.
      await d.db.updateTable('credentials').set({ expiry_warned_at: null }).where('id', '=', row.id).where('expires_at', '=', expiresAt).execute();
      d.log.warn({ user_id: user.uuid, reason: (err as { reason?: string }).reason }, 'Password expiry warning not delivered; will retry');
      return false;
    }
  }
}
