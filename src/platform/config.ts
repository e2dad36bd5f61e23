/**
 * Configuration: the only module that reads environment variables. `loadConfig` turns an
 * environment into one typed, validated, frozen object, or throws a `ConfigError` that lists
 * every problem at once so an operator fixes them in one go.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { LDAP_POOL_SIZE, readLdapEnv, type LdapEnvSettings } from './config-ldap.js';
import { readPushEnv, type PushConfig } from './config-push.js';
import { readSamlEnv, type SamlSettings } from './config-saml.js';
import { readTracingEnv, type TracingConfig } from './config-tracing.js';
import { readRateLimits, type RateLimits } from './config-rate-limits.js';
import { readCorsEnv, type CorsConfig } from './config-cors.js';
import { readGeoEnv, type GeoConfig } from './config-geo.js';
import { readBreachedEnv, type BreachedConfig } from './config-breached.js';
import { readAlertsEnv, type AlertsConfig } from './config-alerts.js';
import { readRiskEnv, type RiskConfig } from './config-risk.js';
import { readWebAuthnEnv, type WebAuthnConfig } from './config-webauthn.js';
import { readPushApprovalAttestationEnv, type PushApprovalAttestationConfig } from './config-push-approval.js';
import { readRecoveryMatrix, type RecoveryMatrix } from '../recovery/matrix.js';

/** RECOVERY_CANCEL_URL (or `name`): an absolute http(s) address without a fragment or query (the token goes in the fragment). */
function cancelUrlOf(raw: string | undefined, problems: string[], name = 'RECOVERY_CANCEL_URL', example = 'https://auth.bank.example/recovery/cancel'): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    problems.push(`${name} must be an absolute address, such as ${example}`);
    return undefined;
  }
  if (!/^https?:$/.test(url.protocol) || url.hash !== '' || url.search !== '') {
    problems.push(`${name} must be an http(s) address without a query or fragment, such as ${example}`);
    return undefined;
  }
  return url.toString();
}

/** RECOVERY_SECURITY_QUESTIONS: 2 (the default) or 3 questions asked by an account recovery. */
function recoveryQuestionsOf(raw: string | undefined, problems: string[]): 2 | 3 {
  if (raw === undefined || raw.trim() === '') return 2;
  if (raw.trim() === '2' || raw.trim() === '3') return Number(raw.trim()) as 2 | 3;
  problems.push(`RECOVERY_SECURITY_QUESTIONS must be 2 or 3 (how many of the account's security questions a recovery asks; customers set 3), not "${raw}"`);
  return 2;
}

/**
 * MFA_REQUIRED_ROLES when unset in production: everyone who can do more than see their own
 * money must have a second factor. Development leaves it empty so a first run is short (and
 * says so at start-up). `MFA_REQUIRED_ROLES=` (empty) opts out explicitly.
 */
export const PRODUCTION_MFA_ROLES = 'admin,staff,operator,agent';

/** See Config.trustProxy. */
export type TrustProxy = false | number | readonly string[];

export type NodeEnv = 'development' | 'production' | 'test';
export type SessionMode = 'multi' | 'single';

