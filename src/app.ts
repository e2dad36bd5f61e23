/**
 * Composition root: builds every capability from the config, the secrets and an open database,
 * with explicit dependencies (no module-level singletons), and registers their routes.
 */
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import { AuditLog } from './audit/service.js';
import { adminRoutes } from './admin/routes.js';
import { credentialRoutes } from './credentials/routes.js';
import { PasswordHasher } from './credentials/hashing.js';
import { PasswordPolicy } from './credentials/policy.js';
import { CredentialService } from './credentials/service.js';
import { ExpiryWarnings } from './credentials/expiry-warnings.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import type { Clock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import { FieldCipher, Hasher, deriveKey } from './platform/crypto/field-cipher.js';
import { fieldMasters, type Secrets } from './platform/crypto/secrets.js';
import { BlindIndex } from './platform/crypto/blind-index.js';
import type { DatabaseHandle } from './platform/db/database.js';
import { createHttpApp, type App } from './platform/http/app.js';
import { opsRoutes } from './platform/http/ops-routes.js';
import { Metrics } from './platform/observability/metrics.js';
import { LoginAttempts } from './policy/lockout.js';
import { RateLimiter } from './policy/rate-limit.js';
import { createGuard, type Guard } from './sessions/guard.js';
import { SessionService } from './sessions/service.js';
import { SignInPipeline } from './signin/pipeline.js';
import { RefreshService } from './signin/refresh.js';
import { signinRoutes } from './signin/routes.js';
import { LocalStrategy } from './signin/strategies/local.js';
import { Denylist } from './tokens/denylist.js';
import { Keyring } from './tokens/keyring.js';
import { TokenService } from './tokens/service.js';
import { SensitiveColumns } from './platform/crypto/sensitive.js';
import { TransportKeyring } from './transport/keys.js';
import { createTransport, type Transport } from './transport/plugin.js';
import { transportRoutes } from './transport/routes.js';
import { UserStore } from './users/store.js';
import { Workers } from './workers.js';
import { ENCRYPTED_COLUMNS } from './platform/crypto/columns.js';
import { MfaAttempts } from './mfa/attempts.js';
import { ChallengeService, MfaGate } from './mfa/challenge.js';
import type { MfaDeps } from './mfa/deps.js';
import { FactorStore } from './mfa/factors.js';
import { OtpService } from './mfa/otp/service.js';
import { otpRoutes } from './mfa/otp/routes.js';
import { MfaResetService } from './mfa/reset/service.js';
import { mfaResetRoutes } from './mfa/reset/routes.js';
import { SecurityQuestionService } from './mfa/security-questions/service.js';
import { securityQuestionRoutes } from './mfa/security-questions/routes.js';
import { TotpService } from './mfa/totp/service.js';
import { totpRoutes } from './mfa/totp/routes.js';

export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  database: DatabaseHandle;
  metrics: Metrics;
  ipHasher: Hasher;
  keyring: Keyring;
  denylist: Denylist;
  tokens: TokenService;
  sessions: SessionService;
  users: UserStore;
  hasher: PasswordHasher;
  policy: PasswordPolicy;
  credentials: CredentialService;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  audit: AuditLog;
  pipeline: SignInPipeline;
  local: LocalStrategy;
  refresh: RefreshService;
  transportKeys: TransportKeyring;
  transport: Transport;
  sensitive: SensitiveColumns;
  guard: Guard;
  mailer: Mailer;
  expiryWarnings: ExpiryWarnings;
  workers: Workers;
  factors: FactorStore;
  mfaAttempts: MfaAttempts;
  challenges: ChallengeService;
  totp: TotpService;
  otp: OtpService;
  securityQuestions: SecurityQuestionService;
  mfaReset: MfaResetService;
}

