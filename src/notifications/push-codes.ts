/**
 * One-time codes by push (issue 14 section 3): the MFA work's `push` delivery method. The code
 * goes as the `send2FA` template, in the user's language, to each of their active mobile tokens,
 * at once through the provider, not through the outbox: the code must never rest in the
 * database in clear (only its keyed hash does, src/mfa/otp/service.ts), it is worthless after
 * five minutes, and the user is waiting for the answer. Delivered when at least one device
 * accepted it; dead tokens turn inactive on the way.
 */
import type { AuditLog } from '../audit/service.js';
import type { DeviceToken, DeviceTokenStore } from '../devices/store.js';
import type { Db } from '../platform/db/database.js';
import type { PushCodeChannel, PushCodeResult } from '../mfa/otp/push-channel.js';
import { retireDeadToken } from './dead-tokens.js';
import type { PushProvider } from './fcm.js';
import type { NotificationPreferences } from './preferences.js';
import { SEND_2FA } from './templates/catalogue.js';
import type { TemplateService } from './templates/service.js';

export class PushCodes implements PushCodeChannel {
  constructor(private readonly deps: {
    db: Db;
    push: PushProvider | undefined;
    deviceTokens: DeviceTokenStore;
    templates: TemplateService;
    preferences: NotificationPreferences;
    audit: AuditLog;
  }) {}

  get configured(): boolean {
    return this.deps.push !== undefined;
  }

  private async devices(userId: number): Promise<DeviceToken[]> {
    return (await this.deps.deviceTokens.list(userId, true)).filter((d) => d.platform === 'mobile');
  }

  async destination(userId: number): Promise<string | null> {
    return describe(await this.devices(userId));
  }

  async send(m: { userId: number; code: string; validityMinutes: number; reference: string }): Promise<PushCodeResult> {
    const push = this.deps.push;
    if (!push) return { ok: false, reason: 'push is not configured' };
    const devices = await this.devices(m.userId);
    if (devices.length === 0) return { ok: false, reason: 'no active mobile device' };
    const language = await this.deps.preferences.language(m.userId);
    const text = await this.deps.templates.render('push', SEND_2FA, language, { code: m.code, validity_minutes: String(m.validityMinutes) });
    const results = await Promise.all(devices.map(async (d) => {
      const r = await push.send({ token: d.push_token, title: text.title, body: text.body, data: { kind: 'one_time_code', reference: m.reference } });
      if (r.ok) await this.deps.deviceTokens.markUsed(m.userId, d.id);
      else if (r.deactivate) await retireDeadToken(this.deps, m.userId, d.id, r.reason, {}, { otp_id: m.reference });
      return r;
    }));
    const accepted = results.flatMap((r) => (r.ok ? [r.messageId] : []));
    if (accepted.length === 0) {
      const reasons = [...new Set(results.flatMap((r) => (r.ok ? [] : [r.reason])))];
      return { ok: false, reason: `no device accepted the code (${reasons.join(', ')})` };
    }
    return { ok: true, ref: accepted.length === 1 ? accepted[0]! : `${accepted[0]!} (+${accepted.length - 1} more)`, devices: accepted.length };
  }
}

/** `mobile device "Amina's Pixel"`, `2 mobile devices`: which devices, never a token. */
export function describe(devices: readonly Pick<DeviceToken, 'device_name'>[]): string | null {
  if (devices.length === 0) return null;
  if (devices.length > 1) return `${devices.length} mobile devices`;
  const name = devices[0]!.device_name;
  return name ? `mobile device "${name.slice(0, 40)}"` : 'your mobile device';
}
