/** What the MFA work needs of the notifications capability to send a one-time code by push. */

export type PushCodeResult = { ok: true; ref: string; devices: number } | { ok: false; reason: string };

/**
 * The push method's way out (src/notifications/push-codes.ts implements it): the `send2FA`
 * notification to the user's active mobile tokens. Never a development outbox: without a
 * provider the method is unavailable.
 */
export interface PushCodeChannel {
  readonly configured: boolean;
  /** The user's active mobile devices, described for the answer and the audit trail; null when there are none. */
  destination(userId: number): Promise<string | null>;
  send(m: { userId: number; code: string; validityMinutes: number; reference: string }): Promise<PushCodeResult>;
}