/** `mailer` defaults to the one SMTP_URL describes (or the disabled one); tests may inject their own. */
export function createServices(deps: { config: Config; secrets: Secrets; database: DatabaseHandle; clock: Clock; log: Logger; defaultMetrics?: boolean; mailer?: Mailer }): Services {
  const { config, secrets, database, clock, log } = deps;
  const db = database.db;
  const bus = database.bus;
  const ipHasher = new Hasher(deriveKey(secrets.ipHashKey, 'ip-hash'));
  const masters = fieldMasters(secrets); // current field key first, then FIELD_ENCRYPTION_KEYS_PREVIOUS
  const keyring = new Keyring({ db, cipher: new FieldCipher(masters, ENCRYPTED_COLUMNS.jwtSecret.purpose), clock, bus, log, rotationDays: config.tokens.keyRotationDays });
  const denylist = new Denylist({ db, clock, bus });
  const tokens = new TokenService({ keyring, denylist, clock, config: config.tokens });
  const sensitive = new SensitiveColumns(new FieldCipher(masters, ENCRYPTED_COLUMNS.usersEmail.purpose), config.dbFieldEncryption);
  const sessions = new SessionService({ db, clock, bus, config: config.sessions, maxLifetimeSec: config.tokens.refreshTtlSec, sessionKeyTtlSec: config.transport.sessionKeyTtlSec, sensitive });
  const metrics = new Metrics({ defaultMetrics: deps.defaultMetrics ?? false, activeSessions: () => sessions.countActive() });
  const users = new UserStore(db, { sensitive, blindIndex: new BlindIndex(masters, 'blind-index') });
  const hasher = new PasswordHasher(config.passwords.bcryptCost);
  const policy = new PasswordPolicy(db);
  const credentials = new CredentialService({ db, hasher, policy, cipher: new FieldCipher(masters, ENCRYPTED_COLUMNS.passwordCopy.purpose), clock, users });
  const attempts = new LoginAttempts({ db, clock, hasher: new Hasher(deriveKey(secrets.fieldKey, 'login-subject')), config: config.signin });
  const rateLimiter = new RateLimiter({ db, clock });
  const audit = new AuditLog({ db, clock });
  const mailer = deps.mailer ?? createMailer(config, log);
  const factors = new FactorStore({ db, config, mailer, audit });
  const pipeline = new SignInPipeline({
    db, clock, config, users, credentials, tokens, sessions, attempts, rateLimiter, audit, metrics,
    subCipher: new FieldCipher(masters, 'token-sub'),
    secondFactor: new MfaGate({ config, tokens, factors, audit }),
  });
  const local = new LocalStrategy({ users, credentials, hasher, attempts });
  const refresh = new RefreshService({ db, clock, tokens, sessions, users, audit, pipeline });
  const transportKeys = new TransportKeyring({
    db, cipher: new FieldCipher(masters, ENCRYPTED_COLUMNS.transportKey.purpose), clock, bus, log, rotationDays: config.transport.keyRotationDays,
    graceDays: config.transport.keyGraceDays, configuredPem: secrets.transportPrivateKeyPem,
  });
  const guard = createGuard({ tokens, sessions, ipHash: (ip) => ipHasher.hex(ip) });
  const transport = createTransport({
    keys: transportKeys,
    enforce: config.transport.enforce,
    preAuthRoutes: config.transport.preAuthRoutes,
    async sessionKey(request) {
      await guard.authenticate(request);
      return sessions.sessionKey(request.auth!.session);
    },
  });
  const expiryWarnings = new ExpiryWarnings({ db, clock, users, mailer, audit, log });
  const mfaAttempts = new MfaAttempts({ db, clock });
  const challenges = new ChallengeService({ db, clock, tokens, users, pipeline, loginAttempts: attempts, sessions, audit, guard, ipHasher, denylist });
  const mfa: MfaDeps = {
    db, clock, config, log, users, tokens, denylist, sessions, audit, mailer, hasher, factors, attempts: mfaAttempts, challenges,
    secretCipher: new FieldCipher(masters, ENCRYPTED_COLUMNS.totpSecret.purpose),
    codeHasher: new Hasher(deriveKey(secrets.ipHashKey, 'mfa-codes')), // not the field key: rotating it must not void backup codes
  };
  const mfaReset = new MfaResetService(mfa);
  const workers = new Workers({ db, clock, log, keyring, transportKeys, denylist, sessions, rateLimiter, expiryWarnings, mfaResets: mfaReset, syncMs: config.sessions.cacheSyncMs });
  return {
    config, clock, log, database, metrics, ipHasher, keyring, denylist, tokens, sessions, users, hasher, policy, credentials,
    attempts, rateLimiter, audit, pipeline, local, refresh, transportKeys, transport, sensitive, guard, mailer, expiryWarnings, workers,
    factors, mfaAttempts, challenges,
    totp: new TotpService(mfa), otp: new OtpService(mfa), securityQuestions: new SecurityQuestionService(mfa), mfaReset,
  };
}

/** Loads what the caches need before the first request. */
export async function initServices(s: Services): Promise<void> {
  await s.keyring.init();
  await s.transportKeys.init();
  await s.denylist.sync();
}

export async function buildApp(s: Services): Promise<App> {
  const app = createHttpApp({ config: s.config, log: s.log, metrics: s.metrics, transport: s.transport });
  app.decorateRequest('auth', null);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Strongroom',
        version: '1.0',
        description: 'Authentication service of a banking platform. Every error has the body `{status_code, error_code, message, details}`; `error_code` is stable. Send `X-Device-Fingerprint` on every request when the token was issued with a device fingerprint.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      tags: [
        { name: 'Core authentication', description: 'Sign-in, tokens and sessions' },
        { name: 'Credential management', description: 'Passwords' },
        { name: 'MFA and 2FA', description: 'Second factors: TOTP with backup codes, one-time codes by email and SMS, MFA reset' },
        { name: 'Security questions', description: 'Knowledge-based answers for recovery and step-up (never the only factor of a sign-in)' },
        { name: 'Administration', description: 'Users and audit; each route names its permission' },
        { name: 'Operations', description: 'Health, metrics and documentation' },
      ],
    },
  });
  await app.register(opsRoutes(s));
  await app.register(signinRoutes(s));
  await app.register(credentialRoutes(s));
  await app.register(transportRoutes(s));
  await app.register(adminRoutes(s));
  await app.register(totpRoutes(s));
  await app.register(otpRoutes(s));
  await app.register(securityQuestionRoutes(s));
  await app.register(mfaResetRoutes(s));
  return app;
}
