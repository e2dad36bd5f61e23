/**
 * The development push outbox: the push provider outside production when none is configured
 * (no PUSH_PROJECT_ID / PUSH_CREDENTIALS_PATH; PUSH_DEV_OUTBOX, on by default there). Every
 * message is accepted and written to the log, so a developer sees what a phone would show,
 * through the same queue, worker, templates and audit as with Firebase; tests read `messages`.
 * Refused in production by the configuration, so a message never ends up in a production log.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { maskToken } from '../devices/store.js';
import { OUTBOX_SIZE } from '../mfa/otp/outbox.js';
import { BoundedList } from '../platform/bounded-list.js';
import type { PushMessage, PushProvider, PushResult } from './fcm.js';

/** A message as the outbox keeps it; the device token masked as the device list shows it. */
export interface DevPushMessage {
  messageId: string;
  device: string;
  title: string;
  body: string;
  data: Record<string, string>;
  at: Date;
}

export class DevPushOutbox implements PushProvider {
  /** As many as the one-time codes' outbox keeps. */
  private readonly kept = new BoundedList<DevPushMessage>(OUTBOX_SIZE);

  constructor(private readonly log: Logger) {}

  /** The last messages, oldest first. */
  get messages(): readonly DevPushMessage[] {
    return this.kept.items;
  }

  send(message: PushMessage): Promise<PushResult> {
    const kept: DevPushMessage = { messageId: `dev-outbox/${randomUUID()}`, device: maskToken(message.token), title: message.title, body: message.body, data: { ...message.data }, at: new Date() };
    this.kept.push(kept);
    // The title and body in the message text on purpose: a code sent by push is redacted as a field.
    this.log.warn(
      { outbox: true, method: 'push', device: kept.device, message_id: kept.messageId },
      `DEVELOPMENT OUTBOX (no PUSH_PROJECT_ID configured; never used in production): push to ${kept.device}: "${message.title}": ${message.body}`,
    );
    return Promise.resolve({ ok: true, messageId: kept.messageId });
  }
}
