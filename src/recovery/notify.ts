/**
 * Sends a recovery notice (notices.ts) to every contact of the account, in the background: the
 * email address (when mail is configured), the phone by SMS (when an SMS gateway is configured)
 * and the registered devices by push (queued in the push outbox, when push is configured). A
 * contact that cannot be reached is logged at warn, never retried here, and never delays an
 * answer (which must read alike for an account that does not exist).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Mailer } from '../mail/mailer.js';
import type { OtpService } from '../mfa/otp/service.js';
import type { PushOutbox } from '../notifications/outbox.js';
import type { PushProvider } from '../notifications/fcm.js';
import type { BackgroundWork } from '../platform/background.js';
import type { Db } from '../platform/db/database.js';
import type { UserRow } from '../users/store.js';
import type { RecoveryKind } from './matrix.js';
import { noticeMail, noticePush, noticeSms, type RecoveryNotice } from './notices.js';

export interface NotifierDeps {
  db: Db;
  background: BackgroundWork;
  log: Logger;
  mailer: Mailer;
  otp: OtpService;
  push: PushProvider | undefined;
  pushOutbox: PushOutbox;
}

export interface NoticeExtra {
  until?: Date;
  cancelLink?: string;
}

export class RecoveryNotifier {
  constructor(private readonly deps: NotifierDeps) {}

  private track(p: Promise<unknown>): void {
    this.deps.background.track(p);
  }

  /** Tells every contact of `user`; returns at once (deliveries run in the background). */
  notify(user: UserRow, notice: RecoveryNotice, kind: RecoveryKind, extra: NoticeExtra = {}): void {
    const d = this.deps;
    const input = { notice, kind, language: user.language, username: user.username, fullName: user.full_name, ...extra };
    const failed = (via: string) => (err: unknown): void => d.log.warn({ err, user_id: user.uuid, notice, via }, 'account recovery notice not delivered');
    if (d.mailer.configured && user.email) this.track(d.mailer.send(noticeMail(user.email, input)).catch(failed('email')));
    if (user.phone) this.track(d.otp.sendRecoveryNotice(user, noticeSms(input), `recovery-${notice}-${randomUUID()}`).catch(failed('sms')));
    if (d.push) this.track(d.pushOutbox.enqueue(d.db, user.id, noticePush(input)).catch(failed('push')));
  }
}
