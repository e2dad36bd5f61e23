/**
 * The development outbox: where one-time codes go when a method has no transport (no SMTP_URL
 * for email, no SMS_GATEWAY_URL for SMS) and the deployment is not production. A developer
 * reads the code from the log; tests read it from `messages`. In production the outbox is
 * off (`config.mfa.devOutbox` is false) and such a method is simply unavailable, so a code can
 * never end up in a production log.
 */
import type { Logger } from 'pino';
import type { OtpMethod } from '../../platform/db/schema.js';

/** A code as the outbox keeps it: where it went (real and masked), the code, and the message text. */
export interface OutboxMessage {
  method: OtpMethod;
  /** The real address: an email address or an E.164 number. */
  to: string;
  /** Its masked form. */
  destination: string;
  code: string;
  /** The code's row id. */
  reference: string;
  subject: string | null;
  text: string;
  at: Date;
}

/** How many messages the outbox keeps: enough for a test run, bounded for a long dev session. */
export const OUTBOX_SIZE = 50;

export class DevOutbox {
  private readonly kept: OutboxMessage[] = [];

  constructor(private readonly log: Logger) {}

  /** The last `OUTBOX_SIZE` messages, oldest first. */
  get messages(): readonly OutboxMessage[] {
    return this.kept;
  }

  /** The newest message sent to `to`, if any. */
  latest(to: string): OutboxMessage | undefined {
    for (let i = this.kept.length - 1; i >= 0; i--) if (this.kept[i]!.to === to) return this.kept[i];
    return undefined;
  }

  put(msg: OutboxMessage): void {
    this.kept.push(msg);
    if (this.kept.length > OUTBOX_SIZE) this.kept.splice(0, this.kept.length - OUTBOX_SIZE);
    // In the message text on purpose: the logger redacts any field named `code`.
    this.log.warn(
      { outbox: true, method: msg.method, destination: msg.destination, reference: msg.reference },
      `DEVELOPMENT OUTBOX (no ${msg.method === 'email' ? 'SMTP_URL' : 'SMS_GATEWAY_URL'} configured; never used in production): one-time code ${msg.code} for ${msg.destination}`,
    );
  }
}
