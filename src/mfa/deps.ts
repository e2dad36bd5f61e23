/** What every second-factor service is built from (src/app.ts passes one bag; no globals). */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { Mailer } from '../mail/mailer.js';
import type { Config } from '../platform/config.js';
import type { Clock } from '../platform/clock.js';
import type { FieldCipher, Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { SessionService } from '../sessions/service.js';
import type { Denylist } from '../tokens/denylist.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import type { MfaAttempts } from './attempts.js';
import type { ChallengeService } from './challenge.js';
import type { FactorStore } from './factors.js';
import type { PushCodeChannel } from './otp/push-channel.js';

export interface MfaDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  users: UserStore;
  tokens: TokenService;
  /** Spends single-use tokens (`spend`). */
  denylist: Denylist;
  sessions: SessionService;
  audit: AuditLog;
  mailer: Mailer;
  /** bcrypt at the configured cost, off the event loop (security answers). */
  hasher: PasswordHasher;
  factors: FactorStore;
  attempts: MfaAttempts;
  challenges: ChallengeService;
  /** Encrypts TOTP secrets at rest (ENCRYPTED_COLUMNS.totpSecret), whatever DB_FIELD_ENCRYPTION says. */
  secretCipher: FieldCipher;
  /** Keyed HMAC-SHA256 for backup codes and one-time codes: a database dump alone cannot test guesses. */
  codeHasher: Hasher;
  /** One-time codes by push (the notifications capability); absent: the push method is unavailable. */
  pushCodes?: PushCodeChannel;
}
