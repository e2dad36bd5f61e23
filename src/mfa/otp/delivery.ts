/**
 * The channels a one-time code travels by: email over SMTP (the shared `Mailer`), SMS through the
 * HTTP gateway (`SmsGateway`), or, with neither configured outside production, the development
 * outbox; push through the notifications capability (`PushCodeChannel`), never the outbox. The choice follows `otpAvailable` (src/mfa/factors.ts), so what sign-in offers and
 * what can be delivered never disagree.
 */
import type { Logger } from 'pino';
import type { Mailer } from '../../mail/mailer.js';
import { MailDeliveryError } from '../../mail/mailer.js';
import type { Config } from '../../platform/config.js';
import type { Clock } from '../../platform/clock.js';
import type { OtpMethod } from '../../platform/db/schema.js';
import { otpAvailable } from '../factors.js';
import { DevOutbox } from './outbox.js';
import type { PushCodeChannel } from './push-channel.js';
import { SmsDeliveryError, SmsGateway } from './sms-gateway.js';
import { codeMail, codeSms, type OtpPurpose } from './templates.js';

export type Via = 'smtp' | 'sms_gateway' | 'push_provider' | 'dev_outbox';


export interface CodeDelivery {
  method: OtpMethod;
  userId: number;
  /** The user's language (push uses it; null: en). */
  language: 'en' | 'pt' | 'fr' | null;
  /** The real address: an email address or an E.164 number (push: the device token's uuid). */
  to: string;
  /** Its masked form (audit, log). */
  destination: string;
  code: string;
  purpose: OtpPurpose;
  /** The code's row id: SMS reference and idempotency key. */
  reference: string;
  recipient: { username: string; fullName: string | null };
}

/** The transport refused or failed; `reason` is safe to store, log and audit. */
export class DeliveryFailure extends Error {
  constructor(readonly via: Via, readonly reason: string) {
    super(`One-time code delivery by ${via} failed: ${reason}`);
    this.name = 'DeliveryFailure';
  }
}

export class OtpDelivery {
  readonly outbox: DevOutbox;
  private readonly gateway: SmsGateway | null;

  constructor(private readonly deps: { config: Pick<Config, 'mfa' | 'sms'>; mailer: Mailer; log: Logger; clock: Clock; pushCodes?: PushCodeChannel }) {
    this.outbox = new DevOutbox(deps.log);
    const sms = deps.config.sms;
    this.gateway = sms.url === undefined ? null : new SmsGateway({ ...sms, url: sms.url }, deps.log);
  }

  /** How a method's codes travel now, or null when it has no way at all (production without a transport). */
  via(method: OtpMethod): Via | null {
    const { config, mailer } = this.deps;
    if (method === 'push') return this.deps.pushCodes?.configured ? 'push_provider' : null;
    if (!otpAvailable(config, mailer, method)) return null;
    if (method === 'email') return mailer.configured ? 'smtp' : 'dev_outbox';
    return this.gateway ? 'sms_gateway' : 'dev_outbox';
  }

  /**
   * A text message that carries no code (an account recovery notice) through the SMS gateway;
   * false when none is configured (the development outbox keeps codes only). Rejects with
   * `SmsDeliveryError` when the gateway refuses it.
   */
  async sendText(to: string, message: string, reference: string): Promise<boolean> {
    if (!this.gateway) return false;
    await this.gateway.send({ to, message, reference });
    return true;
  }

  /** Sends the code; resolves with the transport's message id, rejects with `DeliveryFailure`. */
  async deliver(d: CodeDelivery): Promise<{ via: Via; ref: string }> {
    const via = this.via(d.method);
    if (via === null) throw new DeliveryFailure('dev_outbox', `${d.method} delivery is not configured`);
    const message = { code: d.code, purpose: d.purpose, method: d.method, validityMinutes: Math.round(this.deps.config.mfa.otpValiditySec / 60) };
    if (via === 'push_provider') {
      const r = await this.deps.pushCodes!.send({ userId: d.userId, language: d.language, deviceUuid: d.to, code: d.code, validityMinutes: message.validityMinutes, reference: d.reference });
      if (!r.ok) throw new DeliveryFailure(via, r.reason);
      return { via, ref: r.ref };
    }
    const mail = d.method === 'email' ? codeMail({ to: d.to, ...d.recipient }, message) : null;
    const text = mail?.text ?? codeSms(this.deps.config.sms.sender, message);
    try {
      if (via === 'dev_outbox') {
        this.outbox.put({ method: d.method, to: d.to, destination: d.destination, code: d.code, subject: mail?.subject ?? null, text, reference: d.reference, at: new Date(this.deps.clock.now()) });
        return { via, ref: `dev-outbox:${d.reference}` };
      }
      if (mail) return { via, ref: (await this.deps.mailer.send(mail)).messageId };
      return { via, ref: (await this.gateway!.send({ to: d.to, message: text, reference: d.reference })).id };
    } catch (err) {
      if (err instanceof MailDeliveryError || err instanceof SmsDeliveryError) throw new DeliveryFailure(via, err.reason);
      throw err;
    }
  }
}
