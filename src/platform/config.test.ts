import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const key = Buffer.alloc(32, 7).toString('base64');
/** Everything production requires. */
const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@db/strongroom', FIELD_ENCRYPTION_KEY: key, IP_HASH_KEY: key, TRANSPORT_PRIVATE_KEY: 'pem', WEBAUTHN_RP_ID: 'bank.example', WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: 'https://app.bank.example', PUSH_APPROVAL_ANDROID_PACKAGES: 'com.bank.app' };

describe('loadConfig', () => {
  it('needs no configuration outside production and applies SPEC defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ env: 'development', host: '127.0.0.1', port: 8080, databaseUrl: undefined });
    expect(c.tokens).toMatchObject({ accessTtlSec: 3600, refreshTtlSec: 604800, resetTtlSec: 600, twoFactorTtlSec: 300, keyRotationDays: 90 });
    expect(c.sessions).toMatchObject({ mode: 'multi', maxConcurrent: 3, inactivitySec: 900 });
    expect(c.signin).toMatchObject({ maxLoginAttempts: 5, lockoutMinutes: 15 });
    expect(c.passwords.bcryptCost).toBe(12);
  });

  it('names every missing production variable at once', () => {
    try {
      loadConfig({ NODE_ENV: 'production' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      for (const v of ['DATABASE_URL', 'FIELD_ENCRYPTION_KEY', 'IP_HASH_KEY', 'TRANSPORT_PRIVATE_KEY']) expect(text).toContain(v);
    }
  });

  it('starts in production when everything is given', () => {
    const c = loadConfig(production);
    expect(c.secrets.fieldKey).toEqual(Buffer.alloc(32, 7));
  });

  it('LOG_FORMAT: auto by default, json or pretty when set, anything else refused naming it', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'colour' })).toThrow(/LOG_FORMAT must be one of auto, json, pretty/);
  });

  it('refuses a lowered bcrypt cost in production only', () => {
    expect(loadConfig({ BCRYPT_COST: '4' }).passwords.bcryptCost).toBe(4);
    expect(() => loadConfig({ ...production, BCRYPT_COST: '4' })).toThrow(/BCRYPT_COST/);
  });

  it('refuses short keys (secrets are at least 256 bits)', () => {
    expect(() => loadConfig({ FIELD_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/FIELD_ENCRYPTION_KEY must hold at least 32 bytes/);
  });

  it('reads FIELD_ENCRYPTION_KEYS_PREVIOUS as a comma-separated list of base64 or hex keys', () => {
    expect(loadConfig({}).secrets.previousFieldKeys).toEqual([]);
    const hex = Buffer.alloc(32, 9).toString('hex');
    const c = loadConfig({ FIELD_ENCRYPTION_KEY: key, FIELD_ENCRYPTION_KEYS_PREVIOUS: ` ${Buffer.alloc(32, 8).toString('base64')} , ${hex},` });
    expect(c.secrets.previousFieldKeys).toEqual([Buffer.alloc(32, 8), Buffer.alloc(32, 9)]);
  });

  it('refuses a short previous key, and the current key listed as a previous one', () => {
    expect(() => loadConfig({ FIELD_ENCRYPTION_KEYS_PREVIOUS: `${key},${Buffer.alloc(8).toString('base64')}` })).toThrow(/FIELD_ENCRYPTION_KEYS_PREVIOUS: key 2 must hold at least 32 bytes/);
    expect(() => loadConfig({ FIELD_ENCRYPTION_KEY: key, FIELD_ENCRYPTION_KEYS_PREVIOUS: key })).toThrow(/must not hold FIELD_ENCRYPTION_KEY/);
  });

  it('explains bad values with the variable name', () => {
    expect(() => loadConfig({ PORT: 'eighty', SESSION_MODE: 'double', TOKEN_BIND_IP: 'maybe' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', SESSION_MODE: 'double', TOKEN_BIND_IP: 'maybe' });
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(3);
    }
  });

  describe('SMTP_URL and SMTP_FROM', () => {
    it('leaves email delivery off by default, with a default sender', () => {
      expect(loadConfig({}).mail).toEqual({ url: undefined, from: 'Strongroom <no-reply@localhost>', requireTls: false });
    });

    it('accepts smtp:// and smtps:// URLs, with credentials', () => {
      expect(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525' }).mail.url).toBe('smtp://127.0.0.1:2525');
      expect(loadConfig({ SMTP_URL: 'smtps://user:p%40ss@mail.bank.example:465', SMTP_FROM: 'Bank <no-reply@bank.example>' }).mail)
        .toEqual({ url: 'smtps://user:p%40ss@mail.bank.example:465', from: 'Bank <no-reply@bank.example>', requireTls: false });
    });

    it('requires TLS to the SMTP server by default in production only (SMTP_REQUIRE_TLS), and lets either be overridden', () => {
      expect(loadConfig({ ...production, SMTP_URL: 'smtp://mail.bank.example' }).mail.requireTls).toBe(true);
      expect(loadConfig({ NODE_ENV: 'development', SMTP_URL: 'smtp://127.0.0.1:2525' }).mail.requireTls).toBe(false);
      expect(loadConfig({ NODE_ENV: 'test' }).mail.requireTls).toBe(false);
      expect(loadConfig({ ...production, SMTP_REQUIRE_TLS: '0' }).mail.requireTls).toBe(false); // allowed; the start-up log warns
      expect(loadConfig({ SMTP_REQUIRE_TLS: 'yes' }).mail.requireTls).toBe(true);
      expect(() => loadConfig({ SMTP_REQUIRE_TLS: 'sometimes' })).toThrow(/SMTP_REQUIRE_TLS must be 1 or 0/);
    });

    it('refuses another scheme, naming the two allowed, without echoing credentials', () => {
      try {
        loadConfig({ SMTP_URL: 'http://user:hunter2secret@mail.bank.example' });
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        const text = (err as ConfigError).problems.join('\n');
        expect(text).toMatch(/SMTP_URL must use smtp:\/\/ .* or smtps:\/\//);
        expect(text).not.toContain('hunter2secret');
      }
    });

    it('refuses a value that is not a URL, or has no host, without echoing it', () => {
      expect(() => loadConfig({ SMTP_URL: 'mail.bank.example:25' })).toThrow(/SMTP_URL must use smtp:\/\//); // parses, scheme "mail.bank.example:"
      expect(() => loadConfig({ SMTP_URL: 'not a url secret' })).toThrow(/SMTP_URL must be a URL/);
      expect(() => loadConfig({ SMTP_URL: 'not a url secret' })).not.toThrow(/secret/);
      expect(() => loadConfig({ SMTP_URL: 'smtp://u:topsecret@' })).toThrow(ConfigError);
      expect(() => loadConfig({ SMTP_URL: 'smtp://u:topsecret@' })).not.toThrow(/topsecret/);
    });

    it('refuses an SMTP_FROM that is not one address, or holds a line break', () => {
      expect(loadConfig({ SMTP_FROM: 'no-reply@bank.example' }).mail.from).toBe('no-reply@bank.example');
      expect(() => loadConfig({ SMTP_FROM: 'Strongroom' })).toThrow(/SMTP_FROM must be one address/);
      expect(() => loadConfig({ SMTP_FROM: 'a@bank.example\r\nBcc: x@evil.example' })).toThrow(/SMTP_FROM/);
    });
  });

  describe('MANAGEMENT_PORT, MANAGEMENT_HOST and METRICS_TOKEN', () => {
    const token = 'a'.repeat(32);

    it('has no management listener and no metrics token by default', () => {
      expect(loadConfig({}).management).toEqual({ port: undefined, host: '127.0.0.1', metricsToken: undefined });
    });

    it('reads them', () => {
      expect(loadConfig({ MANAGEMENT_PORT: '9464', MANAGEMENT_HOST: '10.0.0.5', METRICS_TOKEN: token }).management)
        .toEqual({ port: 9464, host: '10.0.0.5', metricsToken: token });
      expect(loadConfig({ MANAGEMENT_PORT: '0' }).management.port).toBe(0); // any free port (tests)
    });

    it('refuses a bad port, the public port, and a short or spaced token without echoing it', () => {
      expect(() => loadConfig({ MANAGEMENT_PORT: '70000' })).toThrow(/MANAGEMENT_PORT must be a whole number from 0 to 65535/);
      expect(() => loadConfig({ PORT: '9000', MANAGEMENT_PORT: '9000' })).toThrow(/MANAGEMENT_PORT must differ from PORT/);
      for (const bad of ['short-secret-token', `${token} x`]) {
        expect(() => loadConfig({ METRICS_TOKEN: bad })).toThrow(/METRICS_TOKEN must be at least 32 printable characters/);
        expect(() => loadConfig({ METRICS_TOKEN: bad })).not.toThrow(bad);
      }
    });
  });

  describe('USSD_GATEWAY_KEYS', () => {
    const key = 'k'.repeat(32);

    it('has no gateway by default', () => {
      expect(loadConfig({}).ussd.gateways).toEqual([]);
    });

    it('reads name:key pairs, a key may hold a colon', () => {
      expect(loadConfig({ USSD_GATEWAY_KEYS: ` ussd-a:${key} ,ussd.b:x:${key}` }).ussd.gateways).toEqual([{ name: 'ussd-a', key }, { name: 'ussd.b', key: `x:${key}` }]);
    });

    it('refuses a missing name, a short or spaced key, a name or key given twice, without echoing a key', () => {
      const short = 'short-gateway-key';
      for (const [value, problem] of [
        [key, /entry 1 must be name:key/],
        [`Upper:${key}`, /entry 1 must be name:key/],
        [`a:${short}`, /the key of gateway "a" must be 32 to 256 printable characters/],
        [`a:${key} x`, /the key of gateway "a"/],
        [`a:${key},a:${'m'.repeat(32)}`, /gateway "a" is named twice/],
        [`a:${key},b:${key}`, /gateway "b" has the key of gateway "a"/],
      ] as const) {
        expect(() => loadConfig({ USSD_GATEWAY_KEYS: value }), value).toThrow(problem);
        expect(() => loadConfig({ USSD_GATEWAY_KEYS: value })).not.toThrow(key);
        expect(() => loadConfig({ USSD_GATEWAY_KEYS: value })).not.toThrow(short);
      }
    });
  });

  it('requires a second factor of admin, staff, operator and agent by default in production only; an empty MFA_REQUIRED_ROLES opts out', () => {
    expect(loadConfig(production).mfa.requiredRoles).toEqual(['admin', 'staff', 'operator', 'agent']);
    expect(loadConfig({ ...production, MFA_REQUIRED_ROLES: '' }).mfa.requiredRoles).toEqual([]);
    expect(loadConfig({ ...production, MFA_REQUIRED_ROLES: 'admin' }).mfa.requiredRoles).toEqual(['admin']);
    expect(loadConfig({}).mfa.requiredRoles).toEqual([]);
  });

  describe('TRUST_PROXY', () => {
    it('trusts no proxy by default or with 0', () => {
      expect(loadConfig({}).trustProxy).toBe(false);
      expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
      expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false);
    });

    it('reads a number as the count of proxies in front, and a list as their addresses and CIDRs', () => {
      expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
      expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
      expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,loopback' }).trustProxy)
        .toEqual(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', 'loopback']);
    });

    it('refuses true (every hop believed: X-Forwarded-For spoofing), naming the two safe forms', () => {
      for (const v of ['true', 'yes', 'on', 'TRUE']) {
        expect(() => loadConfig({ TRUST_PROXY: v })).toThrow(/TRUST_PROXY=true would believe every X-Forwarded-For entry.*TRUST_PROXY=1.*TRUST_PROXY=10\.0\.0\.0\/8/);
      }
    });

    it('refuses a bad address, prefix or hop count', () => {
      expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY must be 0, a number of proxies.*"10\.0\.0\.0\/33"/);
      expect(() => loadConfig({ TRUST_PROXY: '10.0.0.1,lb.internal' })).toThrow(/"lb\.internal"/);
      expect(() => loadConfig({ TRUST_PROXY: '2001:db8::/129' })).toThrow(/"2001:db8::\/129"/);
      // A /0 trusts every peer (true by another name); a zone id or a padded prefix is not an address or a prefix.
      for (const bad of ['0.0.0.0/0', '::/0', '10.0.0.0/08', 'fe80::1%eth0']) expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY must be 0/);
      expect(() => loadConfig({ TRUST_PROXY: '11' })).toThrow(/TRUST_PROXY must be a whole number from 0 to 10/);
    });
  });
});
