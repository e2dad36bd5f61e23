/**
 * The transport tamper corpus (issue 3 sections 1 and 4), field by field, for the pre-auth
 * envelope `{encrypted_key, ciphertext, nonce, tag, key_id?}` and the session envelope
 * `{iv, ciphertext, tag}`. Every failure is a PLAINTEXT 400 DECRYPTION_FAILED whose body is
 * byte-identical to every other one (no oracle), never a 500; no tampered sign-in opens a
 * session, and afterwards the service is healthy and a valid encrypted sign-in still works.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportErrors } from '../../src/transport/errors.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { clientKeys, ENCRYPTED, openPreAuth, openSession, preAuthBody, sessionBody } from '../harness/transport-client.js';
import { b64, badClientKeys, flipByte, gcmSeal, nonCanonical, oaepWrapManual, urlSafe, wrap } from '../harness/transport-tamper.js';

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
type Data = Record<string, unknown>;
interface Attempt {
  payload?: unknown;
  headers?: Record<string, string>;
  url?: string;
}

const USER = 'tamper.user';
/** The one refusal's bytes; only the request's own id (`details.request_id`, its X-Request-ID) differs from one to the next. */
const expectedBody = (requestId: unknown): string => JSON.stringify({ status_code: 400, error_code: 'DECRYPTION_FAILED', message: TransportErrors.DECRYPTION_FAILED().message, details: { request_id: requestId } });

let t: TestApp;
let serverPem: string;
let serverKeyId: string;
let session: { key: Buffer; token: string };
let otherSessionKey: Buffer;
let sessionsBefore: number;
const bodies = new Set<string>();

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MAX_CONCURRENT_SESSIONS: '10' } });
  await seedUser(t.s, USER);
  const pk = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/public_key' })).json<{ public_key: string; key_id: string }>();
  serverPem = pk.public_key;
  serverKeyId = pk.key_id;
  const signIn = async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(serverPem, { username: USER, password: STRONG_PASSWORD }) });
    expect(res.statusCode).toBe(200);
    const opened = openPreAuth(res.json());
    return { key: opened.key, token: String(opened.body.access_token) };
  };
  session = await signIn();
  otherSessionKey = (await signIn()).key;
  sessionsBefore = await t.s.sessions.countActive();
});
afterAll(async () => t.close());

/** Asserts the one refusal: plaintext, 400, DECRYPTION_FAILED, the same bytes every time but for the request's id. */
function refused(res: Res): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.headers['x-encrypted']).toBeUndefined();
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.body).toBe(expectedBody(res.headers['x-request-id']));
  expect(res.headers['x-content-sha256']).toBe(createHash('sha256').update(res.rawPayload).digest('hex'));
  bodies.add(res.body.replace(String(res.headers['x-request-id']), '<request id>'));
}

function send(a: Attempt, url: string, extraHeaders: Record<string, string> = {}): Promise<Res> {
  const payload = a.payload as Record<string, unknown> | string | undefined;
  return t.app.inject({ method: 'POST', url: a.url ?? url, headers: { ...ENCRYPTED, ...extraHeaders, ...a.headers }, ...(payload === undefined ? {} : { payload }) });
}

// ---- pre-auth envelope -------------------------------------------------------------------

const loginJson = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ username: USER, password: STRONG_PASSWORD, client_public_key: clientKeys().publicPem, ...extra });

/** Plaintext whose length leaves base64 padding on the ciphertext (length = 1 mod 3). */
function padded(text: string): Buffer {
  let buf = Buffer.from(text);
  while (buf.length % 3 !== 1) buf = Buffer.concat([buf, Buffer.from(' ')]);
  return buf;
}

interface PreAuthOpts {
  plaintext?: Buffer;
  aesKey?: Buffer; // the key that is wrapped
  bodyKey?: Buffer; // the key that encrypts the body (default: aesKey)
  nonce?: Buffer;
  tagLength?: number;
  wrapWith?: (pem: string, key: Buffer) => Buffer;
  pem?: string; // whose public key wraps the AES key
}

