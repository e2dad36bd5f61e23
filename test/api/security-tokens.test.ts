/**
 * Security regressions: forged, tampered, confused and mistimed tokens (SPEC "Access token
 * (JWT)", "Bearer tokens" 3; issue 2 section 9). Each test is named after the threat and asserts
 * the exact status and error_code.
 */
import { createHmac, createPrivateKey, generateKeyPairSync, sign as rsaSign } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { admin, bearer, expectError, login, seedUser, signIn, type SignedIn } from '../harness/fixtures.js';
import { fetchServerPem } from '../harness/transport-client.js';

let t: TestApp;
let transportPrivatePem: string;
let good: SignedIn;

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** Signs `header.payload` with the server's own HMAC key, leaving the header exactly as given. */
async function signWithServerKey(header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string> {
  const input = `${b64(header)}.${b64(payload)}`;
  const { key } = t.s.keyring.signingKey('access');
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

function hmacToken(alg: 'sha256' | 'sha384' | 'sha512', header: Record<string, unknown>, payload: Record<string, unknown>, secret: string | Buffer): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac(alg, secret).update(input).digest('base64url')}`;
}

const validate = (token: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token, headers) });
const validateRaw = (authorization: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: { authorization } });

/** The claims and kid of a genuine access token, to forge look-alikes from. */
function genuine(): { claims: Record<string, unknown>; kid: string } {
  return { claims: decodeJwt(good.access_token) as Record<string, unknown>, kid: decodeProtectedHeader(good.access_token).kid! };
}

beforeAll(async () => {
  const secrets = testSecrets();
  transportPrivatePem = secrets.transportPrivateKeyPem;
  t = await createTestApp({ secrets });
  await seedUser(t.s, 'tessa.kamau'); // holds `good` only: other sign-ins must not push its session out
  await seedUser(t.s, 'omar.haji');
  good = await signIn(t.app, 'tessa.kamau');
});
afterAll(async () => t.close());

describe('signature and algorithm attacks', () => {
  it('control: a genuine access token validates', async () => {
    expect((await validate(good.access_token)).statusCode).toBe(200);
  });

  it('rejects an unsigned alg "none" token (signature stripping) with 401 TOKEN_INVALID', async () => {
    const { claims, kid } = genuine();
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      const token = `${b64({ alg, typ: 'JWT', kid })}.${b64({ ...claims, roles: ['admin'] })}.`;
      expectError(await validate(token), 401, 'TOKEN_INVALID');
      // The same with the genuine signature left on.
      expectError(await validate(`${token}${good.access_token.split('.')[2]}`), 401, 'TOKEN_INVALID');
    }
  });

  it('rejects an RS256 token signed with an attacker RSA key (HS/RS confusion) with 401 TOKEN_INVALID', async () => {
    const { claims, kid } = genuine();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid }).sign(privateKey);
    expectError(await validate(token), 401, 'TOKEN_INVALID');
  });

  it('rejects an RS256 token signed with the server\'s own transport RSA key with 401 TOKEN_INVALID', async () => {
    const { claims, kid } = genuine();
    const input = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64(claims)}`;
    const sig = rsaSign('sha256', Buffer.from(input), createPrivateKey(transportPrivatePem)).toString('base64url');
    expectError(await validate(`${input}.${sig}`), 401, 'TOKEN_INVALID');
  });

  it('rejects an HS256 token whose HMAC secret is the server\'s public RSA key PEM (key confusion) with 401 TOKEN_INVALID', async () => {
    const { claims, kid } = genuine();
    const pem = await fetchServerPem(t.app);
    for (const secret of [pem, pem.trim(), `${pem.trim()}\n`]) {
      const token = hmacToken('sha256', { alg: 'HS256', typ: 'JWT', kid }, { ...claims, roles: ['admin'] }, secret);
      expectError(await validate(token), 401, 'TOKEN_INVALID');
    }
  });

  it('rejects HS384 and HS512 tokens (algorithm downgrade/upgrade) with 401 TOKEN_INVALID', async () => {
    const { claims, kid } = genuine();
    for (const [alg, hash] of [['HS384', 'sha384'], ['HS512', 'sha512']] as const) {
      expectError(await validate(hmacToken(hash, { alg, typ: 'JWT', kid }, claims, 'x'.repeat(64))), 401, 'TOKEN_INVALID');
    }
  });

  it('rejects a tampered payload (roles raised to admin, signature kept) with 401 TOKEN_INVALID', async () => {
    const [h, , sig] = good.access_token.split('.');
    const { claims } = genuine();
    const forged = { ...claims, roles: ['admin'], permissions: ['users.create', 'users.read', 'users.update', 'audit.read'] };
    expectError(await validate(`${h}.${b64(forged)}.${sig}`), 401, 'TOKEN_INVALID');
    expectError(await validate(`${h}.${b64({ ...claims, exp: (claims.exp as number) + 86_400 })}.${sig}`), 401, 'TOKEN_INVALID');
  });

  it('rejects a truncated or altered signature with 401 TOKEN_INVALID', async () => {
    const [h, p, sig] = good.access_token.split('.') as [string, string, string];
    expectError(await validate(`${h}.${p}.${sig.slice(0, -4)}`), 401, 'TOKEN_INVALID');
    expectError(await validate(`${h}.${p}.${sig.slice(0, 10)}`), 401, 'TOKEN_INVALID');
    expectError(await validate(`${h}.${p}`), 401, 'TOKEN_INVALID');
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expectError(await validate(`${h}.${p}.${flipped}`), 401, 'TOKEN_INVALID');
  });

  it('rejects garbage bearer values with 401 TOKEN_INVALID', async () => {
    for (const g of ['garbage', 'a.b.c', '...', 'eyJhbGciOiJIUzI1NiJ9', `${good.access_token}.extra`, 'x'.repeat(9000), 'tok en', "' OR 1=1 --"]) {
      expectError(await validateRaw(`Bearer ${g}`), 401, 'TOKEN_INVALID');
    }
  });

  it('rejects an Authorization header with a scheme other than Bearer with 401 TOKEN_INVALID', async () => {
    for (const h of [`Basic ${b64('tessa.kamau:pw')}`, `Token ${good.access_token}`, `Digest ${good.access_token}`, good.access_token, 'Bearer']) {
      expectError(await validateRaw(h), 401, 'TOKEN_INVALID');
    }
  });

  it('ignores a token passed in the URL (tokens never travel in URLs): 401 TOKEN_MISSING', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/auth/validate?access_token=${good.access_token}` });
    expectError(res, 401, 'TOKEN_MISSING');
  });
});

describe('key id (kid) attacks', () => {
  it('rejects a well-signed token with an unknown kid with 401 TOKEN_INVALID', async () => {
    const { claims } = genuine();
    expectError(await validate(await signWithServerKey({ alg: 'HS256', typ: 'JWT', kid: 'deadbeefdeadbeef' }, claims)), 401, 'TOKEN_INVALID');
  });

  it('rejects a well-signed token without a kid with 401 TOKEN_INVALID', async () => {
    const { claims } = genuine();
    expectError(await validate(await signWithServerKey({ alg: 'HS256', typ: 'JWT' }, claims)), 401, 'TOKEN_INVALID');
  });

  it('rejects hostile kids (SQL injection, path traversal, 10 KB, non-string) with 401 TOKEN_INVALID and stays healthy', async () => {
    const { claims } = genuine();
    const kids: unknown[] = [
      "' OR 1=1 --", "'; DROP TABLE jwt_signing_keys; --", '../../../../etc/passwd', '..\\..\\windows\\win.ini', '/dev/zero',
      'x'.repeat(10_240), '__proto__', 'constructor', '', 12345, null, true, ['a'], { $ne: null }, { toString: 'x' },
    ];
    for (const kid of kids) {
      const res = await validate(await signWithServerKey({ alg: 'HS256', typ: 'JWT', kid }, claims));
      expectError(res, 401, 'TOKEN_INVALID');
    }
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect((await validate(good.access_token)).statusCode).toBe(200);
    expect((await t.s.database.db.selectFrom('jwt_signing_keys').select('kid').execute()).length).toBeGreaterThan(0);
  });
});

describe('time attacks', () => {
  it('rejects an expired access token with 401 TOKEN_EXPIRED', async () => {
    const start = t.clock.now();
    const s = await signIn(t.app, 'omar.haji');
    try {
      t.clock.advance(3600_000 + 1000);
      expectError(await validate(s.access_token), 401, 'TOKEN_EXPIRED');
    } finally {
      t.clock.set(start);
    }
  });

  it('rejects an expired refresh token with 401 TOKEN_EXPIRED', async () => {
    const start = t.clock.now();
    const s = await signIn(t.app, 'omar.haji');
    try {
      t.clock.advance(7 * 86_400_000 + 1000);
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: s.refresh_token } }), 401, 'TOKEN_EXPIRED');
    } finally {
      t.clock.set(start);
    }
  });

  it('rejects a not-yet-valid token (nbf in the future, genuine key) with 401 TOKEN_NOT_YET_VALID', async () => {
    const start = t.clock.now();
    const s = await signIn(t.app, 'omar.haji');
    const c = decodeJwt(s.access_token) as Record<string, unknown> & { sub: string; user_id: string; roles: string[]; permissions: string[]; session_id: string; device_fingerprint: string; ip_address: string };
    let token: string;
    try {
      t.clock.set(start + 3600_000);
      ({ token } = await t.s.tokens.issue('access', {
        sub: c.sub, user_id: c.user_id, roles: c.roles, permissions: c.permissions, session_id: c.session_id,
        device_fingerprint: c.device_fingerprint, ip_address: c.ip_address,
      }));
    } finally {
      t.clock.set(start);
    }
    expectError(await validate(token), 401, 'TOKEN_NOT_YET_VALID');
  });
});

describe('audience and issuer', () => {
  let other: TestApp[] = [];
  let shared: TestApp;

  beforeAll(async () => {
    const secrets = testSecrets();
    const database = await openTestDatabase();
    shared = await createTestApp({ secrets, database });
    const clock = shared.clock;
    other = [
      await createTestApp({ secrets, database, clock, env: { JWT_AUDIENCE: 'payments' } }),
      await createTestApp({ secrets, database, clock, env: { JWT_ISSUER: 'https://evil.example' } }),
    ];
    await seedUser(shared.s, 'ines.wanjiru');
  });
  afterAll(async () => {
    for (const o of other) await o.app.close(); // the database belongs to `shared`
    await shared.close();
  });

  const validateOn = (app: TestApp, token: string) => app.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });

  it('rejects a token minted for another audience (same keys, same database) with 401 TOKEN_INVALID', async () => {
    const s = await signIn(other[0]!.app, 'ines.wanjiru');
    expect(decodeJwt(s.access_token).aud).toEqual(['payments']);
    expect((await validateOn(other[0]!, s.access_token)).statusCode).toBe(200);
    expectError(await validateOn(shared, s.access_token), 401, 'TOKEN_INVALID');
    const ours = await signIn(shared.app, 'ines.wanjiru');
    expectError(await validateOn(other[0]!, ours.access_token), 401, 'TOKEN_INVALID');
  });

  it('rejects a token from another issuer (same keys, same database) with 401 TOKEN_INVALID', async () => {
    const s = await signIn(other[1]!.app, 'ines.wanjiru');
    expect(decodeJwt(s.access_token).iss).toBe('https://evil.example');
    expectError(await validateOn(shared, s.access_token), 401, 'TOKEN_INVALID');
  });

  it('rejects tokens signed with the genuine key but a wrong, missing or extra-only aud or iss with 401 TOKEN_INVALID', async () => {
    const s = await signIn(shared.app, 'ines.wanjiru');
    const claims = decodeJwt(s.access_token);
    const { kid, key } = shared.s.keyring.signingKey('access');
    const mint = (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid }).sign(key);
    expect((await validateOn(shared, await mint(claims))).statusCode).toBe(200); // control: the minting itself is sound
    const { aud: _aud, iss: _iss, ...bare } = claims;
    for (const c of [
      { ...claims, aud: ['payments'] }, { ...claims, aud: 'payments' }, bare, { ...bare, iss: claims.iss },
      { ...claims, iss: 'strongroom-evil' }, { ...claims, iss: '' }, { ...bare, aud: claims.aud },
    ]) {
      expectError(await validateOn(shared, await mint(c)), 401, 'TOKEN_INVALID');
    }
  });
});

describe('token type confusion', () => {
  it('rejects a refresh token used as an access token with 401 TOKEN_INVALID', async () => {
    const s = await signIn(t.app, 'omar.haji');
    expectError(await validate(s.refresh_token), 401, 'TOKEN_INVALID');
  });

  it('rejects a reset token used as an access token with 401 TOKEN_INVALID', async () => {
    const created = await admin(t.s).createUser({ username: 'reset.victim', roles: ['customer'] }, { uuid: null, username: 'test' });
    const res = await login(t.app, 'reset.victim', created.temporaryPassword!);
    const body = expectError(res, 403, 'PASSWORD_CHANGE_REQUIRED');
    const reset = (body.details as { reset_token: string }).reset_token;
    expectError(await validate(reset), 401, 'TOKEN_INVALID');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: reset } }), 401, 'TOKEN_INVALID');
  });

  it('rejects a 2FA token used as an access or refresh token with 401 TOKEN_INVALID', async () => {
    const user = await t.s.users.findByLogin('omar.haji');
    const { token } = await t.s.tokens.issue('2fa', { user_id: user!.uuid });
    expectError(await validate(token), 401, 'TOKEN_INVALID');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: token } }), 401, 'TOKEN_INVALID');
  });

  it('rejects an access token used as a refresh token with 401 TOKEN_INVALID', async () => {
    const s = await signIn(t.app, 'omar.haji');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: s.access_token } }), 401, 'TOKEN_INVALID');
  });

  it('rejects a refresh or access token used as a reset token with 401 TOKEN_INVALID', async () => {
    const s = await signIn(t.app, 'omar.haji');
    for (const token of [s.refresh_token, s.access_token]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/password', payload: { reset_token: token, new_password: 'Zp4$kWq8!nRt2&' } });
      expectError(res, 401, 'TOKEN_INVALID');
    }
    expect((await validate(s.access_token)).statusCode).toBe(200); // and the password did not change
    await signIn(t.app, 'omar.haji');
  });

  it('rejects a token signed with the access key whose token_type claim is not access with 401 TOKEN_INVALID', async () => {
    const { claims, kid } = genuine();
    for (const tokenType of ['refresh', 'reset', '2fa', undefined, 'ACCESS']) {
      expectError(await validate(await signWithServerKey({ alg: 'HS256', typ: 'JWT', kid }, { ...claims, token_type: tokenType })), 401, 'TOKEN_INVALID');
    }
  });
});
