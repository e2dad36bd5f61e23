/**
 * The development outbox: where one-time codes go when a method has no transport (no SMTP_URL
 * for email, no SMS_GATEWAY_URL for SMS) and the deployment is not production. A developer
 * reads the code from the log; tests read it from `messages`. In production the outbox is
 * off (`config.mfa.devOutbox` is false) and such a method is simply unavailable, so a code can
 * never end up in a production log.
 */
import type { Logger } from 'pino';
import { BoundedList } from '../../platform/bounded-list.js';
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
  private readonly kept = new BoundedList<OutboxMessage>(OUTBOX_SIZE);

  constructor(private readonly log: Logger) {}

  /** The last `OUTBOX_SIZE` messages, oldest first. */
  get messages(): readonly OutboxMessage[] {
    return this.kept.items;
  }

  /** The newest message sent to `to`, if any. */
  latest(to: string): OutboxMessage | undefined {
    const items = this.kept.items;
    for (let i = items.length - 1; i >= 0; i--) if (items[i]!.to === to) return items[i];
    return undefined;
  }

  put(msg: OutboxMessage): void {
    this.kept.push(msg);
    // In the message text on purpose: the logger redacts any field named `code`.
    this.log.warn(
      { outbox: true, method: msg.method, destination: msg.destination, reference: msg.reference },
      `DEVELOPMENT OUTBOX (no ${msg.method === 'email' ? 'SMTP_URL' : 'SMS_GATEWAY_URL'} configured; never used in production): one-time code ${msg.code} for ${msg.destination}`,
    );
  }
}