function preAuth(o: PreAuthOpts = {}): Data {
  const aesKey = o.aesKey ?? randomBytes(32);
  const nonce = o.nonce ?? randomBytes(12);
  const { ct, tag } = gcmSeal(o.bodyKey ?? aesKey, nonce, o.plaintext ?? padded(JSON.stringify(loginJson())), o.tagLength);
  return { encrypted_key: b64((o.wrapWith ?? wrap.sha256)(o.pem ?? serverPem, aesKey)), ciphertext: b64(ct), nonce: b64(nonce), tag: b64(tag) };
}

/** A fresh valid envelope whose `field` satisfies `test` (e.g. holds a '+' or '/'). */
function preAuthWhere(field: string, test: (v: string) => boolean, make: () => Data = preAuth): Data {
  for (let i = 0; i < 1000; i++) {
    const d = make();
    if (test(String(d[field]))) return d;
  }
  throw new Error(`no envelope with a matching ${field}`);
}

const edit = (d: Data, field: string, value: unknown): Data => (value === undefined ? Object.fromEntries(Object.entries(d).filter(([k]) => k !== field)) : { ...d, [field]: value });
const inData = (d: Data): Attempt => ({ payload: { data: d } });

/** The base64 and presence cases, for any envelope and any of its fields. */
function encodingCases(fields: string[], paddedFields: string[], make: () => Data): Array<[string, () => Attempt]> {
  const cases: Array<[string, () => Attempt]> = [];
  for (const f of fields) {
    const at = (fn: (v: string) => unknown) => (): Attempt => {
      const d = make();
      return inData(edit(d, f, fn(String(d[f]))));
    };
    cases.push(
      [`${f}: an invalid character`, at((v) => `${v.slice(0, 2)}!${v.slice(3)}`)],
      [`${f}: URL-safe alphabet`, () => {
        const d = preAuthWhere(f, (v) => /[+/]/.test(v), make);
        return inData(edit(d, f, urlSafe(String(d[f]))));
      }],
      [`${f}: a line break inside`, at((v) => `${v.slice(0, 8)}\n${v.slice(8)}`)],
      [`${f}: leading and trailing spaces`, at((v) => ` ${v} `)],
      [`${f}: a number instead of a string`, at(() => 12345)],
      [`${f}: an object instead of a string`, at((v) => ({ value: v }))],
      [`${f}: empty`, at(() => '')],
      [`${f}: missing`, at(() => undefined)],
    );
    if (paddedFields.includes(f)) {
      cases.push(
        [`${f}: missing padding`, at((v) => v.replace(/=+$/, ''))],
        [`${f}: same bytes, non-canonical pad bits`, at((v) => {
          const altered = nonCanonical(v);
          expect(Buffer.from(altered, 'base64').equals(Buffer.from(v, 'base64'))).toBe(true);
          return altered;
        })],
      );
    }
  }
  return cases;
}

const PRE_FIELDS = ['encrypted_key', 'ciphertext', 'nonce', 'tag'];
const login = (d: Data): Attempt => inData(d);

