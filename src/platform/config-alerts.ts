/**
 * Security alerts to the bank's security team (src/risk/alerts): an email to
 * SECURITY_ALERT_EMAIL and a signed webhook to SECURITY_WEBHOOK_URL (HMAC-SHA256 under
 * SECURITY_WEBHOOK_SECRET) that a SIEM can take. Read by config.ts, the only module that reads
 * the environment. Every problem names its setting, so that start-up lists them all at once; a
 * half-configured webhook (a URL without its secret, or a secret without a URL) stops start-up
 * rather than sending unsigned alerts or none. The secret stays in this object: never logged.
 */
import { ALERT_SEVERITIES, type AlertSeverity } from '../risk/types.js';

export interface AlertWebhookConfig {
  /** SECURITY_WEBHOOK_URL: https:// (http:// outside production), no credentials in it. */
  url: string;
  /** SECURITY_WEBHOOK_SECRET: the HMAC-SHA256 key the receiver shares; at least 32 characters. */
  secret: string;
  /** SECURITY_WEBHOOK_TIMEOUT_MS: how long one delivery may take, connecting to answer. */
  timeoutMs: number;
}

export interface AlertsConfig {
  /** SECURITY_ALERT_EMAIL: the security team's addresses (one email to all of them); empty: no email. */
  emails: readonly string[];
  /** Undefined: no webhook. */
  webhook: AlertWebhookConfig | undefined;
  /** SECURITY_ALERT_MIN_SEVERITY: alerts below it are recorded and counted but not sent to the team. */
  minSeverity: AlertSeverity;
  /** SECURITY_ALERT_MAX_ATTEMPTS: tries per delivery (email or webhook) before it is given up as `failed`. */
  maxAttempts: number;
}

/** An address as SMTP takes it: no display name, no spaces, one `@`, a dot in the domain. */
const ADDRESS = /^[^\s@<>,;"()[\]]+@[^\s@<>,;"()[\]]+\.[^\s@<>,;"()[\]]+$/;
/** Printable ASCII without spaces: a secret that survives a shell and an environment file unchanged. */
const SECRET = /^[\x21-\x7e]{32,512}$/;

export interface AlertEnvReaders {
  int(name: string, fallback: number, min: number, max: number): number;
}

function emails(raw: string | undefined, smtpConfigured: boolean, problems: string[]): string[] {
  if (raw === undefined) return [];
  const list = raw.split(',').map((a) => a.trim()).filter(Boolean);
  const bad = list.filter((a) => !ADDRESS.test(a));
  if (list.length === 0 || bad.length > 0) {
    problems.push(`SECURITY_ALERT_EMAIL must be one email address or several separated by commas, such as soc@bank.example,fraud-desk@bank.example${bad.length > 0 ? ` (not an address: ${bad.map((b) => JSON.stringify(b)).join(', ')})` : ''}`);
    return [];
  }
  if (!smtpConfigured) problems.push('SECURITY_ALERT_EMAIL needs email delivery: set SMTP_URL (alerts would otherwise be recorded and never emailed), or unset SECURITY_ALERT_EMAIL');
  return [...new Set(list.map((a) => a.toLowerCase()))];
}

function webhookUrl(raw: string, production: boolean, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push('SECURITY_WEBHOOK_URL must be a URL such as https://siem.bank.example/hooks/strongroom (the value given does not parse)');
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push(`SECURITY_WEBHOOK_URL must use https:// (http:// only outside production); got ${url.protocol}//`);
    return undefined;
  }
  // Alerts name accounts and where they signed in from: they never cross a network in clear in production.
  if (production && url.protocol !== 'https:') problems.push('SECURITY_WEBHOOK_URL must use https:// in production (alerts name accounts and places)');
  if (url.username || url.password) problems.push('SECURITY_WEBHOOK_URL must not carry credentials: the receiver authenticates each delivery by its signature (SECURITY_WEBHOOK_SECRET)');
  if (url.hash) problems.push('SECURITY_WEBHOOK_URL must not have a #fragment (it is never sent)');
  return url.toString();
}

/**
 * The alert settings. `smtpConfigured`: SMTP_URL is set (an alert email needs it);
 * `production`: NODE_ENV=production (https only).
 */
export function readAlertsEnv(opt: (name: string) => string | undefined, problems: string[], production: boolean, smtpConfigured: boolean, read: AlertEnvReaders): AlertsConfig {
  const rawSeverity = opt('SECURITY_ALERT_MIN_SEVERITY');
  let minSeverity: AlertSeverity = 'low';
  if (rawSeverity !== undefined) {
    if ((ALERT_SEVERITIES as readonly string[]).includes(rawSeverity)) minSeverity = rawSeverity as AlertSeverity;
    else problems.push(`SECURITY_ALERT_MIN_SEVERITY must be one of ${ALERT_SEVERITIES.join(', ')} (got "${rawSeverity}")`);
  }
  const base = {
    emails: Object.freeze(emails(opt('SECURITY_ALERT_EMAIL'), smtpConfigured, problems)),
    minSeverity,
    maxAttempts: read.int('SECURITY_ALERT_MAX_ATTEMPTS', 10, 1, 30),
  };
  const timeoutMs = read.int('SECURITY_WEBHOOK_TIMEOUT_MS', 10_000, 100, 30_000);
  const rawUrl = opt('SECURITY_WEBHOOK_URL');
  const secret = opt('SECURITY_WEBHOOK_SECRET');
  if (rawUrl === undefined) {
    if (secret !== undefined) problems.push('SECURITY_WEBHOOK_SECRET is set but SECURITY_WEBHOOK_URL is not: set the receiver\'s URL too, or unset the secret');
    return { ...base, webhook: undefined };
  }
  const url = webhookUrl(rawUrl, production, problems);
  if (secret === undefined) {
    problems.push('SECURITY_WEBHOOK_URL needs SECURITY_WEBHOOK_SECRET: the key both ends share to sign and check each delivery (at least 32 characters, such as the output of openssl rand -hex 32); alerts are never sent unsigned');
    return { ...base, webhook: undefined };
  }
  if (!SECRET.test(secret)) {
    problems.push(`SECURITY_WEBHOOK_SECRET must be 32 to 512 printable characters without spaces, such as the output of openssl rand -hex 32 (got ${secret.length} characters)`);
    return { ...base, webhook: undefined };
  }
  return { ...base, webhook: url === undefined ? undefined : Object.freeze({ url, secret, timeoutMs }) };
}
