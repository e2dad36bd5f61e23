import { describe, expect, it } from 'vitest';
import { webAuthnOriginProblem } from './config-webauthn.js';
import { ConfigError, loadConfig } from './config.js';

/** The problem start-up reports for `env`, or null when it starts. */
function startProblem(env: Record<string, string>): string | null {
  try {
    loadConfig(env);
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

describe('WebAuthn settings', () => {
  it('outside production: the RP id localhost and the service\'s own origin', () => {
    expect(loadConfig({ NODE_ENV: 'development', PORT: '8123' }).webauthn).toEqual({ rpId: 'localhost', rpName: 'Strongroom', origins: ['http://localhost:8123'] });
  });

  it('reads the three settings, web and Android origins', () => {
    const hash = 'A'.repeat(43);
    expect(loadConfig({ NODE_ENV: 'test', WEBAUTHN_RP_ID: 'Bank.Example', WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: `https://app.bank.example, android:apk-key-hash:${hash}` }).webauthn)
      .toEqual({ rpId: 'bank.example', rpName: 'Example Bank', origins: ['https://app.bank.example', `android:apk-key-hash:${hash}`] });
  });

  it('production refuses to start without them, naming each', () => {
    const problem = startProblem({ NODE_ENV: 'production' });
    expect(problem).toContain('production requires WEBAUTHN_RP_ID');
    expect(problem).toContain('production requires WEBAUTHN_RP_NAME');
    expect(problem).toContain('production requires WEBAUTHN_ORIGINS');
  });

  it('refuses an RP id with a scheme or port, and origins that are not exact', () => {
    expect(startProblem({ NODE_ENV: 'test', WEBAUTHN_RP_ID: 'https://bank.example' })).toContain('WEBAUTHN_RP_ID must be a domain name');
    expect(startProblem({ NODE_ENV: 'test', WEBAUTHN_ORIGINS: 'https://app.bank.example/login' })).toContain('WEBAUTHN_ORIGINS: "https://app.bank.example/login" must be an exact origin');
    expect(webAuthnOriginProblem('http://app.bank.example', true)).toContain('must use https:// in production');
    expect(webAuthnOriginProblem('http://localhost:8080', false)).toBeUndefined();
    expect(webAuthnOriginProblem('http://localhost:8080', true)).toBeUndefined(); // a secure context, this machine only
    expect(webAuthnOriginProblem('android:apk-key-hash:short', false)).toContain('43 characters');
    expect(webAuthnOriginProblem('ftp://bank.example', false)).toContain('must use https://');
  });
});
