import { createHmac } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { hs256, JwtError, signHs256, VerifiedTokens, verifyHs256, type VerifyOptions } from './jwt.js';

// RFC 7515 Appendix A.1: the HS256 example JWS, its key (JWK "k") and its signature.
const RFC_KEY = Buffer.from('AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow', 'base64url');
const RFC_INPUT = 'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ';
const RFC_SIGNATURE = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

const key = Buffer.alloc(32, 9);
const now = 1_800_000_000;
const claims = { sub: 'x', iss: 'strongroom', aud: ['strongroom'], iat: now, nbf: now, exp: now + 60, jti: 'j1' };
const AUDIENCE = ['strongroom']; // one array, as the service passes its configuration's
const opts = (o: Partial<VerifyOptions> = {}): VerifyOptions => ({ now, issuer: 'strongroom', audience: AUDIENCE, keyFor: (k) => (k === 'k1' ? key : undefined), ...o });
const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof JwtError ? err.reason : 'other';
  }
  return 'none';
};

describe('HS256 (RFC 7515 A.1 vector)', () => {
  it('computes the published signature', () => {
    expect(hs256(RFC_KEY, RFC_INPUT).toString('base64url')).toBe(RFC_SIGNATURE);
  });
});

describe('signHs256 / verifyHs256', () => {
  it('round-trips and interoperates with jose both ways', async () => {
    const ours = signHs256('k1', key, claims);
    expect(verifyHs256(ours, opts())).toMatchObject(claims);
    const { payload } = await jwtVerify(ours, key, { algorithms: ['HS256'], issuer: 'strongroom', audience: 'strongroom', currentDate: new Date(now * 1000) });
    expect(payload.jti).toBe('j1');
    const theirs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'k1' }).sign(key);
    expect(verifyHs256(theirs, opts())).toMatchObject(claims);
  });

  it('checks exp and nbf at their boundaries (RFC 7519 4.1.4, 4.1.5)', () => {
    const t = signHs256('k1', key, claims);
    expect(reason(() => verifyHs256(t, opts({ now: now + 59 })))).toBe('none');
    expect(reason(() => verifyHs256(t, opts({ now: now + 60 })))).toBe('expired');
    expect(reason(() => verifyHs256(t, opts({ now: now - 1 })))).toBe('not_yet_valid');
  });

  it('refuses other algorithms, a missing typ or kid, and critical headers', () => {
    const forge = (header: object) => {
      const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
    };
    for (const h of [{ alg: 'none', typ: 'JWT', kid: 'k1' }, { alg: 'HS512', typ: 'JWT', kid: 'k1' }, { alg: 'hs256', typ: 'JWT', kid: 'k1' }, { alg: 'HS256', kid: 'k1' }, { alg: 'HS256', typ: 'JWT' }, { alg: 'HS256', typ: 'JWT', kid: 'k1', crit: ['exp'] }]) {
      expect(reason(() => verifyHs256(forge(h), opts())), JSON.stringify(h)).toBe('malformed');
    }
    expect(reason(() => verifyHs256(forge({ alg: 'HS256', typ: 'JWT', kid: 'k2' }), opts()))).toBe('unknown_key');
  });

  it('refuses a non-canonical or wrong-length signature (no second spelling)', () => {
    const t = signHs256('k1', key, claims);
    const [h, p, s] = t.split('.') as [string, string, string];
    // 32 bytes take 43 characters; the last one carries 4 bits and 2 unused ones. Setting an
    // unused bit decodes to the same bytes: the signature must still be refused.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = `${s.slice(0, -1)}${alphabet[alphabet.indexOf(s.at(-1)!) | 1]}`;
    expect(twin).not.toBe(s);
    expect(Buffer.from(twin, 'base64url').equals(Buffer.from(s, 'base64url'))).toBe(true);
    expect(reason(() => verifyHs256(`${h}.${p}.${twin}`, opts()))).toBe('bad_signature');
    expect(reason(() => verifyHs256(`${h}.${p}.${s}AA`, opts()))).toBe('bad_signature');
    expect(reason(() => verifyHs256(`${h}.${p}.${s.slice(0, -2)}`, opts()))).toBe('bad_signature');
  });

  it('refuses wrong issuer or audience, missing registered claims, and malformed input', () => {
    expect(reason(() => verifyHs256(signHs256('k1', key, { ...claims, iss: 'evil' }), opts()))).toBe('bad_claims');
    expect(reason(() => verifyHs256(signHs256('k1', key, { ...claims, aud: ['payments'] }), opts()))).toBe('bad_claims');
    expect(reason(() => verifyHs256(signHs256('k1', key, { ...claims, aud: 'strongroom' }), opts()))).toBe('none');
    const { jti: _j, ...noJti } = claims;
    expect(reason(() => verifyHs256(signHs256('k1', key, noJti), opts()))).toBe('bad_claims');
    expect(reason(() => verifyHs256(signHs256('k1', key, { ...claims, exp: String(now + 60) }), opts()))).toBe('bad_claims');
    for (const bad of ['', 'a.b', 'a.b.c.d', 'a b.c.d', `${'x'.repeat(9000)}.a.b`, '..', 'W10.W10.W10']) {
      expect(['malformed', 'bad_signature']).toContain(reason(() => verifyHs256(bad, opts())));
    }
  });
});

