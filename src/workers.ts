/**
 * In-process background work: the cache re-sync (the safety net under LISTEN/NOTIFY), key
 * rotation when due, expiry clean-up and password expiry warnings. Every node runs them; each
 * job is idempotent.
 */
import type { Logger } from 'pino';
import type { ExpiryWarnings } from './credentials/expiry-warnings.js';
import type { Clock } from './platform/clock.js';
import type { Db } from './platform/db/database.js';
import type { RateLimiter } from './policy/rate-limit.js';
import type { SessionService } from './sessions/service.js';
import type { Denylist } from './tokens/denylist.js';
import type { Keyring } from './tokens/keyring.js';
import type { TransportKeyring } from './transport/keys.js';

const HOUR = 3_600_000;

export class Workers {
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: { db: Db; clock: Clock; log: Logger; keyring: Keyring; transportKeys: TransportKeyring; denylist: Denylist; sessions: SessionService; rateLimiter: RateLimiter; expiryWarnings: ExpiryWarnings; mfaResets: { expireDue(): Promise<number> }; syncMs: number }) {}

  start(): void {
    this.every(this.deps.syncMs, 'cache sync', () => this.syncCaches());
    this.every(HOUR, 'key rotation', async () => {
      await this.deps.keyring.rotateIfDue();
      await this.deps.transportKeys.rotateIfDue();
    });
    this.every(10 * 60_000, 'expiry clean-up', () => this.cleanUp());
    this.every(HOUR, 'password expiry warnings', async () => {
      await this.warnExpiringPasswords();
    });
    this.every(10 * 60_000, 'MFA reset expiry', async () => {
      await this.deps.mfaResets.expireDue();
    });
  }

  /** Emails the warnings that are due (a no-op without SMTP_URL); returns how many were sent. */
  warnExpiringPasswords(): Promise<number> {
    return this.deps.expiryWarnings.run();
  }

  async syncCaches(): Promise<void> {
    await this.deps.denylist.sync();
    await this.deps.sessions.sync();
  }

  /**
   * Deletes rows whose purpose has passed: expired denylist entries, old rate windows and
   * tokens, security-question challenges, and one-time codes a week after they expired (kept
   * that long so support can see whether a code was delivered).
   */
  async cleanUp(): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.deleteFrom('mfa_otp_codes').where('expires_at', '<', new Date(now - 7 * 24 * HOUR)).execute();
    await this.deps.db.deleteFrom('security_question_challenges').where('expires_at', '<', new Date(now)).execute();
    await this.deps.db.deleteFrom('token_denylist').where('expires_at', '<', new Date(now)).execute();
    await this.deps.db.deleteFrom('refresh_tokens').where('expires_at', '<', new Date(now)).execute();
    await this.deps.rateLimiter.purge(now - HOUR);
  }

  private every(ms: number, name: string, job: () => Promise<void>): void {
    let running = false;
    const t = setInterval(() => {
      if (running) return;
      running = true;
      job()
        .catch((err: unknown) => this.deps.log.warn({ err }, `background job "${name}" failed; will retry`))
        .finally(() => {
          running = false;
        });
    }, ms);
    t.unref();
    this.timers.push(t);
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