export interface Config {
  env: NodeEnv;
  host: string;
  port: number;
  dataDir: string;
  /** Unset means the embedded PGlite database under `dataDir`. */
  databaseUrl: string | undefined;
  /** DB_PREPARED_STATEMENTS: named prepared statements on PostgreSQL (off behind a transaction-mode pooler without their support). */
  databasePreparedStatements: boolean;
  logLevel: string;
  /**
   * LOG_FORMAT: `json` (one object a line, for a collector), `pretty` (coloured lines for a
   * person), or `auto` (the default): pretty on a terminal outside production, JSON otherwise.
   */
  logFormat: 'auto' | 'json' | 'pretty';
  /** ACCESS_LOG: one info line per request (method, route, status, time, address, user; never a token or body). */
  accessLog: boolean;
  /** The OTEL_* variables: OpenTelemetry traces, off unless an exporter is configured (src/platform/config-tracing.ts). */
  tracing: TracingConfig;
  /**
   * TRUST_PROXY: which peers may tell us the client's address in X-Forwarded-For. `false`
   * believes no one (the socket's address is the client); a number believes that many hops
   * nearest to us; a list believes only peers inside those addresses or CIDRs. Never "every hop".
   */
  trustProxy: TrustProxy;
  bodyLimitBytes: number;
  /** CORS_ORIGINS and CORS_MAX_AGE_SECONDS: the web origins that may call the service from a browser (src/platform/config-cors.ts). */
  cors: CorsConfig;
  shutdownGraceMs: number;
  secrets: {
    /** 32-byte master key for field encryption and for wrapping the JWT keyring: the current one, that writes. */
    fieldKey: Buffer | undefined;
    /**
     * FIELD_ENCRYPTION_KEYS_PREVIOUS: older master keys, still readable while `rotate-field-key`
     * re-encrypts what they wrote (docs/operations.md). Empty outside a rotation.
     */
    previousFieldKeys: Buffer[];
    /** Key of the HMAC that hashes client IP addresses. */
    ipHashKey: Buffer | undefined;
    /** PEM of the RSA-2048 transport private key. */
    transportPrivateKeyPem: string | undefined;
  };
  dbFieldEncryption: boolean;
  transport: {
    /** ENFORCE_TRANSPORT_ENCRYPTION: refuse unencrypted POST, PUT and PATCH (422). */
    enforce: boolean;
    keyRotationDays: number;
    keyGraceDays: number;
    sessionKeyTtlSec: number;
    /** Routes whose bodies are encrypted to the server's RSA key; undefined means SPEC's list. */
    preAuthRoutes: string[] | undefined;
    /** TRANSPORT_REPLAY_WINDOW_SECONDS: how long an accepted pre-auth envelope is remembered and refused if sent again. */
    replayWindowSec: number;
  };
  tokens: {
    issuer: string;
    audience: string[];
    accessTtlSec: number;
    refreshTtlSec: number;
    resetTtlSec: number;
    twoFactorTtlSec: number;
    keyRotationDays: number;
    bindIp: boolean;
  };
  sessions: {
    mode: SessionMode;
    maxConcurrent: number;
    inactivitySec: number;
    /** How stale `last_activity` in the database may be before a request writes it. */
    activityWriteSec: number;
    /** Safety net: how often each node re-reads revocations in case a NOTIFY was lost. */
    cacheSyncMs: number;
  };
  /** How long records are kept before the clean-up jobs remove them. */
  retention: {
    /** AUDIT_RETENTION_MONTHS: audit entries are kept at least this many months (whole months are dropped), except under a legal hold. */
    auditMonths: number;
    /** RECORD_RETENTION_DAYS: ended sessions (with their history) and delivered or failed push messages are deleted after this many days. */
    recordDays: number;
  };
  /** Rate limits of the authentication routes, per group (src/platform/config-rate-limits.ts). */
  rateLimits: RateLimits;
  signin: {
    maxLoginAttempts: number;
    lockoutMinutes: number;
    /** SIGNIN_MAX_IN_FLIGHT_PER_IP: password checks one client address may have in flight per node. */
    maxInFlightPerIp: number;
    /** SIGNIN_MAX_QUEUED: password checks waiting for bcrypt on a node beyond which more are refused (503 SIGNIN_BUSY). */
    maxQueued: number;
  };
  passwords: {
    bcryptCost: number;
  };
  bootstrapAdmin: {
    username: string | undefined;
    password: string | undefined;
    email: string | undefined;
  };
  mfa: {
    /** MFA_REQUIRED_ROLES: users holding any of these roles must pass a second factor. */
    requiredRoles: string[];
    /** TOTP_WINDOW: steps accepted either side of the current one (SPEC: 1). */
    totpWindow: number;
    /** TOTP_ALGORITHM for new enrolments (SHA1 is what every authenticator app supports). */
    totpAlgorithm: 'SHA1' | 'SHA256';
    /** TOTP_ISSUER: the issuer shown in authenticator apps. */
    totpIssuer: string;
    otpValiditySec: number;
    otpMaxAttempts: number;
    /** Seconds between two codes for the same challenge. */
    otpResendSec: number;
    /** Codes one challenge may send in all. */
    otpMaxSends: number;
    /** Wrong TOTP or backup codes before the second factor is locked (MFA_LOCKOUT_MINUTES). */
    maxFailures: number;
    lockoutMinutes: number;
    securityQuestionAttempts: number;
    securityQuestionLockoutMinutes: number;
    /** MFA_RESET_EXPIRY_HOURS: a pending reset request not decided in this time expires. */
    resetRequestTtlHours: number;
    /** Codes go to the development outbox (the log) when no transport is configured; never in production. */
    devOutbox: boolean;
  };
  sms: {
    /** SMS_GATEWAY_URL: the HTTP gateway (docs/operations.md "SMS gateway contract"). Unset: no SMS. */
    url: string | undefined;
    /** SMS_GATEWAY_TOKEN: sent as `Authorization: Bearer`; never logged. */
    token: string | undefined;
    /** SMS_SENDER_ID: the sender name the gateway shows. */
    sender: string;
    timeoutMs: number;
  };
  mail: {
    /** SMTP_URL: `smtp://` or `smtps://`, may carry credentials (never log it). Unset: no email delivery. */
    url: string | undefined;
    /** SMTP_FROM: the From header of every message. */
    from: string;
    /**
     * SMTP_REQUIRE_TLS (default on in production): with `smtp://`, STARTTLS is required and a
     * server that does not offer it gets nothing. `smtps://` is TLS from the first byte anyway.
     */
    requireTls: boolean;
  };
  /** Where /metrics is served (docs/operations.md "Metrics"). */
  management: {
    /** MANAGEMENT_PORT: a second listener for /metrics and /health; /metrics then leaves the public port. */
    port: number | undefined;
    /** MANAGEMENT_HOST: the management listener's address (default loopback). */
    host: string;
    /** METRICS_TOKEN: `Authorization: Bearer` required on /metrics; never logged. */
    metricsToken: string | undefined;
  };
  /** LDAP sign-in (src/ldap). */
  ldap: {
    /** The LDAP_* variables: used while the database holds no LDAP configuration. Undefined: LDAP_URI and LDAP_SERVER unset. */
    env: LdapEnvSettings | undefined;
    /** LDAP_TIMEOUT_MS: the limit on connecting, on each directory operation, and on one sign-in's directory work in all. */
    timeoutMs: number;
    /** LDAP_POOL_SIZE: connections to the directory this node keeps open at most (src/ldap/pool.ts). */
    poolSize: number;
  };
  /** The push provider (src/notifications; src/platform/config-push.ts). */
  push: PushConfig;
  /** GEOIP_COUNTRY_DB, GEOIP_ASN_DB, GEOIP_CITY_DB, GEOIP_MAX_AGE_DAYS: the geolocation databases (src/geo; src/platform/config-geo.ts). */
  geo: GeoConfig;
  /** BREACHED_PASSWORDS_FILTER: the breach corpus new passwords are checked against (src/credentials/breached; src/platform/config-breached.ts). */
  breachedPasswords: BreachedConfig;
  /** SECURITY_ALERT_EMAIL, SECURITY_WEBHOOK_URL and _SECRET, ...: security alerts to the bank's security team (src/risk/alerts; src/platform/config-alerts.ts). */
  alerts: AlertsConfig;
  /** RISK_EVALUATION, RISK_WEIGHTS, RISK_MAX_TRAVEL_KMH, ...: the risk evaluation of sign-ins (src/risk; src/platform/config-risk.ts). */
  risk: RiskConfig;
  /** WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME, WEBAUTHN_ORIGINS: the relying party passkeys belong to (src/passkeys; src/platform/config-webauthn.ts). */
  webauthn: WebAuthnConfig;
  /** Sign-in approval on the enrolled phone (src/push-approval; docs/push-approval.md). */
  pushApproval: {
    /** PUSH_APPROVAL_MAX_PER_HOUR: approval requests one account may be sent in an hour (429 beyond). */
    maxPerHour: number;
    /** PUSH_APPROVAL_FRAUD_PAUSE_HOURS: how long a fraud report pauses push approval for the account (403 PUSH_APPROVAL_DENIED, reason fraud_reported). */
    fraudPauseHours: number;
    /** PUSH_APPROVAL_ATTESTATION, PUSH_APPROVAL_ANDROID_*, PUSH_APPROVAL_IOS_*, ...: the key attestation checked at enrolment (src/platform/config-push-approval.ts). */
    attestation: PushApprovalAttestationConfig;
  };
  /** The real-time channel, `GET /api/v1/ws` (src/realtime; docs/realtime.md). */
  realtime: {
    /** REALTIME_RESUME_MINUTES: how long events are kept for a client that reconnects (`resume`); older ones are deleted. */
    resumeMinutes: number;
    /** REALTIME_AUTH_TIMEOUT_SECONDS: a socket whose `auth` message has not come by then is closed (4401). */
    authTimeoutSec: number;
    /** REALTIME_HEARTBEAT_SECONDS: the server pings every socket this often; one silent for two intervals is closed (4009). */
    heartbeatSec: number;
    /** REALTIME_MAX_BUFFERED_KB (here in bytes): a socket with more than this unsent is closed (1013), not buffered further. */
    maxBufferedBytes: number;
    /** REALTIME_MAX_SOCKETS_PER_SESSION: past it, a session's oldest socket on the node is closed (4008). */
    maxSocketsPerSession: number;
    /** REALTIME_MAX_SOCKETS_PER_USER: past it, a user's new socket on the node is refused (4029): no session closes another's. */
    maxSocketsPerUser: number;
  };
  /** SAML sign-in (src/saml). */
  saml: {
    /** SAML_CONFIG_FILE and the SAML_* variables: used while the database holds no SAML configuration. Undefined: no identity provider named. */
    env: SamlSettings | undefined;
  };
  /** Self-service account recovery (src/recovery). */
  recovery: {
    /** RECOVERY_TTL_MINUTES: a workflow not completed in this time expires. */
    ttlMinutes: number;
    /** RECOVERY_PROOFS_PASSWORD, _PIN, _MFA, _DEVICE: the proofs that suffice for each lost thing (src/recovery/matrix.ts). */
    matrix: RecoveryMatrix;
    /** RECOVERY_COOLING_OFF_HOURS: how long a verified `mfa` or `device` recovery of a customer waits, its old contacts told, before it takes effect. */
    coolingOffHours: number;
    /** RECOVERY_COOLING_OFF_HOURS_STAFF: the same for an account holding any role besides `customer`. */
    coolingOffHoursStaff: number;
    /** RECOVERY_LOCK_HOURS: how long recovery stays locked for an account whose owner reported a workflow as not theirs. */
    lockHours: number;
    /** RECOVERY_SECURITY_QUESTIONS: how many of the account's security questions a workflow asks (2 or 3). */
    securityQuestions: 2 | 3;
    /**
     * RECOVERY_CANCEL_URL: the address of this service's "this was not me" page (`…/recovery/cancel`)
     * as the account holders reach it; notices carry it with a cancel token in the fragment. Unset: no link.
     */
    cancelUrl: string | undefined;
  };
  /** Erasure of accounts (src/gdpr/erasure). */
  erasure: {
    /** GDPR_ERASURE_GRACE_DAYS: days between an erasure request and the erasure, during which it can be cancelled (1 to 90; 30). */
    graceDays: number;
    /** GDPR_ERASURE_CANCEL_URL: the address of this service's cancel page (`…/gdpr/erasure/cancel`) as account holders reach it; notices carry it with a cancel token in the fragment. Unset: no link. */
    cancelUrl: string | undefined;
  };
  /** Personal-data breaches (src/gdpr/breaches). */
  breaches: {
    /** BREACH_MAX_AFFECTED: the most accounts one recorded breach may list (and notify); a broader scope is refused. */
    maxAffected: number;
  };
  /** The USSD gateways (docs/operations.md "USSD gateways"). */
  ussd: {
    /**
     * USSD_GATEWAY_KEYS: each gateway's name and the key it sends in `X-Gateway-Key`. Empty:
     * the USSD routes answer 503 USSD_NOT_CONFIGURED to every call. Never logged.
     */
    gateways: ReadonlyArray<{ readonly name: string; readonly key: string }>;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Hex when it reads as hex, else base64. */
function decodeKey(raw: string): Buffer {
  return /^[0-9a-fA-F]+$/.test(raw) && raw.length % 2 === 0 ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
}

/** Reads settings from an environment, collecting every problem (each named) instead of stopping at the first. */
export class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  str(name: string, fallback: string): string {
    const v = this.env[name];
    return v === undefined || v === '' ? fallback : v;
  }

  /** The value as set, the empty string included (for variables where empty means "none"). */
  raw(name: string): string | undefined {
    return this.env[name];
  }

  opt(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.opt(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.opt(name);
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    this.problems.push(`${name} must be 1 or 0 (got "${raw}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.opt(name);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  /** A key given as base64 or hex; at least `minBytes` long (256 bits for our keys). */
  key(name: string, minBytes: number): Buffer | undefined {
    const raw = this.opt(name);
    if (raw === undefined) return undefined;
    const buf = decodeKey(raw);
    if (buf.length < minBytes) {
      this.problems.push(`${name} must hold at least ${minBytes} bytes of key material, base64 or hex (got ${buf.length})`);
      return undefined;
    }
    return buf;
  }

  /** A comma-separated list of keys, each as `key` reads it; empty when unset. */
  keys(name: string, minBytes: number): Buffer[] {
    const raw = this.opt(name);
    if (raw === undefined) return [];
    const out: Buffer[] = [];
    raw.split(',').map((k) => k.trim()).forEach((k, i) => {
      if (k === '') return;
      const buf = decodeKey(k);
      if (buf.length < minBytes) this.problems.push(`${name}: key ${i + 1} must hold at least ${minBytes} bytes of key material, base64 or hex (got ${buf.length})`);
      else out.push(buf);
    });
    return out;
  }
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * One TRUST_PROXY entry: an IPv4 or IPv6 address (no zone id), a CIDR block with a prefix of 1
 * or more (a /0 would trust every peer: TRUST_PROXY=true by another name), or one of
 * proxy-addr's range names. (Access policies have their own CIDR compiler in
 * src/access/rules/ip.ts; configuration sits below the capabilities and needs only this check.)
 */
function proxyEntryValid(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [addr = '', prefix, ...rest] = entry.split('/');
  const family = isIP(addr);
  if (family === 0 || rest.length > 0 || addr.includes('%')) return false;
  if (prefix === undefined) return true;
  return /^[1-9]\d{0,2}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: unset or 0 trusts no proxy; a whole number is the count of proxies in front
 * (each appends the address it saw); otherwise a comma-separated list of the proxies' addresses
 * or CIDRs. `true` is refused: believing every hop lets any client choose its own address.
 */
function trustProxy(r: Reader): TrustProxy {
  const raw = r.opt('TRUST_PROXY')?.trim();
  if (raw === undefined || ['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase())) {
    r.problems.push('TRUST_PROXY=true would believe every X-Forwarded-For entry, so any client could choose the address that IP policies and rate limits see. Give the number of proxies in front (e.g. TRUST_PROXY=1) or their addresses (e.g. TRUST_PROXY=10.0.0.0/8)');
    return false;
  }
  if (/^\d+$/.test(raw)) return r.int('TRUST_PROXY', 0, 0, 10) || false;
  const entries = raw.split(',').map((e) => e.trim()).filter((e) => e !== '');
  const bad = entries.filter((e) => !proxyEntryValid(e));
  if (bad.length > 0 || entries.length === 0) {
    r.problems.push(`TRUST_PROXY must be 0, a number of proxies (1 to 10), or a comma-separated list of proxy addresses or CIDRs (or loopback, linklocal, uniquelocal); not ${bad.map((b) => `"${b}"`).join(', ') || 'empty'}`);
    return false;
  }
  return Object.freeze(entries);
}

/** The URL without its credentials, for messages and logs. */
export function redactUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

/** SMTP_URL: an smtp:// or smtps:// URL with a host. Never echoes credentials in a problem. */
function smtpUrl(r: Reader): string | undefined {
  const raw = r.opt('SMTP_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    r.problems.push('SMTP_URL must be a URL such as smtp://mail.bank.example:587 or smtps://user:password@mail.bank.example:465 (the value given does not parse)');
    return undefined;
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    r.problems.push(`SMTP_URL must use smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the first byte); got ${url.protocol}//`);
    return undefined;
  }
  if (url.hostname === '') {
    r.problems.push(`SMTP_URL must name the SMTP server's host (got "${redactUrl(url)}")`);
    return undefined;
  }
  return raw;
}

/** SMTP_FROM: one address, bare or as `Name <address>`; no line breaks (header injection). */
function smtpFrom(r: Reader): string {
  const from = r.str('SMTP_FROM', 'Strongroom <no-reply@localhost>');
  if (/[\r\n]/.test(from) || !/^(?:[^<>@]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/.test(from.trim())) {
    r.problems.push(`SMTP_FROM must be one address such as "Strongroom <no-reply@bank.example>" or no-reply@bank.example (got ${JSON.stringify(from)})`);
  }
  return from.trim();
}

/** SMS_GATEWAY_URL: http(s), with a host; https required in production. */
function smsUrl(r: Reader, production: boolean): string | undefined {
  const raw = r.opt('SMS_GATEWAY_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    r.problems.push('SMS_GATEWAY_URL must be a URL such as https://sms.bank.example/v1/messages (the value given does not parse)');
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    r.problems.push(`SMS_GATEWAY_URL must use https:// (or http:// outside production); got ${url.protocol}//`);
    return undefined;
  }
  if (production && url.protocol !== 'https:') r.problems.push('SMS_GATEWAY_URL must use https:// in production');
  if (url.username || url.password) r.problems.push('SMS_GATEWAY_URL must not carry credentials; put the token in SMS_GATEWAY_TOKEN');
  return raw;
}

/** MANAGEMENT_PORT, MANAGEMENT_HOST and METRICS_TOKEN. Never echoes the token in a problem. */
function management(r: Reader, publicPort: number): Config['management'] {
  const port = r.opt('MANAGEMENT_PORT') === undefined ? undefined : r.int('MANAGEMENT_PORT', 0, 0, 65535);
  if (port !== undefined && port !== 0 && port === publicPort) r.problems.push(`MANAGEMENT_PORT must differ from PORT (both ${port})`);
  const metricsToken = r.opt('METRICS_TOKEN');
  if (metricsToken !== undefined && !/^[\x21-\x7e]{32,}$/.test(metricsToken)) {
    r.problems.push(`METRICS_TOKEN must be at least 32 printable characters without spaces, such as the output of openssl rand -hex 32 (got ${metricsToken.length} characters)`);
  }
  return { port, host: r.str('MANAGEMENT_HOST', '127.0.0.1'), metricsToken };
}

/** Keys the gateways send: long enough not to be guessed, printable, no separator of the list. */
const GATEWAY_KEY = /^[\x21-\x2b\x2d-\x7e]{32,256}$/;
const GATEWAY_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * USSD_GATEWAY_KEYS: comma-separated `name:key` pairs, one per gateway (a name to audit and log
 * by, a key of at least 32 characters). Never echoes a key in a problem.
 */
function ussdGateways(r: Reader): Config['ussd']['gateways'] {
  const raw = r.opt('USSD_GATEWAY_KEYS');
  if (raw === undefined) return [];
  const out: Array<{ name: string; key: string }> = [];
  raw.split(',').map((e) => e.trim()).forEach((entry, i) => {
    if (entry === '') return;
    const colon = entry.indexOf(':');
    const name = colon === -1 ? '' : entry.slice(0, colon);
    const key = colon === -1 ? entry : entry.slice(colon + 1);
    if (!GATEWAY_NAME.test(name)) r.problems.push(`USSD_GATEWAY_KEYS: entry ${i + 1} must be name:key with a name of lower-case letters, digits, ".", "_" or "-" (such as ussd-safaricom:<key>)`);
    else if (!GATEWAY_KEY.test(key)) r.problems.push(`USSD_GATEWAY_KEYS: the key of gateway "${name}" must be 32 to 256 printable characters without spaces or commas, such as the output of openssl rand -hex 32 (got ${key.length} characters)`);
    else if (out.some((g) => g.name === name)) r.problems.push(`USSD_GATEWAY_KEYS: gateway "${name}" is named twice`);
    else if (out.some((g) => g.key === key)) r.problems.push(`USSD_GATEWAY_KEYS: gateway "${name}" has the key of gateway "${out.find((g) => g.key === key)!.name}"; give each gateway its own`);
    else out.push({ name, key });
  });
  return Object.freeze(out.map((g) => Object.freeze(g)));
}

/** Parses and validates the environment. Pure: reads nothing but `env`. */
export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const nodeEnv = r.oneOf<NodeEnv>('NODE_ENV', 'development', ['development', 'production', 'test']);
  const production = nodeEnv === 'production';

  const fieldKey = r.key('FIELD_ENCRYPTION_KEY', 32);
  const previousFieldKeys = r.keys('FIELD_ENCRYPTION_KEYS_PREVIOUS', 32);
  if (fieldKey && previousFieldKeys.some((k) => k.equals(fieldKey))) {
    r.problems.push('FIELD_ENCRYPTION_KEYS_PREVIOUS must not hold FIELD_ENCRYPTION_KEY: to rotate, set a new FIELD_ENCRYPTION_KEY and move the old one to FIELD_ENCRYPTION_KEYS_PREVIOUS');
  }
  const ipHashKey = r.key('IP_HASH_KEY', 32);
  let transportPrivateKeyPem = r.opt('TRANSPORT_PRIVATE_KEY');
  const transportKeyPath = r.opt('TRANSPORT_PRIVATE_KEY_PATH');
  if (transportPrivateKeyPem === undefined && transportKeyPath !== undefined) {
    transportPrivateKeyPem = `@file:${path.resolve(transportKeyPath)}`;
  }
  const accessMinutes = r.int('ACCESS_TOKEN_EXPIRE_MINUTES', 60, 1, 24 * 60);
  const refreshMinutes = r.int('REFRESH_TOKEN_EXPIRE_MINUTES', 10080, 5, 90 * 24 * 60);
  const bcryptCost = r.int('BCRYPT_COST', 12, 4, 16);
  const databaseUrl = r.opt('DATABASE_URL');
  const port = r.int('PORT', 8080, 0, 65535);

  const config: Config = {
    env: nodeEnv,
    host: r.str('HOST', '127.0.0.1'),
    port,
    dataDir: path.resolve(r.str('DATA_DIR', './data')),
    databaseUrl,
    databasePreparedStatements: r.bool('DB_PREPARED_STATEMENTS', true),
    logLevel: r.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    logFormat: r.oneOf('LOG_FORMAT', 'auto', ['auto', 'json', 'pretty'] as const),
    accessLog: r.bool('ACCESS_LOG', true),
    tracing: readTracingEnv((name) => r.opt(name), r.problems),
    trustProxy: trustProxy(r),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    cors: readCorsEnv((name) => r.opt(name), r.problems, production, (name, fallback, min, max) => r.int(name, fallback, min, max)),
    shutdownGraceMs: r.int('SHUTDOWN_GRACE_MS', 10_000, 0, 120_000),
    secrets: { fieldKey, previousFieldKeys, ipHashKey, transportPrivateKeyPem },
    dbFieldEncryption: r.bool('DB_FIELD_ENCRYPTION', true),
    transport: {
      enforce: r.bool('ENFORCE_TRANSPORT_ENCRYPTION', production),
      keyRotationDays: r.int('TRANSPORT_KEY_ROTATION_DAYS', 90, 1, 365),
      keyGraceDays: r.int('TRANSPORT_KEY_GRACE_DAYS', 7, 0, 90),
      sessionKeyTtlSec: r.int('SESSION_KEY_TTL_HOURS', 24, 1, 24 * 30) * 3600,
      preAuthRoutes: r.opt('TRANSPORT_PREAUTH_ROUTES')?.split(',').map((x) => x.trim()).filter(Boolean),
      replayWindowSec: r.int('TRANSPORT_REPLAY_WINDOW_SECONDS', 300, 1, 86_400),
    },
    tokens: {
      issuer: r.str('JWT_ISSUER', 'strongroom'),
      audience: r.str('JWT_AUDIENCE', 'strongroom').split(',').map((s) => s.trim()).filter(Boolean),
      accessTtlSec: accessMinutes * 60,
      refreshTtlSec: refreshMinutes * 60,
      resetTtlSec: r.int('RESET_TOKEN_EXPIRE_MINUTES', 10, 1, 60) * 60,
      twoFactorTtlSec: r.int('TWO_FACTOR_TOKEN_EXPIRE_MINUTES', 5, 1, 30) * 60,
      keyRotationDays: r.int('JWT_KEY_ROTATION_DAYS', 90, 1, 365),
      bindIp: r.bool('TOKEN_BIND_IP', false),
    },
    sessions: {
      mode: r.oneOf<SessionMode>('SESSION_MODE', 'multi', ['multi', 'single']),
      maxConcurrent: r.int('MAX_CONCURRENT_SESSIONS', 3, 1, 100),
      inactivitySec: r.int('SESSION_INACTIVITY_MINUTES', 15, 1, 24 * 60) * 60,
      activityWriteSec: r.int('SESSION_ACTIVITY_WRITE_SECONDS', 60, 1, 600),
      cacheSyncMs: r.int('CACHE_SYNC_MS', 2000, 100, 60_000),
    },
    retention: {
      auditMonths: r.int('AUDIT_RETENTION_MONTHS', 84, 1, 1200),
      recordDays: r.int('RECORD_RETENTION_DAYS', 90, 1, 3650),
    },
    rateLimits: readRateLimits((name) => r.opt(name), r.opt('SIGNIN_RATE_LIMIT_PER_MINUTE') === undefined ? undefined : r.int('SIGNIN_RATE_LIMIT_PER_MINUTE', 30, 1, 100_000), r.problems),
    signin: {
      maxLoginAttempts: r.int('MAX_LOGIN_ATTEMPTS', 5, 1, 100),
      lockoutMinutes: r.int('ACCOUNT_LOCKOUT_MINUTES', 15, 1, 24 * 60),
      maxInFlightPerIp: r.int('SIGNIN_MAX_IN_FLIGHT_PER_IP', 10, 1, 10_000),
      maxQueued: r.int('SIGNIN_MAX_QUEUED', 100, 1, 100_000),
    },
    passwords: { bcryptCost },
    bootstrapAdmin: {
      username: r.opt('BOOTSTRAP_ADMIN_USERNAME'),
      password: r.opt('BOOTSTRAP_ADMIN_PASSWORD'),
      email: r.opt('BOOTSTRAP_ADMIN_EMAIL'),
    },
    mfa: {
      requiredRoles: (r.raw('MFA_REQUIRED_ROLES') ?? (production ? PRODUCTION_MFA_ROLES : '')).split(',').map((x) => x.trim()).filter(Boolean),
      totpWindow: r.int('TOTP_WINDOW', 1, 0, 5),
      totpAlgorithm: r.oneOf('TOTP_ALGORITHM', 'SHA1', ['SHA1', 'SHA256'] as const),
      totpIssuer: r.str('TOTP_ISSUER', 'Strongroom'),
      otpValiditySec: r.int('OTP_VALIDITY_MINUTES', 5, 1, 30) * 60,
      otpMaxAttempts: r.int('OTP_MAX_ATTEMPTS', 3, 1, 10),
      otpResendSec: r.int('OTP_RESEND_SECONDS', 60, 0, 3600),
      otpMaxSends: r.int('OTP_MAX_SENDS', 5, 1, 20),
      maxFailures: r.int('MFA_MAX_FAILURES', 5, 1, 100),
      lockoutMinutes: r.int('MFA_LOCKOUT_MINUTES', 15, 1, 24 * 60),
      securityQuestionAttempts: r.int('SECURITY_QUESTION_ATTEMPTS', 3, 1, 10),
      securityQuestionLockoutMinutes: r.int('SECURITY_QUESTION_LOCKOUT_MINUTES', 30, 1, 7 * 24 * 60),
      resetRequestTtlHours: r.int('MFA_RESET_EXPIRY_HOURS', 72, 1, 30 * 24),
      devOutbox: !production,
    },
    sms: {
      url: smsUrl(r, production),
      token: r.opt('SMS_GATEWAY_TOKEN'),
      sender: r.str('SMS_SENDER_ID', 'Strongroom'),
      timeoutMs: r.int('SMS_GATEWAY_TIMEOUT_MS', 10_000, 100, 60_000),
    },
    mail: { url: smtpUrl(r), from: smtpFrom(r), requireTls: r.bool('SMTP_REQUIRE_TLS', production) },
    management: management(r, port),
    ussd: { gateways: ussdGateways(r) },
    recovery: {
      ttlMinutes: r.int('RECOVERY_TTL_MINUTES', 30, 5, 24 * 60), matrix: readRecoveryMatrix((name) => r.opt(name), r.problems),
      coolingOffHours: r.int('RECOVERY_COOLING_OFF_HOURS', 24, 1, 30 * 24), coolingOffHoursStaff: r.int('RECOVERY_COOLING_OFF_HOURS_STAFF', 72, 1, 30 * 24),
      lockHours: r.int('RECOVERY_LOCK_HOURS', 24, 1, 30 * 24), cancelUrl: cancelUrlOf(r.opt('RECOVERY_CANCEL_URL'), r.problems),
      securityQuestions: recoveryQuestionsOf(r.opt('RECOVERY_SECURITY_QUESTIONS'), r.problems),
    },
    breaches: { maxAffected: r.int('BREACH_MAX_AFFECTED', 100_000, 1, 1_000_000) },
    erasure: {
      graceDays: r.int('GDPR_ERASURE_GRACE_DAYS', 30, 1, 90),
      cancelUrl: cancelUrlOf(r.opt('GDPR_ERASURE_CANCEL_URL'), r.problems, 'GDPR_ERASURE_CANCEL_URL', 'https://auth.bank.example/gdpr/erasure/cancel'),
    },
    ldap: { env: readLdapEnv((name) => r.opt(name), r.problems, production), timeoutMs: r.int('LDAP_TIMEOUT_MS', 5000, 100, 60_000), poolSize: r.int('LDAP_POOL_SIZE', LDAP_POOL_SIZE.default, LDAP_POOL_SIZE.min, LDAP_POOL_SIZE.max) },
    pushApproval: {
      maxPerHour: r.int('PUSH_APPROVAL_MAX_PER_HOUR', 5, 1, 100),
      fraudPauseHours: r.int('PUSH_APPROVAL_FRAUD_PAUSE_HOURS', 24, 1, 24 * 30),
      attestation: readPushApprovalAttestationEnv((name) => r.opt(name), (file) => readFileSync(file, 'utf8'), r.problems, production, (name, fallback) => r.bool(name, fallback)),
    },
    realtime: {
      resumeMinutes: r.int('REALTIME_RESUME_MINUTES', 10, 1, 24 * 60),
      authTimeoutSec: r.int('REALTIME_AUTH_TIMEOUT_SECONDS', 5, 1, 60),
      heartbeatSec: r.int('REALTIME_HEARTBEAT_SECONDS', 30, 5, 600),
      maxBufferedBytes: r.int('REALTIME_MAX_BUFFERED_KB', 1024, 16, 64 * 1024) * 1024,
      maxSocketsPerSession: r.int('REALTIME_MAX_SOCKETS_PER_SESSION', 3, 1, 100),
      maxSocketsPerUser: r.int('REALTIME_MAX_SOCKETS_PER_USER', 10, 1, 1000),
    },
    saml: { env: readSamlEnv((name) => r.opt(name), (file) => readFileSync(file, 'utf8'), r.problems, production) },
    push: readPushEnv((name) => r.opt(name), (file) => readFileSync(file, 'utf8'), r.problems, production, { int: (name, fallback, min, max) => r.int(name, fallback, min, max), bool: (name, fallback) => r.bool(name, fallback) }),
    geo: readGeoEnv((name) => r.opt(name), r.problems, (name, fallback, min, max) => r.int(name, fallback, min, max)),
    breachedPasswords: readBreachedEnv((name) => r.opt(name), r.problems),
    alerts: readAlertsEnv((name) => r.opt(name), r.problems, production, r.opt('SMTP_URL') !== undefined, { int: (name, fallback, min, max) => r.int(name, fallback, min, max) }),
    risk: readRiskEnv((name) => r.opt(name), r.problems, { int: (name, fallback, min, max) => r.int(name, fallback, min, max), bool: (name, fallback) => r.bool(name, fallback) }),
    webauthn: readWebAuthnEnv((name) => r.opt(name), r.problems, production, port),
  };
  if (config.mfa.totpIssuer.includes(':')) r.problems.push('TOTP_ISSUER must not contain ":" (it separates issuer and account in the otpauth label)');

  if (config.tokens.audience.length === 0) r.problems.push('JWT_AUDIENCE must name at least one audience');
  if (production) {
    const missing: string[] = [];
    if (!databaseUrl) missing.push('DATABASE_URL (the PostgreSQL connection string)');
    if (!fieldKey) missing.push('FIELD_ENCRYPTION_KEY (32 random bytes, base64: openssl rand -base64 32)');
    if (!ipHashKey) missing.push('IP_HASH_KEY (32 random bytes, base64: openssl rand -base64 32)');
    if (!transportPrivateKeyPem) missing.push('TRANSPORT_PRIVATE_KEY_PATH or TRANSPORT_PRIVATE_KEY (RSA-2048 private key, PEM)');
    for (const m of missing) r.problems.push(`production requires ${m}`);
    if (bcryptCost < 12) r.problems.push('BCRYPT_COST may be lowered below 12 only outside production');
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return Object.freeze(config);
}