const preAuthCases: Array<[string, () => Attempt]> = [
  ...encodingCases(PRE_FIELDS, ['encrypted_key', 'ciphertext', 'tag'], () => preAuth()),
  // lengths
  ...[11, 13, 16].map((n): [string, () => Attempt] => [`nonce of ${n} bytes (a valid GCM IV of that length)`, () => login(preAuth({ nonce: randomBytes(n) }))]),
  ...[12, 15].map((n): [string, () => Attempt] => [`tag of ${n} bytes (a genuine truncated GCM tag)`, () => login(preAuth({ tagLength: n }))]),
  ['tag of 17 bytes', () => {
    const d = preAuth();
    return login(edit(d, 'tag', b64(Buffer.concat([Buffer.from(String(d.tag), 'base64'), Buffer.from([0])]))));
  }],
  ['tag truncated to 4 bytes', () => {
    const d = preAuth();
    return login(edit(d, 'tag', b64(Buffer.from(String(d.tag), 'base64').subarray(0, 4))));
  }],
  ['encrypted_key of 255 bytes', () => {
    const d = preAuth();
    return login(edit(d, 'encrypted_key', b64(Buffer.from(String(d.encrypted_key), 'base64').subarray(1))));
  }],
  ['encrypted_key of 257 bytes', () => {
    const d = preAuth();
    return login(edit(d, 'encrypted_key', b64(Buffer.concat([Buffer.from([0]), Buffer.from(String(d.encrypted_key), 'base64')]))));
  }],
  ...[0, 16, 24, 31, 33, 64].map((n): [string, () => Attempt] => [`AES key of ${n} bytes, wrapped correctly`, () => {
    const aesKey = randomBytes(n);
    return login(preAuth({ aesKey, bodyKey: [16, 24, 32].includes(n) ? aesKey : randomBytes(32) }));
  }]),
  // wrong keys and wrong wrapping
  ['AES key wrapped for another RSA public key', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    return login(preAuth({ pem: other }));
  }],
  ['body encrypted under another AES key than the wrapped one', () => login(preAuth({ bodyKey: randomBytes(32) }))],
  ['AES key wrapped with RSA-OAEP SHA-1', () => login(preAuth({ wrapWith: wrap.sha1 }))],
  ['AES key wrapped with RSA-OAEP SHA-256 but MGF1-SHA1', () => login(preAuth({ wrapWith: wrap.sha256Mgf1Sha1 }))],
  ['AES key wrapped with PKCS#1 v1.5', () => login(preAuth({ wrapWith: wrap.pkcs1v15 }))],
  ['AES key as raw RSA (no padding)', () => login(preAuth({ wrapWith: wrap.raw }))],
  // a flipped bit in each field, first and last byte
  ...PRE_FIELDS.flatMap((f) => [0, -1].map((i): [string, () => Attempt] => [`${f}: a flipped bit in the ${i === 0 ? 'first' : 'last'} byte`, () => {
    const d = preAuth();
    return login(edit(d, f, flipByte(String(d[f]), i, i === 0 ? 0x01 : 0x80)));
  }])),
  // key_id
  ['an unknown key_id', () => login({ ...preAuth(), key_id: 'ffffffffffffffff' })],
  ['key_id of the server key, with the key wrapped for another one', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    return login({ ...preAuth({ pem: other }), key_id: serverKeyId });
  }],
  ['key_id a number', () => login({ ...preAuth(), key_id: 42 })],
  ['key_id null', () => login({ ...preAuth(), key_id: null })],
  ['key_id an array', () => login({ ...preAuth(), key_id: [serverKeyId] })],
  // structure
  ['no data wrapper', () => ({ payload: preAuth() })],
  ['extra nesting: data inside data', () => ({ payload: { data: { data: preAuth() } } })],
  ['data a string', () => ({ payload: { data: JSON.stringify(preAuth()) } })],
  ['data an array', () => ({ payload: { data: [preAuth()] } })],
  ['data null', () => ({ payload: { data: null } })],
  ['data a number', () => ({ payload: { data: 7 } })],
  ['body an empty object', () => ({ payload: {} })],
  ['body a JSON array', () => ({ payload: [{ data: preAuth() }] })],
  ['body text/plain', () => ({ payload: JSON.stringify({ data: preAuth() }), headers: { 'content-type': 'text/plain' } })],
  ['no body at all', () => ({})],
  ['a session envelope on a pre-auth route', () => login(sessionBody(session.key, loginJson()).data)],
  // the plaintext inside
  ['plaintext not JSON', () => login(preAuth({ plaintext: Buffer.from('username=tamper.user&password=x') }))],
  ['plaintext empty', () => login(preAuth({ plaintext: Buffer.alloc(0) }))],
  ['plaintext a JSON array', () => login(preAuth({ plaintext: Buffer.from(JSON.stringify([loginJson()])) }))],
  ['plaintext a JSON string', () => login(preAuth({ plaintext: Buffer.from(JSON.stringify(JSON.stringify(loginJson()))) }))],
  ['plaintext JSON null', () => login(preAuth({ plaintext: Buffer.from('null') }))],
  ['plaintext a JSON number', () => login(preAuth({ plaintext: Buffer.from('42') }))],
  ['plaintext with __proto__', () => login(preAuth({ plaintext: Buffer.from(`{"__proto__":{"isAdmin":true},${JSON.stringify(loginJson()).slice(1)}`) }))],
  ['plaintext with constructor.prototype', () => login(preAuth({ plaintext: Buffer.from(`{"constructor":{"prototype":{"isAdmin":true}},${JSON.stringify(loginJson()).slice(1)}`) }))],
  ['plaintext JSON truncated', () => login(preAuth({ plaintext: Buffer.from(JSON.stringify(loginJson()).slice(0, -1)) }))],
  // the client's public key
  ['client_public_key missing', () => login(preAuth({ plaintext: Buffer.from(JSON.stringify({ username: USER, password: STRONG_PASSWORD })) }))],
  ['client_public_key a number', () => login(preAuth({ plaintext: Buffer.from(JSON.stringify(loginJson({ client_public_key: 2048 }))) }))],
];