describe('VerifiedTokens (access tokens verified once, then remembered)', () => {
  const token = signHs256('k1', key, claims);
  const flip = (t: string): string => `${t.slice(0, -2)}${t.at(-2) === 'A' ? 'B' : 'A'}${t.at(-1)}`;

  it('answers a remembered token without the HMAC, and the claims cannot be changed by a caller', () => {
    const cache = new VerifiedTokens();
    const first = cache.verify(token, opts());
    let lookups = 0;
    const second = cache.verify(token, opts({ keyFor: (k) => (lookups++, k === 'k1' ? key : undefined) }));
    expect(second).toBe(first);
    expect(lookups).toBe(1); // the key is still asked for: a key rotated out ends the memory
    expect(() => { (second as Record<string, unknown>).sub = 'someone else'; }).toThrow(TypeError);
  });

  it('a remembered token is checked afresh under other settings: another audience or issuer fails as it would have', () => {
    const cache = new VerifiedTokens();
    cache.verify(token, opts());
    expect(reason(() => cache.verify(token, opts({ audience: ['another-service'] })))).toBe('bad_claims');
    expect(reason(() => cache.verify(token, opts({ issuer: 'someone-else' })))).toBe('bad_claims');
    // An equal list that is another array is a miss, verified afresh, and still accepted.
    expect(cache.verify(token, opts({ audience: [...AUDIENCE] }))).toEqual(cache.verify(token, opts()));
  });

  it('a token that failed is not remembered: the forgery fails again, and the real token is still verified', () => {
    const cache = new VerifiedTokens();
    const forged = flip(token);
    expect(reason(() => cache.verify(forged, opts()))).toBe('bad_signature');
    expect(reason(() => cache.verify(forged, opts()))).toBe('bad_signature');
    expect(cache.verify(token, opts())).toMatchObject({ sub: claims.sub });
    expect(reason(() => cache.verify(forged, opts()))).toBe('bad_signature'); // the real one remembered: the forgery still fails
  });

  it('threat: a forged signature on a remembered payload is bad_signature, every time', () => {
    const cache = new VerifiedTokens();
    cache.verify(token, opts());
    expect(reason(() => cache.verify(flip(token), opts()))).toBe('bad_signature');
    expect(reason(() => cache.verify(`${token.slice(0, token.lastIndexOf('.'))}.`, opts()))).toBe('malformed');
  });

  it('still expires, and is not yet valid before nbf, on a hit', () => {
    const cache = new VerifiedTokens();
    cache.verify(token, opts());
    expect(reason(() => cache.verify(token, opts({ now: now + 60 })))).toBe('expired');
    expect(reason(() => cache.verify(token, opts({ now: now - 1 })))).toBe('not_yet_valid');
  });

  it('threat: a key removed from the keyring (or another key for the kid) is a miss, verified afresh and refused', () => {
    const cache = new VerifiedTokens();
    cache.verify(token, opts());
    expect(reason(() => cache.verify(token, opts({ keyFor: () => undefined })))).toBe('unknown_key');
    expect(reason(() => cache.verify(token, opts({ keyFor: () => Buffer.alloc(32, 7) })))).toBe('bad_signature');
    expect(reason(() => cache.verify(token, opts({ issuer: 'someone-else' })))).toBe('bad_claims');
  });

  it('keeps at most `max` tokens, dropping the oldest', () => {
    const cache = new VerifiedTokens(2);
    const tokens = ['a', 'b', 'c'].map((jti) => signHs256('k1', key, { ...claims, jti }));
    const seen = tokens.map((t) => cache.verify(t, opts()));
    expect(cache.verify(tokens[2]!, opts())).toBe(seen[2]);
    expect(cache.verify(tokens[0]!, opts())).not.toBe(seen[0]); // forgotten: verified again, a new object
  });
});
