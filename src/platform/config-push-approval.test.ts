import { describe, expect, it } from 'vitest';
import { testCa } from '../../test/harness/attestation.js';
import { readPushApprovalAttestationEnv, signingDigestHex } from './config-push-approval.js';
import { loadConfig } from './config.js';

const key = Buffer.alloc(32, 7).toString('base64');
/** Everything else production requires. */
const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x@db/strongroom', FIELD_ENCRYPTION_KEY: key, IP_HASH_KEY: key, TRANSPORT_PRIVATE_KEY: 'pem', WEBAUTHN_RP_ID: 'bank.example', WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: 'https://app.bank.example' };
const ca = testCa();

function read(env: Record<string, string>, opts: { production?: boolean; files?: Record<string, string> } = {}) {
  const problems: string[] = [];
  const bool = (name: string, fallback: boolean) => (env[name] === undefined ? fallback : env[name] === '1');
  const readFile = (file: string) => {
    const text = opts.files?.[file];
    if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return text;
  };
  const config = readPushApprovalAttestationEnv((n) => env[n], readFile, problems, opts.production ?? false, bool);
  return { config, problems };
}

describe('push-approval attestation settings', () => {
  it('optional outside production, required in production; the embedded roots; no app configured', () => {
    expect(read({})).toEqual({ config: { mode: 'optional', android: { packageNames: [], signatureDigests: [] }, ios: { allowDevelopment: false } }, problems: [] });
    expect(read({ PUSH_APPROVAL_ANDROID_PACKAGES: 'com.bank.app' }, { production: true }).config.mode).toBe('required');
    expect(read({ PUSH_APPROVAL_ATTESTATION: 'off' }, { production: true })).toMatchObject({ config: { mode: 'off' }, problems: [] });
    expect(read({ PUSH_APPROVAL_ATTESTATION: 'sometimes' }).problems).toEqual(['PUSH_APPROVAL_ATTESTATION must be one of off, optional, required (got "sometimes")']);
  });

  it('production with push configured, required attestation and neither an Android package nor an iOS app id refuses to start, saying what to set; without push there is nothing to set', () => {
    expect(read({ PUSH_PROJECT_ID: 'bank-app' }, { production: true }).problems).toEqual([expect.stringMatching(/^PUSH_APPROVAL_ATTESTATION=required \(the default in production, with push configured by PUSH_PROJECT_ID\) needs the apps .* PUSH_APPROVAL_ANDROID_PACKAGES .* PUSH_APPROVAL_IOS_APP_ID .* PUSH_APPROVAL_ATTESTATION=optional or off$/)]);
    expect(read({}, { production: true })).toMatchObject({ config: { mode: 'required' }, problems: [] });
    expect(() => loadConfig(production)).not.toThrow();
    for (const enough of [{ PUSH_APPROVAL_ANDROID_PACKAGES: 'com.bank.app' }, { PUSH_APPROVAL_IOS_APP_ID: 'ABCDE12345.com.bank.app' }, { PUSH_APPROVAL_ATTESTATION: 'optional' }]) {
      expect(loadConfig({ ...production, ...enough }).pushApproval.attestation.mode).toBe(enough.PUSH_APPROVAL_ATTESTATION ?? 'required');
    }
  });

  it('reads the apps: package names, signing digests (keytool\'s colons, hex or base64url), the App ID; names each bad value', () => {
    const digest = 'AB:CD:'.repeat(16).slice(0, -1);
    const { config, problems } = read({ PUSH_APPROVAL_ANDROID_PACKAGES: 'com.bank.app, com.bank.app.business', PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS: `${digest},${'A'.repeat(43)}`, PUSH_APPROVAL_IOS_APP_ID: 'ABCDE12345.com.bank.app' });
    expect(problems).toEqual([]);
    expect(config.android).toEqual({ packageNames: ['com.bank.app', 'com.bank.app.business'], signatureDigests: ['abcd'.repeat(16), Buffer.from('A'.repeat(43), 'base64url').toString('hex')] });
    expect(config.ios).toEqual({ appId: 'ABCDE12345.com.bank.app', allowDevelopment: false });
    expect(signingDigestHex('not a digest')).toBeUndefined();
    expect(read({ PUSH_APPROVAL_ANDROID_PACKAGES: 'bank' }).problems).toEqual(['PUSH_APPROVAL_ANDROID_PACKAGES: "bank" is not an Android package name such as com.bank.app']);
    expect(read({ PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS: 'abcd'.repeat(16) }).problems).toEqual(['PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS needs PUSH_APPROVAL_ANDROID_PACKAGES: the digests are checked for those packages']);
    expect(read({ PUSH_APPROVAL_ANDROID_PACKAGES: 'com.bank.app', PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS: 'abc' }).problems[0]).toMatch(/^PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS: "abc" is not a SHA-256 digest/);
    expect(read({ PUSH_APPROVAL_IOS_APP_ID: 'com.bank.app' }).problems[0]).toMatch(/^PUSH_APPROVAL_IOS_APP_ID must be the App ID, TEAMID\.bundle\.id/);
  });

  it('development App Attest keys: accepted when asked outside production, refused in production', () => {
    expect(read({ PUSH_APPROVAL_IOS_APP_ATTEST_DEVELOPMENT: '1' }).config.ios.allowDevelopment).toBe(true);
    const prod = read({ PUSH_APPROVAL_IOS_APP_ATTEST_DEVELOPMENT: '1', PUSH_APPROVAL_IOS_APP_ID: 'ABCDE12345.com.bank.app' }, { production: true });
    expect(prod.problems).toEqual(['PUSH_APPROVAL_IOS_APP_ATTEST_DEVELOPMENT=1 accepts App Attest keys of development (Xcode) builds: never in production (unset it)']);
    expect(prod.config.ios.allowDevelopment).toBe(false);
  });

  it('roots files replace the embedded roots: every PEM certificate of the bundle; an unreadable file, no certificate, or one that does not parse is named', () => {
    const bundle = `${ca.root.pem}${ca.intermediate.pem}`;
    const { config, problems } = read({ PUSH_APPROVAL_ANDROID_ROOTS_FILE: '/roots/google.pem', PUSH_APPROVAL_APPLE_ROOTS_FILE: '/roots/apple.pem' }, { files: { '/roots/google.pem': bundle, '/roots/apple.pem': ca.root.pem } });
    expect(problems).toEqual([]);
    expect(config.android.roots).toEqual([ca.root.pem, ca.intermediate.pem]);
    expect(config.ios.roots).toEqual([ca.root.pem]);
    expect(read({ PUSH_APPROVAL_ANDROID_ROOTS_FILE: '/nope.pem' }).problems).toEqual(['PUSH_APPROVAL_ANDROID_ROOTS_FILE: /nope.pem cannot be read (ENOENT)']);
    expect(read({ PUSH_APPROVAL_APPLE_ROOTS_FILE: '/x.pem' }, { files: { '/x.pem': 'hello' } }).problems).toEqual(['PUSH_APPROVAL_APPLE_ROOTS_FILE: /x.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)']);
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(read({ PUSH_APPROVAL_APPLE_ROOTS_FILE: '/x.pem' }, { files: { '/x.pem': broken } }).problems).toEqual(['PUSH_APPROVAL_APPLE_ROOTS_FILE: certificate 1 of /x.pem does not parse']);
  });
});