describe('pre-auth envelope tamper corpus (POST /api/v1/auth/login)', () => {
  it('the reference builders are sound: untampered, they sign in (the hand-made OAEP too, with SHA-256 for MGF1)', async () => {
    const res = await send(login(preAuth()), '/api/v1/auth/login');
    expect(res.statusCode, res.body).toBe(200);
    expect(openPreAuth(res.json()).body).toMatchObject({ token_type: 'bearer' });
    const manual = await send(login(preAuth({ wrapWith: (pem, k) => oaepWrapManual(pem, k, 'sha256', 'sha256') })), '/api/v1/auth/login');
    expect(manual.statusCode, manual.body).toBe(200);
  });

  for (const [name, make] of preAuthCases) {
    it(name, async () => refused(await send(make(), '/api/v1/auth/login')));
  }

  // Built once here: generating the RSA-1024/4096 keys takes a moment.
  const badKeys = badClientKeys();
  for (const [name, pem] of Object.entries(badKeys)) {
    it(`client_public_key: ${name}`, async () => {
      refused(await send(login(preAuth({ plaintext: Buffer.from(JSON.stringify(loginJson({ client_public_key: pem }))) })), '/api/v1/auth/login'));
    });
  }

  it('the same refusals on refresh and on validate (a pre-auth route behind a bearer token)', async () => {
    for (const make of [() => login({ ...preAuth(), key_id: 'ffffffffffffffff' }), () => login(preAuth({ wrapWith: wrap.sha1 })), () => login(edit(preAuth(), 'tag', flipByte(String(preAuth().tag), 0)))]) {
      refused(await send(make(), '/api/v1/auth/refresh'));
      refused(await send(make(), '/api/v1/auth/validate', bearer(session.token)));
    }
  });
});

// ---- session envelope --------------------------------------------------------------------

const SESSION_FIELDS = ['iv', 'ciphertext', 'tag'];

function sealed(o: { key?: Buffer; iv?: Buffer; tagLength?: number; plaintext?: Buffer } = {}): Data {
  const iv = o.iv ?? randomBytes(12);
  const { ct, tag } = gcmSeal(o.key ?? session.key, iv, o.plaintext ?? padded(JSON.stringify({ all_sessions: false })), o.tagLength);
  return { iv: b64(iv), ciphertext: b64(ct), tag: b64(tag) };
}

