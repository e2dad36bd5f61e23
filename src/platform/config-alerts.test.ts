import { describe, expect, it } from 'vitest';
import { readAlertsEnv } from './config-alerts.js';
import { ConfigError, loadConfig, Reader } from './config.js';

const SECRET = 'a'.repeat(64);

function read(env: Record<string, string>, opts: { production?: boolean; smtp?: boolean } = {}) {
  // The server's own reader, so these see what start-up sees.
  const r = new Reader(env);
  const config = readAlertsEnv((n) => r.opt(n), r.problems, opts.production ?? false, opts.smtp ?? true, { int: (name, fallback, min, max) => r.int(name, fallback, min, max) });
  return { config, problems: r.problems };
}

describe('security alert settings', () => {
  it('none set: alerts are recorded and sent to nobody; every severity would go; 10 attempts', () => {
    expect(read({})).toEqual({ config: { emails: [], webhook: undefined, minSeverity: 'low', maxAttempts: 10 }, problems: [] });
  });

  it('reads the team\'s addresses (comma-separated, lower-cased, once each), the webhook and its secret', () => {
    const { config, problems } = read({
      SECURITY_ALERT_EMAIL: 'SOC@bank.example, fraud-desk@bank.example,soc@bank.example', SECURITY_WEBHOOK_URL: 'https://siem.bank.example/hooks/strongroom',
      SECURITY_WEBHOOK_SECRET: SECRET, SECURITY_WEBHOOK_TIMEOUT_MS: '5000', SECURITY_ALERT_MIN_SEVERITY: 'medium', SECURITY_ALERT_MAX_ATTEMPTS: '5',
    });
    expect(problems).toEqual([]);
    expect(config).toEqual({
      emails: ['soc@bank.example', 'fraud-desk@bank.example'], minSeverity: 'medium', maxAttempts: 5,
      webhook: { url: 'https://siem.bank.example/hooks/strongroom', secret: SECRET, timeoutMs: 5000 },
    });
  });

  it('refuses a webhook URL without its secret, and a secret without a URL: never unsigned, never half-configured', () => {
    expect(read({ SECURITY_WEBHOOK_URL: 'https://siem.bank.example/h' }).problems).toEqual([expect.stringMatching(/^SECURITY_WEBHOOK_URL needs SECURITY_WEBHOOK_SECRET/)]);
    expect(read({ SECURITY_WEBHOOK_SECRET: SECRET }).problems).toEqual([expect.stringMatching(/^SECURITY_WEBHOOK_SECRET is set but SECURITY_WEBHOOK_URL is not/)]);
    expect(read({ SECURITY_WEBHOOK_URL: 'https://siem.bank.example/h', SECURITY_WEBHOOK_SECRET: 'short' }).problems).toEqual([expect.stringMatching(/^SECURITY_WEBHOOK_SECRET must be 32 to 512 printable characters .* \(got 5 characters\)$/)]);
  });

  it('http:// only outside production; no credentials, no fragment, no other scheme', () => {
    expect(read({ SECURITY_WEBHOOK_URL: 'http://127.0.0.1:9000/h', SECURITY_WEBHOOK_SECRET: SECRET }).problems).toEqual([]);
    expect(read({ SECURITY_WEBHOOK_URL: 'http://siem.bank.example/h', SECURITY_WEBHOOK_SECRET: SECRET }, { production: true }).problems).toEqual(['SECURITY_WEBHOOK_URL must use https:// in production (alerts name accounts and places)']);
    expect(read({ SECURITY_WEBHOOK_URL: 'https://u:p@siem.bank.example/h#x', SECURITY_WEBHOOK_SECRET: SECRET }).problems).toEqual([
      expect.stringMatching(/^SECURITY_WEBHOOK_URL must not carry credentials/), expect.stringMatching(/^SECURITY_WEBHOOK_URL must not have a #fragment/)]);
    expect(read({ SECURITY_WEBHOOK_URL: 'ftp://siem.bank.example/h', SECURITY_WEBHOOK_SECRET: SECRET }).problems).toEqual([expect.stringMatching(/^SECURITY_WEBHOOK_URL must use https:\/\//)]);
    expect(read({ SECURITY_WEBHOOK_URL: 'siem', SECURITY_WEBHOOK_SECRET: SECRET }).problems).toEqual([expect.stringMatching(/does not parse/)]);
  });

  it('names a bad address, an email without SMTP_URL, an unknown severity', () => {
    expect(read({ SECURITY_ALERT_EMAIL: 'soc@bank.example, not an address' }).problems).toEqual([expect.stringContaining('(not an address: "not an address")')]);
    expect(read({ SECURITY_ALERT_EMAIL: 'soc@bank.example' }, { smtp: false }).problems).toEqual([expect.stringMatching(/^SECURITY_ALERT_EMAIL needs email delivery: set SMTP_URL/)]);
    expect(read({ SECURITY_ALERT_MIN_SEVERITY: 'severe' }).problems).toEqual(['SECURITY_ALERT_MIN_SEVERITY must be one of low, medium, high, critical (got "severe")']);
  });

  it('start-up stops with every problem at once, naming the settings', () => {
    let error: unknown;
    try {
      loadConfig({ NODE_ENV: 'test', SECURITY_ALERT_EMAIL: 'soc@bank.example', SECURITY_WEBHOOK_URL: 'https://siem.bank.example/h' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/SECURITY_ALERT_EMAIL needs email delivery[\s\S]*SECURITY_WEBHOOK_URL needs SECURITY_WEBHOOK_SECRET/);
  });
});
