/**
 * Which second factors a user has enrolled, and which of them can finish a sign-in right now.
 * A factor is enrolled when its row in `mfa_factors` is `active`: TOTP after the first valid
 * code, email, SMS and push after a code sent to the account's address (push: its active mobile
 * devices) was entered back. Security
 * questions are never a sign-in factor (docs/decisions.md): they serve recovery and step-up.
 */
import type { AuditLog } from '../audit/service.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import type { MfaMethod, OtpMethod } from '../platform/db/schema.js';
import type { Mailer } from '../mail/mailer.js';
import { removePushApproval } from '../push-approval/store.js';
import type { UserRow } from '../users/store.js';
import type { PushCodeChannel } from './otp/push-channel.js';

/** What a 2FA_REQUIRED challenge may offer; `backup_code` rides on an active TOTP. */
export type SignInMethod = MfaMethod | 'backup_code';

/** Whether one-time codes can be delivered by a method at all (a transport, or the development outbox). */
export function otpAvailable(config: Pick<Config, 'mfa' | 'sms'>, mailer: Pick<Mailer, 'configured'>, method: OtpMethod, push?: Pick<PushCodeChannel, 'configured'>): boolean {
  if (method === 'push') return push?.configured ?? false;
  if (method === 'email') return mailer.configured || config.mfa.devOutbox;
  return config.sms.url !== undefined || config.mfa.devOutbox;
}

export class FactorStore {
  constructor(private readonly deps: { db: Db; config: Pick<Config, 'mfa' | 'sms'>; mailer: Pick<Mailer, 'configured'>; audit: AuditLog; pushCodes?: PushCodeChannel }) {}

  /** Enrolled (active) factors. */
  async active(userId: number, trx: Db = this.deps.db): Promise<MfaMethod[]> {
    const rows = await trx.selectFrom('mfa_factors').select('method').where('user_id', '=', userId).where('status', '=', 'active').orderBy('method').execute();
    return rows.map((r) => r.method);
  }

  /**
   * The methods a sign-in challenge offers: each enrolled factor that can be used now (an email
   * factor needs an address on the account and a way to deliver), plus `backup_code` while an
   * active TOTP has unused backup codes.
   */
  async signInMethods(user: UserRow, enrolled: readonly MfaMethod[]): Promise<SignInMethod[]> {
    const out: SignInMethod[] = [];
    for (const method of enrolled) {
      if (method === 'totp') {
        out.push('totp');
        const unused = await this.deps.db.selectFrom('mfa_backup_codes').select('id').where('user_id', '=', user.id).where('used_at', 'is', null).limit(1).executeTakeFirst();
        if (unused) out.push('backup_code');
      } else if (method === 'passkey') {
        out.push('passkey'); // active while the user has a passkey (src/passkeys): nothing to deliver
      } else if (method === 'push_approval') {
        // Offered while push can be sent and the enrolled phone's device token is active (src/push-approval).
        if ((this.deps.pushCodes?.configured ?? false) && await this.approvalDeviceActive(user.id)) out.push('push_approval');
      } else if (await this.deliverable(user, method)) {
        out.push(method);
      }
    }
    return out;
  }

  /** Whether the user's confirmed push-approval key (src/push-approval) is bound to a device token that is still active. */
  private async approvalDeviceActive(userId: number): Promise<boolean> {
    const row = await this.deps.db.selectFrom('push_approval_keys as k')
      .innerJoin('device_tokens as d', (j) => j.onRef('d.id', '=', 'k.device_token_id').onRef('d.user_id', '=', 'k.user_id'))
      .select('k.id').where('k.user_id', '=', userId).where('k.confirmed_at', 'is not', null).where('d.is_active', '=', true).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Factors the user could enrol now (the setup choices MFA_SETUP_INCOMPLETE lists). A passkey
   * needs nothing delivered (the relying party is always configured): it is always one.
   */
  async enrollable(user: UserRow): Promise<MfaMethod[]> {
    const out: MfaMethod[] = ['totp'];
    for (const m of ['email', 'sms', 'push'] as const) if (await this.deliverable(user, m, 'enrol')) out.push(m);
    out.push('passkey');
    return out;
  }

  /**
   * Whether a code can reach the user by `method` now: an address and a way to deliver. Push,
   * once enrolled (`use`), needs the bound code device active; to enrol, any active mobile token.
   */
  async deliverable(user: UserRow, method: OtpMethod, purpose: 'use' | 'enrol' = 'use'): Promise<boolean> {
    if (!otpAvailable(this.deps.config, this.deps.mailer, method, this.deps.pushCodes)) return false;
    if (method === 'push') {
      const push = this.deps.pushCodes!;
      return purpose === 'use' ? (await push.codeDevice(user.id)) !== null : (await push.enrolmentDevice(user.id)) !== null;
    }
    const address = method === 'email' ? user.email : user.phone;
    return address !== null && address !== '';
  }

  /**
   * Marks a factor enrolled (a TOTP row written at setup keeps its secret), and completes an
   * approved MFA reset of the user: enrolling again is what ends that workflow.
   */
  async activate(trx: Db, user: Pick<UserRow, 'id' | 'uuid' | 'username'>, method: MfaMethod, now: Date): Promise<void> {
    await trx.insertInto('mfa_factors')
      .values({ user_id: user.id, method, status: 'active', secret_enc: null, algorithm: null, last_used_step: null, created_at: now, confirmed_at: now })
      .onConflict((oc) => oc.columns(['user_id', 'method']).doUpdateSet({ status: 'active', confirmed_at: now }))
      .execute();
    const completed = await trx.updateTable('mfa_reset_requests').set({ status: 'completed', completed_at: now })
      .where('user_id', '=', user.id).where('status', '=', 'approved').returning('id').execute();
    for (const r of completed) {
      await this.deps.audit.record({ eventType: 'MFA_RESET_COMPLETED', status: 'SUCCESS', userId: user.uuid, username: user.username, mfaMethod: method, details: { request_id: r.id } }, trx);
    }
  }

  /** Removes every second factor and backup code of a user (an approved MFA reset). */
  async removeAll(trx: Db, userId: number, now: Date): Promise<void> {
    await trx.deleteFrom('mfa_factors').where('user_id', '=', userId).execute();
    // A code sent just before must not finish a sign-in with a factor that no longer exists.
    await trx.updateTable('mfa_otp_codes').set({ superseded_at: now }).where('user_id', '=', userId).where('consumed_at', 'is', null).where('superseded_at', 'is', null).execute();
    await trx.deleteFrom('mfa_backup_codes').where('user_id', '=', userId).execute();
    await this.deps.pushCodes?.unbind(trx, userId); // a lost phone must not come back as the code device
    await trx.deleteFrom('passkeys').where('user_id', '=', userId).execute(); // a lost device's passkey must not sign in on its own
    await removePushApproval(trx, userId, now); // nor a lost phone approve, nor an approval given before finish a sign-in
    await trx.deleteFrom('mfa_attempts').where('user_id', '=', userId).where('factor', '=', 'second_factor').execute();
  }
}
