/**
 * One-time codes by push (issue 14 section 3): the MFA work's `push` delivery method. The code
 * goes as the `send2FA` template, in the user's language, to one device: the one confirmed at
 * enrolment (`device_tokens.receives_codes`), so that a token registered with a stolen session
 * never receives codes. It is sent at once through the provider, not through the outbox: the
 * code must never rest in the database in clear (only its keyed hash does,
 * src/mfa/otp/service.ts), it is worthless after five minutes, and the user is waiting for the
 * answer. A dead token met on the way turns inactive.
 */
import type { AuditLog } from '../audit/service.js';
import type { DeviceToken, DeviceTokenStore } from '../devices/store.js';
import type { Db } from '../platform/db/database.js';
import type { CodeDevice, PushCodeChannel, PushCodeResult } from '../mfa/otp/push-channel.js';
import { retireDeadToken } from './dead-tokens.js';
import type { PushProvider } from './fcm.js';
import { SEND_2FA, type Language } from './templates/catalogue.js';
import type { TemplateService } from './templates/service.js';

export class PushCodes implements PushCodeChannel {
  constructor(private readonly deps: {
    db: Db;
    push: PushProvider | undefined;
    deviceTokens: DeviceTokenStore;
    templates: TemplateService;
    audit: AuditLog;
  }) {}

  get configured(): boolean {
    return this.deps.push !== undefined;
  }

  async codeDevice(userId: number): Promise<CodeDevice | null> {
    const d = await this.deps.deviceTokens.codeDevice(userId);
    return d ? codeDevice(d) : null;
  }

  async enrolmentDevice(userId: number, deviceUuid?: string): Promise<CodeDevice | 'choose' | null> {
    const mobile = (await this.deps.deviceTokens.list(userId, true)).filter((d) => d.platform === 'mobile');
    const d = deviceUuid === undefined ? (mobile.length > 1 ? 'choose' : mobile[0]) : mobile.find((m) => m.uuid === deviceUuid);
    if (d === 'choose') return d;
    return d ? codeDevice(d) : null;
  }

  bind(trx: Db, userId: number, deviceId: number): Promise<string | undefined> {
    return this.deps.deviceTokens.bindCodes(trx, userId, deviceId);
  }

  unbind(trx: Db, userId: number): Promise<void> {
    return this.deps.deviceTokens.unbindCodes(trx, userId);
  }

  async send(m: { userId: number; language: Language | null; deviceUuid: string; code: string; validityMinutes: number; reference: string }): Promise<PushCodeResult> {
    const push = this.deps.push;
    if (!push) return { ok: false, reason: 'push is not configured' };
    const device = await this.deps.deviceTokens.get(m.userId, m.deviceUuid);
    if (!device || !device.is_active || device.platform !== 'mobile') return { ok: false, reason: 'the device is no longer active' };
    const text = await this.deps.templates.render('push', SEND_2FA, m.language, { code: m.code, validity_minutes: String(m.validityMinutes) });
    // The template is checked when it is saved; this guards the one thing that must never happen.
    if (!text.body.includes(m.code) && !text.title.includes(m.code)) return { ok: false, reason: 'the send2FA template does not show the code' };
    const r = await push.send({ token: device.push_token, title: text.title, body: text.body, data: { kind: 'one_time_code', reference: m.reference } });
    if (r.ok) {
      await this.deps.deviceTokens.markUsed(m.userId, device.id);
      return { ok: true, ref: r.messageId };
    }
    if (r.deactivate) await retireDeadToken(this.deps, m.userId, device.id, r.reason, {}, { otp_id: m.reference });
    return { ok: false, reason: r.reason };
  }
}

function codeDevice(d: DeviceToken): CodeDevice {
  return { id: d.id, uuid: d.uuid, description: describe(d) };
}

/**
 * `mobile device "Ami…"`: enough for the owner to recognise the device among theirs, not its
 * whole name (often the owner's name) to whoever holds only the password. Never the token.
 */
export function describe(device: Pick<DeviceToken, 'device_name'>): string {
  const name = device.device_name?.trim();
  if (!name) return 'your mobile device';
  const chars = [...name];
  return `mobile device "${chars.length <= 3 ? name : `${chars.slice(0, 3).join('')}…`}"`;
}
