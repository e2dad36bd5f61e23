/**
 * How a contact change reaches people, through the delivery the one-time codes use: email over
 * the shared `Mailer` (SMTP_URL), text messages through the SMS gateway (SMS_GATEWAY_URL), and,
 * with neither outside production, the development outbox (the code in the log, never in
 * production). The code goes to the NEW address; the notices to the OLD one (or, when the
 * account had none of that kind, to its other contact), by a configured transport only. Every
 * message is in the account holder's language (`users.language`; English when unset).
 */
import type { Logger } from 'pino';
import { MailDeliveryError, type Mailer } from '../../mail/mailer.js';
import { otpAvailable } from '../../mfa/factors.js';
import { DeliveryFailure, OtpDelivery } from '../../mfa/otp/delivery.js';
import type { DevOutbox } from '../../mfa/otp/outbox.js';
import { SmsDeliveryError } from '../../mfa/otp/sms-gateway.js';
import { maskDestination } from '../../mfa/otp/templates.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { UserRow } from '../../users/store.js';
import { contactCodeMail, contactCodeSms, contactNoticeMail, contactNoticeSms, type ContactKind, type ContactNotice } from './messages.js';

export interface ContactDeliveryDeps {
  config: Pick<Config, 'mfa' | 'sms'>;
  mailer: Mailer;
  log: Logger;
  clock: Clock;
}

const METHOD = { email: 'email', phone: 'sms' } as const;

const recipient = (user: UserRow) => ({ username: user.username, fullName: user.full_name, language: user.language });

export class ContactDelivery {
  private readonly texts: OtpDelivery;

  constructor(private readonly deps: ContactDeliveryDeps) {
    this.texts = new OtpDelivery(deps);
  }

  /** Codes that went to the development outbox (no transport, outside production). */
  get outbox(): DevOutbox {
    return this.texts.outbox;
  }

  /** Whether a code of this kind can be delivered at all (a transport, or the development outbox). */
  available(kind: ContactKind): boolean {
    return otpAvailable(this.deps.config, this.deps.mailer, METHOD[kind]);
  }

  /** Sends the code to the new address; rejects with `DeliveryFailure` (its `reason` safe to store and audit). */
  async sendCode(kind: ContactKind, to: string, user: UserRow, code: string, reference: string): Promise<void> {
    const { config, mailer } = this.deps;
    const minutes = Math.round(config.mfa.otpValiditySec / 60);
    const mail = kind === 'email' ? contactCodeMail(to, recipient(user), code, minutes) : null;
    const text = mail?.text ?? contactCodeSms(config.sms.sender, code, minutes, user.language);
    const transport = kind === 'email' ? mailer.configured : config.sms.url !== undefined;
    try {
      if (transport && mail) await mailer.send(mail);
      else if (transport) await this.texts.sendText(to, text, reference);
      else if (config.mfa.devOutbox) {
        this.outbox.put({ method: METHOD[kind], to, destination: maskDestination(kind, to), code, subject: mail?.subject ?? null, text, reference, at: new Date(this.deps.clock.now()) });
      } else throw new DeliveryFailure('dev_outbox', `${kind} delivery is not configured`);
    } catch (err) {
      if (err instanceof MailDeliveryError) throw new DeliveryFailure('smtp', err.reason);
      if (err instanceof SmsDeliveryError) throw new DeliveryFailure('sms_gateway', err.reason);
      throw err;
    }
  }

  /**
   * Tells the old address (or the account's other contact when it had none of this kind) by a
   * configured transport. Never rejects: a notice that cannot go is logged at warn.
   */
  async notify(user: UserRow, notice: ContactNotice, reference: string): Promise<void> {
    const { config, mailer, log } = this.deps;
    const own = notice.kind === 'email' ? user.email : user.phone;
    const email = notice.kind === 'email' ? own : own ? null : user.email;
    const phone = notice.kind === 'phone' ? own : own ? null : user.phone;
    try {
      if (email && mailer.configured) await mailer.send(contactNoticeMail(email, recipient(user), notice));
      else if (phone) await this.texts.sendText(phone, contactNoticeSms(config.sms.sender, notice, user.language), reference);
    } catch (err) {
      log.warn({ err, user_id: user.uuid, kind: notice.kind, stage: notice.stage }, 'contact change notice not delivered');
    }
  }
}