const sessionCases: Array<[string, () => Attempt]> = [
  ...encodingCases(SESSION_FIELDS, ['ciphertext', 'tag'], () => sealed()),
  ...[11, 13, 16].map((n): [string, () => Attempt] => [`iv of ${n} bytes (a valid GCM IV of that length)`, () => inData(sealed({ iv: randomBytes(n) }))]),
  ...[4, 12, 15].map((n): [string, () => Attempt] => [`tag of ${n} bytes (a genuine truncated GCM tag)`, () => inData(sealed({ tagLength: n }))]),
  ['tag of 17 bytes', () => {
    const d = sealed();
    return inData(edit(d, 'tag', b64(Buffer.concat([Buffer.from(String(d.tag), 'base64'), Buffer.from([0])]))));
  }],
  ['under a random key', () => inData(sealed({ key: randomBytes(32) }))],
  ['under the key of another session of the same user', () => inData(sealed({ key: otherSessionKey }))],
  ['under an AES-128 key (half the session key)', () => inData(sealed({ key: session.key.subarray(0, 16) }))],
  ...SESSION_FIELDS.flatMap((f) => [0, -1].map((i): [string, () => Attempt] => [`${f}: a flipped bit in the ${i === 0 ? 'first' : 'last'} byte`, () => {
    const d = sealed();
    return inData(edit(d, f, flipByte(String(d[f]), i, i === 0 ? 0x01 : 0x80)));
  }])),
  ['no data wrapper', () => ({ payload: sealed() })],
  ['extra nesting: data inside data', () => ({ payload: { data: { data: sealed() } } })],
  ['data a string', () => ({ payload: { data: JSON.stringify(sealed()) } })],
  ['data an array', () => ({ payload: { data: [sealed()] } })],
  ['data null', () => ({ payload: { data: null } })],
  ['body text/plain', () => ({ payload: JSON.stringify({ data: sealed() }), headers: { 'content-type': 'text/plain' } })],
  ['no body at all', () => ({})],
  ['a pre-auth envelope on an authenticated route', () => inData(preAuth())],
  ['plaintext not JSON', () => inData(sealed({ plaintext: Buffer.from('all_sessions=true') }))],
  ['plaintext a JSON array', () => inData(sealed({ plaintext: Buffer.from('[{"all_sessions":true}]') }))],
  ['plaintext a JSON string', () => inData(sealed({ plaintext: Buffer.from('"{\\"all_sessions\\":true}"') }))],
  ['plaintext with __proto__', () => inData(sealed({ plaintext: Buffer.from('{"__proto__":{"all_sessions":true}}') }))],
  ['plaintext with constructor.prototype', () => inData(sealed({ plaintext: Buffer.from('{"constructor":{"prototype":{"all_sessions":true}}}') }))],
];

describe('session envelope tamper corpus (POST /api/v1/auth/logout)', () => {
  const logout = (a: Attempt) => send(a, '/api/v1/auth/logout', bearer(session.token));

  for (const [name, make] of sessionCases) {
    it(name, async () => refused(await logout(make())));
  }

  it('the session survives the corpus: its key still opens a real logout, sealed under it', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(session.token) }, payload: sessionBody(session.key, { all_sessions: false }) });
    expect(res.statusCode, res.body).toBe(200);
    expect(openSession(session.key, res.json())).toEqual({ status: 'success', sessions_ended: 1 });
  });
});

describe('after the corpus', () => {
  it('every refusal had the same bytes, and there were many', () => {
    expect(bodies.size).toBe(1);
    expect(preAuthCases.length + sessionCases.length).toBeGreaterThan(100);
  });

  it('no tampered request opened a session', async () => {
    // The two reference sign-ins of the pre-auth corpus opened two; the logout above ended one.
    expect(await t.s.sessions.countActive()).toBe(sessionsBefore + 1);
  });

  it('the service is healthy and a valid encrypted sign-in still works', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(serverPem, { username: USER, password: STRONG_PASSWORD }) });
    expect(res.statusCode).toBe(200);
    expect(openPreAuth(res.json()).body).toMatchObject({ token_type: 'bearer' });
  });
});
