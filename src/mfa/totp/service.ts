/**
 * TOTP enrolment and verification, with backup codes (issue 4 section 2; SPEC "Second factors").
 *
 * Every check of a code first reserves an attempt (`MfaAttempts.reserve`, shared by TOTP and
 * backup codes), so a burst of parallel guesses cannot buy more than `MFA_MAX_FAILURES` tries;
 * a success clears the count. A TOTP code is accepted by one conditional UPDATE of the last
 * used step, which makes it single use across every node (RFC 6238 5.2).
 */
import { ENCRYPTED_COLUMNS } from '../../platform/crypto/columns.js';
import type { Db } from '../../platform/db/database.js';
import { retryLater, type ErrorFactory } from '../../platform/errors.js';
import { secondFactorLimit } from '../attempts.js';
import type { UserRow } from '../../users/store.js';
import type { MfaContext } from '../challenge.js';
import type { MfaDeps } from '../deps.js';
import { MfaErrors } from '../errors.js';
import { BackupCodes } from './backup-codes.js';
import { TotpErrors } from './errors.js';
import { consumeStep, findTotp, writePending, type TotpFactor } from './store.js';
import { newSecret, otpauthUri, TOTP_DEFAULTS, verifyCode } from './totp.js';

const SECRET_CONTEXT = ENCRYPTED_COLUMNS.totpSecret.context;

/** No account has this id: a decoy's lookup runs against it and finds nothing. */
const NO_USER = 0;

/** What setup shows once: the secret to type in, or the URI and its QR code to scan. */
export interface TotpSetup {
  secret: string;
  otpauth_uri: string;
  qr_code: string;
  algorithm: 'SHA1' | 'SHA256';
  digits: number;
  period: number;
}

export class TotpService {
  private readonly backup: BackupCodes;

  constructor(private readonly deps: MfaDeps) {
    this.backup = new BackupCodes(deps.codeHasher);
  }

  /** Writes a new pending secret (replacing an unconfirmed one); 409 when TOTP is enrolled. */
  async setup(user: UserRow): Promise<TotpSetup> {
    const d = this.deps;
    const algorithm = d.config.mfa.totpAlgorithm;
    const secret = newSecret(algorithm);
    const written = await writePending(d.db, user.id, d.secretCipher.encrypt(secret, SECRET_CONTEXT), algorithm, new Date(d.clock.now()));
    if (!written) throw TotpErrors.TOTP_ALREADY_ENROLLED();
    const uri = otpauthUri(secret, d.config.mfa.totpIssuer, user.username, { algorithm });
    const { default: QRCode } = await import('qrcode'); // loaded on first use: about 10 MiB a server at rest need not hold
    const qr = await QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', type: 'image/png', margin: 4, scale: 6 });
    return { secret, otpauth_uri: uri, qr_code: qr, algorithm, digits: TOTP_DEFAULTS.digits, period: TOTP_DEFAULTS.period };
  }

  /** How many unused backup codes the user has (0 without TOTP). */
  async backupCodesLeft(user: UserRow): Promise<number> {
    return this.backup.remaining(this.deps.db, user.id);
  }

  /** Confirms the pending secret with a valid code: TOTP becomes active; returns 10 new backup codes. */
  async enrol(user: UserRow, code: string, ctx: MfaContext): Promise<string[]> {
    const d = this.deps;
    const factor = await findTotp(d.db, user.id);
    if (factor?.status === 'active') throw TotpErrors.TOTP_ALREADY_ENROLLED();
    if (!factor) throw TotpErrors.TOTP_SETUP_NOT_STARTED();
    return this.attempt(user, ctx, 'totp', TotpErrors.TOTP_INVALID, () => d.db.transaction().execute(async (trx) => {
      if (!(await this.accept(trx, user.id, factor, code))) return null;
      const now = new Date(d.clock.now());
      await d.factors.activate(trx, user, 'totp', now);
      const codes = await this.backup.replace(trx, user.id, now);
      await d.challenges.audit('MFA_ENROLLED', 'SUCCESS', user, ctx, 'totp', { algorithm: factor.algorithm, backup_codes_issued: codes.length }, trx);
      return codes;
    }));
  }

  /** Checks a code of the enrolled TOTP; `signin` is audited MFA_VERIFIED (step-up audits itself). */
  async verify(user: UserRow, code: string, ctx: MfaContext, purpose: 'signin' | 'stepup' | 'backup_codes'): Promise<void> {
    const d = this.deps;
    const factor = await this.active(user);
    await this.attempt(user, ctx, 'totp', TotpErrors.TOTP_INVALID, async () => ((await this.accept(d.db, user.id, factor, code)) ? true : null));
    if (purpose === 'signin') await d.challenges.audit('MFA_VERIFIED', 'SUCCESS', user, ctx, 'totp', { purpose });
  }

