import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseServiceAccount, readPushEnv } from './config-push.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const account = (over: Record<string, unknown> = {}) => JSON.stringify({ type: 'service_account', project_id: 'bank-app', private_key_id: 'k1', private_key: rsa, client_email: 'push@bank-app.iam.gserviceaccount.com', token_uri: 'https://oauth2.googleapis.com/token', ...over });
const int = (_n: string, fallback: number) => fallback;
/** The configuration's 1/0 reading, on `env`. */
const readersOf = (env: Record<string, string>, problems: string[]) => ({
  int,
  bool: (name: string, fallback: boolean) => {
    const raw = env[name];
    if (raw === undefined) return fallback;
    if (raw === '1' || raw === '0') return raw === '1';
    problems.push(`${name} must be 1 or 0 (got "${raw}")`);
    return fallback;
  },
});

function read(env: Record<string, string>, file = account(), production = false) {
  const problems: string[] = [];
  const config = readPushEnv((n) => env[n], () => file, problems, production, readersOf(env, problems));
  return { config, problems };
}

describe('push configuration', () => {
  it('is off with neither variable, on with both and a good key file (the public FCM endpoint by default)', () => {
    expect(read({})).toEqual({ config: { apiUrl: 'https://fcm.googleapis.com', timeoutMs: 10_000, devOutbox: true }, problems: [] });
    const on = read({ PUSH_PROJECT_ID: 'bank-app', PUSH_CREDENTIALS_PATH: '/etc/strongroom/push.json' });
    expect(on.problems).toEqual([]);
    expect(on.config.credentials).toMatchObject({ clientEmail: 'push@bank-app.iam.gserviceaccount.com', privateKeyId: 'k1', tokenUri: 'https://oauth2.googleapis.com/token' });
  });

  it('the development outbox: on by default outside production, off by default in production, where PUSH_DEV_OUTBOX=1 is refused', () => {
    expect(read({ PUSH_DEV_OUTBOX: '0' }).config.devOutbox).toBe(false);
    expect(read({}, account(), true)).toMatchObject({ config: { devOutbox: false }, problems: [] });
    expect(read({ PUSH_DEV_OUTBOX: '1' }, account(), true).problems).toEqual(['PUSH_DEV_OUTBOX=1 writes push messages to the log instead of sending them: never in production (configure PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH, or unset it)']);
    expect(read({ PUSH_DEV_OUTBOX: 'maybe' }).problems).toEqual(['PUSH_DEV_OUTBOX must be 1 or 0 (got "maybe")']);
  });

  it('names what is wrong, never the key: one variable without the other, a bad project id, an unreadable file', () => {
    expect(read({ PUSH_PROJECT_ID: 'bank-app' }).problems).toEqual(['push needs both PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH (PUSH_CREDENTIALS_PATH is unset)']);
    expect(read({ PUSH_PROJECT_ID: 'Bank App', PUSH_CREDENTIALS_PATH: '/x.json' }).problems[0]).toMatch(/^PUSH_PROJECT_ID must be a project id/);
    expect(read({ PUSH_PROJECT_ID: 'other-app', PUSH_CREDENTIALS_PATH: '/x.json' }).problems).toEqual(['PUSH_PROJECT_ID (other-app) is not the key file\'s project_id (bank-app): use the key of that project, or its id']);
    const problems: string[] = [];
    readPushEnv((n) => ({ PUSH_PROJECT_ID: 'bank-app', PUSH_CREDENTIALS_PATH: '/nope.json' })[n], () => { throw Object.assign(new Error('x'), { code: 'ENOENT' }); }, problems, false, readersOf({}, problems));
    expect(problems).toEqual(['PUSH_CREDENTIALS_PATH: /nope.json cannot be read (ENOENT)']);
  });

  it('checks the key file: JSON, a service account, the fields, an RSA key, an https token_uri in production', () => {
    const check = (text: string, production = false) => {
      const problems: string[] = [];
      parseServiceAccount(text, 'F', production, problems);
      return problems;
    };
    expect(check('{')).toEqual(['F is not JSON (a service account key file from the provider\'s console is)']);
    expect(check(account({ type: 'authorized_user' }))).toEqual(['F: "type" must be "service_account"']);
    expect(check(account({ client_email: undefined }))).toEqual(['F: "client_email" is missing']);
    expect(check(account({ private_key: ec }))).toEqual(['F: "private_key" must be an RSA key (RS256)']);
    expect(check(account({ private_key: 'not a key' }))).toEqual(['F: "private_key" is not a PEM private key']);
    expect(check(account({ token_uri: 'http://oauth2.example/token' }), true)).toEqual(['F: "token_uri" must be https:// in production']);
    expect(check(account()).join()).not.toContain('PRIVATE KEY');
  });

  it('PUSH_API_URL must be https in production', () => {
    expect(read({ PUSH_API_URL: 'http://fcm.local' }, account(), true).problems).toEqual(['PUSH_API_URL must be https:// in production']);
    expect(read({ PUSH_API_URL: 'http://127.0.0.1:9/' }).config.apiUrl).toBe('http://127.0.0.1:9');
  });
});
