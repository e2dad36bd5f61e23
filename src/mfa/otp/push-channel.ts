/** What the MFA work needs of the notifications capability to send a one-time code by push. */
import type { Db } from '../../platform/db/database.js';

export type PushCodeResult = { ok: true; ref: string } | { ok: false; reason: string };

/** A device a code can go to, described for the answer and the audit trail (never its token). */
export interface CodeDevice {
  /** Internal: what the code's row keeps (`mfa_otp_codes.device_token_id`). */
  id: number;
  /** Its public id: what a client sends as `device_id`, and what the audit trail names. */
  uuid: string;
  description: string;
}

/**
 * The push method's way out (src/notifications/push-codes.ts implements it): the `send2FA`
 * notification to one device, the user's *code device*, bound when the user entered a code that
 * went to it (enrolment). Never a development outbox: without a provider the method is unavailable.
 */
export interface PushCodeChannel {
  readonly configured: boolean;
  /** The user's bound code device, when it is still active. */
  codeDevice(userId: number): Promise<CodeDevice | null>;
  /** A device to enrol: `deviceUuid` if it is the user's active mobile token, else their only one; null when none fits. */
  enrolmentDevice(userId: number, deviceUuid?: string): Promise<CodeDevice | 'choose' | null>;
  /** `language`: the user's (null: en). `deviceUuid`: the device's uuid (`CodeDevice.uuid`). */
  send(m: { userId: number; language: 'en' | 'pt' | 'fr' | null; deviceUuid: string; code: string; validityMinutes: number; reference: string }): Promise<PushCodeResult>;
  /** Binds the device (internal id) an enrolment code went to: its uuid; undefined when it is no longer the user's active mobile token. */
  bind(trx: Db, userId: number, deviceId: number): Promise<string | undefined>;
  /** No device of the user receives codes (the user's factors were reset). */
  unbind(trx: Db, userId: number): Promise<void>;
}