  /** Spends one backup code; the count left goes to the audit trail only. */
  async useBackupCode(user: UserRow, code: string, ctx: MfaContext): Promise<void> {
    const d = this.deps;
    await this.active(user); // backup codes ride on an enrolled TOTP
    await this.attempt(user, ctx, 'backup_code', TotpErrors.BACKUP_CODE_INVALID, () => d.db.transaction().execute(async (trx) => {
      if (!(await this.backup.use(trx, user.id, code, new Date(d.clock.now())))) return null;
      const remaining = await this.backup.remaining(trx, user.id);
      await d.challenges.audit('BACKUP_CODE_USED', 'SUCCESS', user, ctx, 'backup_code', { remaining_backup_codes: remaining }, trx);
      return true;
    }));
  }

  /**
   * Account recovery (src/recovery): whether an authenticator or a backup code is right, with
   * sign-in's own verification (a code's step used once; a backup code spent and audited
   * BACKUP_CODE_USED). Nothing is counted here: recovery counts these guesses on a counter of its
   * own with sign-in's limits (a stranger who starts a recovery must not lock the owner's second
   * factor at sign-in). No TOTP enrolled, or no `user` (a decoy): the same lookup, then false.
   */
  async matchesForRecovery(user: UserRow | undefined, method: 'totp' | 'backup_code', code: string, ctx: MfaContext): Promise<boolean> {
    const d = this.deps;
    const factor = await findTotp(d.db, user?.id ?? NO_USER);
    if (!user || factor?.status !== 'active') return false;
    if (method === 'totp') return this.accept(d.db, user.id, factor, code);
    return d.db.transaction().execute(async (trx) => {
      if (!(await this.backup.use(trx, user.id, code, new Date(d.clock.now())))) return false;
      const remaining = await this.backup.remaining(trx, user.id);
      await d.challenges.audit('BACKUP_CODE_USED', 'SUCCESS', user, ctx, 'backup_code', { remaining_backup_codes: remaining, purpose: 'recovery' }, trx);
      return true;
    });
  }

  /** A new set of backup codes for a current TOTP code; the old set stops working. */
  async regenerateBackupCodes(user: UserRow, code: string, ctx: MfaContext): Promise<string[]> {
    const d = this.deps;
    await this.verify(user, code, ctx, 'backup_codes');
    return d.db.transaction().execute(async (trx) => {
      const codes = await this.backup.replace(trx, user.id, new Date(d.clock.now()));
      await d.challenges.audit('BACKUP_CODES_REGENERATED', 'SUCCESS', user, ctx, 'totp', { backup_codes_issued: codes.length }, trx);
      return codes;
    });
  }

  private async active(user: UserRow): Promise<TotpFactor> {
    const factor = await findTotp(this.deps.db, user.id);
    if (factor?.status !== 'active') throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method: 'totp' });
    return factor;
  }

  /** True when `code` matches inside the window and its step was not used before (then it is used now). */
  private async accept(db: Db, userId: number, factor: TotpFactor, code: string): Promise<boolean> {
    const d = this.deps;
    const secret = d.secretCipher.decrypt(factor.secretEnc, SECRET_CONTEXT);
    const step = verifyCode(secret, code, d.clock.now(), d.config.mfa.totpWindow, { algorithm: factor.algorithm });
    return step !== null && consumeStep(db, userId, factor, step);
  }

  /**
   * Reserves an attempt, then runs `check` (null: the code was wrong). A refused reservation is
   * 429 MFA_LOCKED; the failure that reaches the limit is audited MFA_LOCKED.
   */
  private async attempt<T>(user: UserRow, ctx: MfaContext, method: string, invalid: ErrorFactory, check: () => Promise<T | null>): Promise<T> {
    const d = this.deps;
    const limit = secondFactorLimit(d.config);
    const reservation = await d.attempts.reserve(user.id, 'second_factor', limit);
    if (!reservation.ok) {
      const locked = retryLater(MfaErrors.MFA_LOCKED, reservation.retryAfterSec);
      await d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, method, { reason: 'locked', ...locked.details });
      throw locked;
    }
    const result = await check();
    if (result !== null) {
      await d.attempts.clear(user.id, 'second_factor');
      return result;
    }
    await d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, method, { reason: 'invalid_code', failed_count: reservation.failedCount });
    if (reservation.failedCount >= limit.max) {
      await d.challenges.audit('MFA_LOCKED', 'SUCCESS', user, ctx, method, { locked_minutes: limit.lockMinutes });
    }
    throw invalid();
  }
}
