/**
 * The SAML attack corpus (issue 12 section 5): responses built and signed by an independent
 * signer (`xmlsec1`, test/harness/saml-forge.ts) that shares nothing with the SP's validation.
 * Each attack asserts the exact status and error_code, and that no user and no session came of
 * it. A well-formed response signed the same way signs in first, so the refusals are the
 * attacks', not the forge's. Two nodes on one PostgreSQL, for the replay on another node. The
 * browser binding (a browser sign-in completes only in the browser that started it) is here
 * with valid responses: the attack is where they are posted, not what they say.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTwoNodes, type TestApp, type TwoNodes } from '../harness/app.js';
import { selfSignedCertificate, type TestCertificate } from '../harness/certificates.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { SamlRequests } from '../../src/saml/requests.js';
import { assertionXml, type AssertionSpec, element, encode, ensureXmlsec, logoutRequestXml, logoutResponseXml, newId, redirectQuery, responseXml, sign, signBoth, withDoctype, xsw } from '../harness/saml-forge.js';
import { withoutRequestId } from '../harness/request-id.js';

const SP = 'https://sp.bank.test';
const ACS = `${SP}/api/v1/auth/saml/acs`;
const IDP = 'https://idp.bank.test';

let nodes: TwoNodes;
let a: TestApp;
let dir: string;
let idpKey: TestCertificate;
let otherKey: TestCertificate;

const key = (c: TestCertificate) => ({ keyPem: c.keyPem, certPem: c.pem });

async function configure(extra: Record<string, unknown> = {}): Promise<void> {
  const token = (await signIn(a.app, 'saml.attacks.admin')).access_token;
  const res = await a.app.inject({
    method: 'POST', url: '/api/v1/auth/saml/config', headers: bearer(token),
    payload: { sp_entity_id: `${SP}/saml`, acs_url: ACS, slo_url: `${SP}/api/v1/auth/saml/sls`, idp_entity_id: IDP, idp_sso_url: `${IDP}/sso`, idp_x509cert: idpKey.pem, ...extra },
  });
  expect(res.statusCode, res.body).toBe(200);
}

beforeAll(async () => {
  ensureXmlsec();
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-saml-attacks-'));
  idpKey = selfSignedCertificate(dir, 'idp.bank.test');
  otherKey = selfSignedCertificate(dir, 'evil.example');
  nodes = await createTwoNodes();
  a = nodes.a;
  await seedUser(a.s, 'saml.attacks.admin', { roles: ['admin'] });
  await seedUser(a.s, 'admin@bank.test', { roles: ['admin'], email: 'admin@bank.test' });
  await configure();
}, 120_000);

afterAll(async () => {
  await nodes?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A request recorded by our login route, to answer. */
async function requestId(): Promise<string> {
  const res = await a.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().request_id;
}

async function spec(over: Partial<AssertionSpec> = {}): Promise<AssertionSpec> {
  const now = a.clock.now();
  return {
    issuer: IDP, nameId: `mallory-${newId()}`, audience: `${SP}/saml`, recipient: ACS, inResponseTo: await requestId(),
    issueInstant: new Date(now), notBefore: new Date(now - 60_000), notOnOrAfter: new Date(now + 5 * 60_000), ...over,
  };
}

const post = (samlResponse: string, node: TestApp = a) =>
  node.app.inject({ method: 'POST', url: '/api/v1/auth/saml/acs', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ SAMLResponse: samlResponse }).toString() });

const counts = async () => {
  const db = a.s.database.db;
  const users = Number((await db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const sessions = Number((await db.selectFrom('sessions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return { users, sessions };
};

const SLS = `${SP}/api/v1/auth/saml/sls`;

const slsPost = (field: 'SAMLRequest' | 'SAMLResponse', value: string, node: TestApp = a) =>
  node.app.inject({ method: 'POST', url: '/api/v1/auth/saml/sls', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ [field]: value }).toString() });

const slsGet = (query: string, node: TestApp = a) => node.app.inject({ method: 'GET', url: `/api/v1/auth/saml/sls?${query}` });

/** A LogoutRequest signed by `k`, by HTTP-POST (enveloped signature, xmlsec1) or HTTP-Redirect (query signature). */
const sendLogoutRequest = (binding: 'post' | 'redirect', xml: string, k: TestCertificate, node: TestApp = a) =>
  binding === 'post' ? slsPost('SAMLRequest', encode(sign(xml, key(k), 'logoutRequest')), node) : slsGet(redirectQuery('SAMLRequest', xml, key(k)), node);

/** A session from a forged sign-in with this NameID and SessionIndex. */
async function openSession(nameId: string, sessionIndex: string): Promise<string> {
  const res = await post(encode(signBoth(responseXml(await spec({ nameId, sessionIndex })), key(idpKey))));
  expect(res.statusCode, res.body).toBe(200);
  return res.json().session_id as string;
}

const active = async (id: string) => (await a.s.database.db.selectFrom('sessions').select('is_active').where('session_id', '=', id).executeTakeFirstOrThrow()).is_active;

const activeSessions = async () => Number((await a.s.database.db.selectFrom('sessions').select((eb) => eb.fn.countAll().as('n')).where('is_active', '=', true).executeTakeFirstOrThrow()).n);

/** Sends a logout message and expects 401 SAML_VALIDATION_FAILED with `reason`; no session may end. */
async function logoutRefused(send: () => ReturnType<typeof slsPost>, reason: string): Promise<void> {
  const before = await activeSessions();
  expect(expectError(await send(), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason });
  expect(await activeSessions()).toBe(before);
}

/** Posts `xml` and expects the refusal; no user and no session may come of it. */
async function refused(xml: string, status: number, code: string, details?: Record<string, unknown>): Promise<void> {
  const before = await counts();
  const body = expectError(await post(encode(xml)), status, code);
  if (details) expect(body.details).toMatchObject(details);
  expect(await counts()).toEqual(before);
}

describe('the forge signs what the SP accepts', () => {
  it('a response signed (Response and Assertion) by the IdP key signs in', async () => {
    const s = await spec({ attributes: { email: ['forge.ok@bank.test'] } });
    const res = await post(encode(signBoth(responseXml(s), key(idpKey))));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user_profile.username).toBe('forge.ok@bank.test');
  });
});

describe('threat: signatures that do not vouch for the identity', () => {
  it('an unsigned response: 401 SAML_INVALID_SIGNATURE (Response)', async () => {
    await refused(responseXml(await spec()), 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });

  it('a signed response around an unsigned assertion: 401 SAML_INVALID_SIGNATURE (Assertion)', async () => {
    await refused(sign(responseXml(await spec()), key(idpKey), 'response'), 401, 'SAML_INVALID_SIGNATURE', { element: 'Assertion' });
  });

  it('a signed assertion in an unsigned response: 401 SAML_INVALID_SIGNATURE (Response)', async () => {
    await refused(sign(responseXml(await spec()), key(idpKey), 'assertion'), 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });

  it('an assertion signed by another key inside a response the IdP signed: 401 SAML_INVALID_SIGNATURE (Assertion)', async () => {
    const xml = sign(sign(responseXml(await spec()), key(otherKey), 'assertion'), key(idpKey), 'response');
    await refused(xml, 401, 'SAML_INVALID_SIGNATURE', { element: 'Assertion' });
  });

  it('everything signed by another key: 401 SAML_INVALID_SIGNATURE (Response)', async () => {
    await refused(signBoth(responseXml(await spec()), key(otherKey)), 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });

  it('an assertion changed after signing: 401 SAML_INVALID_SIGNATURE', async () => {
    const xml = signBoth(responseXml(await spec({ nameId: 'mallory' })), key(idpKey)).replace('>mallory<', '>admin@bank.test<');
    await refused(xml, 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });
});

describe('threat: XML signature wrapping (XSW1 to XSW8)', () => {
  // 1-2 wrap the signed Response; 3-8 move the signed Assertion and put an evil one where a
  // careless reader looks. Every one is refused by the signature of the Response (the SP needs
  // it, over the document's root, whose ID is unique) or of the Assertion.
  it.each([1, 2] as const)('XSW%i on a response signed whole: 401 SAML_INVALID_SIGNATURE, nobody signed in as admin', async (variant) => {
    const signed = signBoth(responseXml(await spec()), key(idpKey));
    await refused(xsw(variant, signed, 'admin@bank.test'), 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });

  it.each([3, 4, 5, 6, 7, 8] as const)('XSW%i inside a signed response: 401 SAML_INVALID_SIGNATURE (the response no longer verifies)', async (variant) => {
    const signed = signBoth(responseXml(await spec()), key(idpKey));
    await refused(xsw(variant, signed, 'admin@bank.test'), 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });

  it.each([
    [3, 'SAML_VALIDATION_FAILED', { reason: 'malformed', element: 'Assertion', count: 2 }],
    [4, 'SAML_INVALID_SIGNATURE', { element: 'Assertion' }],
    [5, 'SAML_VALIDATION_FAILED', { reason: 'malformed', element: 'Assertion', count: 2 }],
    [6, 'SAML_INVALID_SIGNATURE', { element: 'Assertion' }],
    [7, 'SAML_INVALID_SIGNATURE', { element: 'Assertion' }],
    [8, 'SAML_INVALID_SIGNATURE', { element: 'Assertion' }],
  ] as const)('XSW%i even under a valid Response signature (the IdP key signing the wrapped document, as a careless IdP might): refused by the Assertion\'s own checks (%s)', async (variant, code, details) => {
    // Defence in depth: the Assertion must verify by itself, and be the only one.
    const wrapped = sign(xsw(variant, sign(responseXml(await spec()), key(idpKey), 'assertion'), 'admin@bank.test'), key(idpKey), 'response');
    expect(wrapped).toContain('admin@bank.test');
    await refused(wrapped, 401, code, details);
  });
});

describe('threat: comment injection in the NameID', () => {
  it('a NameID signed as admin@bank.test<!---->.evil.example is read whole (as signed): a new account admin@bank.test.evil.example, never the administrator', async () => {
    const s = await spec();
    const xml = signBoth(responseXml(s, assertionXml(s, 'admin@bank.test<!---->.evil.example')), key(idpKey));
    expect(xml).toContain('admin@bank.test<!---->.evil.example');
    const res = await post(encode(xml));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user_profile.username).toBe('admin@bank.test.evil.example');
    const admin = (await a.s.users.findByLogin('admin@bank.test'))!;
    expect(res.json().user.id).not.toBe(admin.id);
  });
});

describe('threat: a valid signature on a response meant for someone or some time else', () => {
  it.each([
    ['audience', { audience: 'https://other-sp.example/saml' }, 'audience'],
    ['recipient', { recipient: 'https://other-sp.example/acs', destination: ACS }, 'recipient'],
    ['destination', { destination: 'https://other-sp.example/acs' }, 'destination'],
    ['no destination', { destination: null }, 'destination'],
    ['issuer', { issuer: 'https://evil.example/idp' }, 'issuer'],
    ['response issuer', { responseIssuer: 'https://evil.example/idp' }, 'issuer'],
  ] as const)('wrong %s: 401 SAML_VALIDATION_FAILED', async (_name, over, reason) => {
    await refused(signBoth(responseXml(await spec(over as Partial<AssertionSpec>)), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason });
  });

  it('expired beyond the clock skew: 401 SAML_VALIDATION_FAILED expired; inside the skew it is accepted', async () => {
    const now = a.clock.now();
    await refused(signBoth(responseXml(await spec({ notBefore: new Date(now - 600_000), notOnOrAfter: new Date(now - 61_000) })), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason: 'expired' });
    const within = await post(encode(signBoth(responseXml(await spec({ notBefore: new Date(now - 600_000), notOnOrAfter: new Date(now - 30_000) })), key(idpKey))));
    expect(within.statusCode, within.body).toBe(200);
  });

  it('not yet valid beyond the clock skew: 401 SAML_VALIDATION_FAILED not_yet_valid', async () => {
    const now = a.clock.now();
    await refused(signBoth(responseXml(await spec({ notBefore: new Date(now + 120_000), notOnOrAfter: new Date(now + 600_000) })), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason: 'not_yet_valid' });
  });

  it('a status other than Success, signed: 401 SAML_NOT_AUTHENTICATED with the status', async () => {
    await refused(signBoth(responseXml(await spec({ statusCode: 'urn:oasis:names:tc:SAML:2.0:status:Responder' })), key(idpKey)), 401, 'SAML_NOT_AUTHENTICATED', { status: 'Responder' });
  });
});

describe('threat: replay', () => {
  it('an answer to a request we never sent: 401 SAML_VALIDATION_FAILED in_response_to', async () => {
    await refused(signBoth(responseXml(await spec({ inResponseTo: newId() })), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason: 'in_response_to' });
  });

  it('a second answer to a request already answered: 401 SAML_VALIDATION_FAILED in_response_to', async () => {
    const id = await requestId();
    expect((await post(encode(signBoth(responseXml(await spec({ inResponseTo: id })), key(idpKey))))).statusCode).toBe(200);
    await refused(signBoth(responseXml(await spec({ inResponseTo: id })), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason: 'in_response_to' });
  });

  it('ten different signed responses to one AuthnRequest, posted in parallel across two nodes: exactly one signs in, one session; the rest 401 SAML_VALIDATION_FAILED (in_response_to, or rejected when the library\'s own look-up is the one that finds the request spent)', async () => {
    const id = await requestId();
    const responses = await Promise.all(Array.from({ length: 10 }, async () => encode(signBoth(responseXml(await spec({ inResponseTo: id })), key(idpKey)))));
    const before = await counts();
    const all = await Promise.all(responses.map((r, i) => post(r, i % 2 === 0 ? nodes.a : nodes.b)));
    expect(all.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of all.filter((x) => x.statusCode !== 200)) expect(['in_response_to', 'rejected']).toContain((expectError(r, 401, 'SAML_VALIDATION_FAILED').details as { reason: string }).reason);
    expect(await counts()).toEqual({ users: before.users + 1, sessions: before.sessions + 1 });
  });

  it('an unsolicited response while IdP-initiated sign-in is off: 401 SAML_VALIDATION_FAILED unsolicited', async () => {
    const s = await spec();
    delete s.inResponseTo;
    await refused(signBoth(responseXml(s), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason: 'unsolicited' });
  });

  it('an assertion accepted on one node and replayed on the other: 401 SAML_VALIDATION_FAILED replayed; of ten parallel posts one signs in', async () => {
    await configure({ allow_idp_initiated: true });
    try {
      const s = await spec();
      delete s.inResponseTo;
      const xml = encode(signBoth(responseXml(s), key(idpKey)));
      expect((await post(xml, nodes.a)).statusCode).toBe(200);
      await expect.poll(async () => (await post(xml, nodes.b)).json().details?.reason).toBe('replayed');

      const t = await spec();
      delete t.inResponseTo;
      const burst = encode(signBoth(responseXml(t), key(idpKey)));
      const before = await counts();
      const all = await Promise.all(Array.from({ length: 10 }, (_, i) => post(burst, i % 2 === 0 ? nodes.a : nodes.b)));
      expect(all.filter((r) => r.statusCode === 200)).toHaveLength(1);
      expect(all.filter((r) => r.statusCode === 401 && r.json().details.reason === 'replayed')).toHaveLength(9);
      expect(await counts()).toEqual({ users: before.users + 1, sessions: before.sessions + 1 });
    } finally {
      await configure();
    }
  });
});

describe('threat: naming a channel that is not one\'s own', () => {
  it('a SAML sign-in started on the agent channel by someone who is no agent: 403 POLICY_RESTRICTED rule channel after the assertion, no session', async () => {
    const start = await a.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: { channel: 'agent' } });
    expect(start.statusCode, start.body).toBe(200);
    const before = await counts();
    const res = await post(encode(signBoth(responseXml(await spec({ inResponseTo: start.json().request_id, attributes: { email: [`not.an.agent.${newId()}@bank.test`] } })), key(idpKey))));
    expect(withoutRequestId(expectError(res, 403, 'POLICY_RESTRICTED').details)).toEqual({ rule: 'channel' });
    expect((await counts()).sessions).toBe(before.sessions);
  });
});

describe('threat: a browser sign-in completed in a browser that did not start it (login CSRF, code theft)', () => {
  const APP = 'https://app.bank.test';
  const RELAY = `${APP}/after-login`;
  const COOKIE = '__Host-strongroom_saml';

  beforeAll(async () => {
    await configure({ allowed_relay_origins: [APP] });
  });

  afterAll(async () => {
    await configure();
  });

  /** A browser sign-in started by `saml/login` with a relay_state: its request ID and the cookie it set (`name=value`). */
  async function browserLogin(): Promise<{ id: string; cookie: string }> {
    const res = await a.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: { relay_state: RELAY } });
    expect(res.statusCode, res.body).toBe(200);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{43}; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=600$`));
    return { id: res.json().request_id, cookie: setCookie.split(';')[0]! };
  }

  /** The IdP's valid answer to request `id` (a NameID of its own unless given). */
  const answer = async (id: string, over: Partial<AssertionSpec> = {}) => encode(signBoth(responseXml(await spec({ inResponseTo: id, ...over })), key(idpKey)));

  const acs = (samlResponse: string, cookie?: string, relayState?: string) => a.app.inject({
    method: 'POST', url: '/api/v1/auth/saml/acs',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
    payload: new URLSearchParams({ SAMLResponse: samlResponse, ...(relayState === undefined ? {} : { RelayState: relayState }) }).toString(),
  });

  const codes = async () => Number((await a.s.database.db.selectFrom('saml_codes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  /** Posts and expects the browser sent back to the page with SAML_VALIDATION_FAILED, the cookie deleted; no user, session or code. */
  async function refusedInBrowser(post: () => ReturnType<typeof acs>): Promise<void> {
    const before = { ...(await counts()), codes: await codes() };
    const res = await post();
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${RELAY}#saml_error=SAML_VALIDATION_FAILED`);
    expect(res.headers['set-cookie']).toBe(`${COOKIE}=; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=0`);
    expect({ ...(await counts()), codes: await codes() }).toEqual(before);
  }

  it('the browser that started it, with its cookie: 303 to the page with a code, the cookie deleted', async () => {
    const login = await browserLogin();
    const before = await codes();
    const res = await acs(await answer(login.id), login.cookie);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(new RegExp(`^${RELAY}#saml_code=[A-Za-z0-9_-]{43}$`));
    expect(res.headers['set-cookie']).toBe(`${COOKIE}=; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=0`);
    expect(await codes()).toBe(before + 1);
  });

  it('threat: login CSRF: the attacker\'s own valid response to the browser sign-in they started, posted into the victim\'s browser (no cookie): 303 #saml_error=SAML_VALIDATION_FAILED, nothing created, the request spent', async () => {
    const attackers = await browserLogin();
    const response = await answer(attackers.id, { nameId: `mallory-${newId()}`, attributes: { email: ['mallory@bank.test'] } });
    await refusedInBrowser(() => acs(response));
    expect(await a.s.users.findByLogin('mallory@bank.test')).toBeUndefined();
    // Spent: not even the attacker's own browser can use it afterwards.
    await refused(Buffer.from(response, 'base64').toString(), 401, 'SAML_VALIDATION_FAILED', { reason: 'in_response_to' });
  });

  it('threat: login CSRF into a browser holding the cookie of another login (its own pending sign-in): refused alike', async () => {
    const victims = await browserLogin();
    const attackers = await browserLogin();
    await refusedInBrowser(async () => acs(await answer(attackers.id), victims.cookie));
  });

  it('threat: code theft: the attacker starts a browser sign-in and sends the victim the IdP URL; the victim\'s answer, posted by the victim\'s browser (no cookie), gives no code', async () => {
    const attackers = await browserLogin();
    await refusedInBrowser(async () => acs(await answer(attackers.id, { nameId: 'victim-subject', attributes: { email: ['victim@bank.test'] } })));
  });

  it('threat: a forged cookie value (guessed, emptied, or the nonce\'s hash instead of the nonce) or the right value under another name: refused', async () => {
    for (const forge of [
      () => `${COOKIE}=${'A'.repeat(43)}`,
      () => `${COOKIE}=`,
      (c: string) => `${COOKIE}=${createHash('sha256').update(c.split('=')[1]!).digest('base64url')}`,
      (c: string) => `strongroom_saml=${c.split('=')[1]!}`,
    ]) {
      const login = await browserLogin();
      await refusedInBrowser(async () => acs(await answer(login.id), forge(login.cookie)));
    }
  });

  it('threat: a browser sign-in recorded without a binding (started by a route that gave no reply, or before migration 019): refused, fail closed', async () => {
    const id = newId();
    await new SamlRequests({ db: a.s.database.db, clock: a.clock }).save(id, { relayUrl: RELAY, channel: 'web' });
    await refusedInBrowser(async () => acs(await answer(id), `${COOKIE}=${'A'.repeat(43)}`));
  });

  it('a sign-in started without relay_state sets no cookie and stays unbound: any browser gets the JSON answer', async () => {
    const res = await a.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: {} });
    expect(res.headers['set-cookie']).toBeUndefined();
    const signedIn = await acs(await answer(res.json().request_id));
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.headers['set-cookie']).toBeUndefined();
  });

  it('threat: an IdP-initiated response with an allowed RelayState URL (the attacker\'s own, posted into the victim\'s browser) signs nobody in: 303 back to the IdP with a new AuthnRequest and binding cookie; the assertion is spent; the answer to the new request completes only with that cookie', async () => {
    await configure({ allowed_relay_origins: [APP], allow_idp_initiated: true });
    try {
      const s = await spec({ nameId: `mallory-${newId()}`, attributes: { email: ['mallory.idp@bank.test'] } });
      delete s.inResponseTo;
      const unsolicited = encode(signBoth(responseXml(s), key(idpKey)));
      const before = { ...(await counts()), codes: await codes() };
      const res = await acs(unsolicited, undefined, RELAY);
      expect(res.statusCode, res.body).toBe(303);
      const location = new URL(res.headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(`${IDP}/sso`);
      expect(location.searchParams.get('SAMLRequest')).toMatch(/.+/);
      const id = location.searchParams.get('RelayState')!;
      const setCookie = String(res.headers['set-cookie']);
      expect(setCookie).toMatch(new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{43}; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=600$`));
      const row = await a.s.database.db.selectFrom('saml_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ relay_url: RELAY, channel: 'web' });
      expect({ ...(await counts()), codes: await codes() }).toEqual(before);
      expect(await a.s.users.findByLogin('mallory.idp@bank.test')).toBeUndefined();
      // Spent by the bounce: posted again (with the RelayState or, for the JSON answer, without), replayed.
      for (const relay of [RELAY, undefined]) expect(expectError(await acs(unsolicited, undefined, relay), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'replayed' });
      // The IdP answers the new request: only the browser holding the cookie gets a code.
      const cookie = setCookie.split(';')[0]!;
      const solicited = await answer(id, { nameId: s.nameId });
      const done = await acs(solicited, cookie);
      expect(done.statusCode, done.body).toBe(303);
      expect(done.headers.location).toMatch(new RegExp(`^${RELAY}#saml_code=`));
      // A RelayState that is not an allowed URL is no browser: the JSON answer, as before.
      const t2 = await spec();
      delete t2.inResponseTo;
      const json = await acs(encode(signBoth(responseXml(t2), key(idpKey))), undefined, 'https://evil.example/');
      expect(json.statusCode, json.body).toBe(200);
    } finally {
      await configure({ allowed_relay_origins: [APP] });
    }
  });
});

describe('threat: hostile XML', () => {
  it('a DOCTYPE with an internal entity: 401 SAML_VALIDATION_FAILED doctype (never expanded)', async () => {
    await refused(withDoctype(signBoth(responseXml(await spec()), key(idpKey))), 401, 'SAML_VALIDATION_FAILED', { reason: 'doctype' });
  });

  it('a DOCTYPE with an external entity to a local file: 401 SAML_VALIDATION_FAILED doctype, the file never read into a user', async () => {
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'admin@bank.test');
    await refused(withDoctype(signBoth(responseXml(await spec()), key(idpKey)), { external: secret }), 401, 'SAML_VALIDATION_FAILED', { reason: 'doctype' });
  });

  it('a response over 256 KiB: 413 PAYLOAD_TOO_LARGE', async () => {
    const s = await spec({ attributes: { padding: ['x'.repeat(300 * 1024)] } });
    await refused(signBoth(responseXml(s), key(idpKey)), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('not base64, not XML, not a Response: 401 SAML_VALIDATION_FAILED malformed', async () => {
    for (const body of ['%%%not-base64%%%', encode('<not xml'), encode('<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>')]) {
      const before = await counts();
      expect(expectError(await post(body), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'malformed' });
      expect(await counts()).toEqual(before);
    }
  });

  it('two assertions, the second the signed one: refused', async () => {
    const s = await spec();
    const signed = signBoth(responseXml(s), key(idpKey));
    const doubled = signed.replace('</samlp:Response>', `${element(signed, 'saml:Assertion')}</samlp:Response>`);
    await refused(doubled, 401, 'SAML_INVALID_SIGNATURE', { element: 'Response' });
  });
});

describe('single logout by the HTTP-POST binding', () => {
  it('a LogoutRequest signed by the IdP ends the sessions of that NameID and SessionIndex only; unsigned or signed by another key it is refused and ends nothing', async () => {
    const nameId = `logout-${newId()}`;
    const [first, second] = [await openSession(nameId, '_idx-1'), await openSession(nameId, '_idx-2')];
    const request = (k: TestCertificate | null) => {
      const xml = logoutRequestXml({ issuer: IDP, destination: SLS, nameId, sessionIndex: '_idx-1', issueInstant: new Date(a.clock.now()) });
      return encode(k === null ? xml : sign(xml, key(k), 'logoutRequest'));
    };
    expect(withoutRequestId(expectError(await slsPost('SAMLRequest', request(null)), 401, 'SAML_INVALID_SIGNATURE').details)).toEqual({ element: 'LogoutRequest' });
    expectError(await slsPost('SAMLRequest', request(otherKey)), 401, 'SAML_INVALID_SIGNATURE');
    expectError(await slsPost('SAMLRequest', encode(withDoctype(sign(logoutRequestXml({ issuer: IDP, destination: SLS, nameId, issueInstant: new Date(a.clock.now()) }), key(idpKey), 'logoutRequest')))), 401, 'SAML_VALIDATION_FAILED');
    expect([await active(first), await active(second)]).toEqual([true, true]);
    const res = await slsPost('SAMLRequest', request(idpKey));
    expect(res.statusCode, res.body).toBe(200); // no idp_slo_url configured: nothing to send a LogoutResponse to
    expect(res.json()).toEqual({ status: 'success', sessions_ended: 1 });
    expect([await active(first), await active(second)]).toEqual([false, true]);
  });
});

describe('threat: a LogoutRequest replayed, or made for another SP or another time', () => {
  const bindings = ['post', 'redirect'] as const;

  it.each(bindings)('threat: a replayed LogoutRequest (%s) ends sessions once; replayed on this node or the other it is 401 SAML_VALIDATION_FAILED replayed and ends no session', async (binding) => {
    const nameId = `replay-${newId()}`;
    const first = await openSession(nameId, '_idx-r');
    const xml = logoutRequestXml({ issuer: IDP, destination: SLS, nameId, sessionIndex: '_idx-r', issueInstant: new Date(a.clock.now()) });
    const res = await sendLogoutRequest(binding, xml, idpKey);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'success', sessions_ended: 1 });
    expect(await active(first)).toBe(false);
    // The person signs in again (same IdP session): the captured request must not end it.
    const again = await openSession(nameId, '_idx-r');
    for (const node of [nodes.a, nodes.b]) await logoutRefused(() => sendLogoutRequest(binding, xml, idpKey, node), 'replayed');
    expect(await active(again)).toBe(true);
  });

  it('threat: ten parallel posts of one LogoutRequest (both nodes): one is accepted, nine are 401 SAML_VALIDATION_FAILED replayed', async () => {
    const nameId = `burst-${newId()}`;
    const session = await openSession(nameId, '_idx-b');
    const samlRequest = encode(sign(logoutRequestXml({ issuer: IDP, destination: SLS, nameId, issueInstant: new Date(a.clock.now()) }), key(idpKey), 'logoutRequest'));
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => slsPost('SAMLRequest', samlRequest, i % 2 === 0 ? nodes.a : nodes.b)));
    expect(all.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(all.filter((r) => r.statusCode === 401 && r.json().error_code === 'SAML_VALIDATION_FAILED' && r.json().details.reason === 'replayed')).toHaveLength(9);
    expect(await active(session)).toBe(false);
  });

  it.each(bindings)('threat: a LogoutRequest made for another SP (%s: Destination another SLS, or none): 401 SAML_VALIDATION_FAILED destination, no session ended', async (binding) => {
    const nameId = `dest-${newId()}`;
    const session = await openSession(nameId, '_idx-d');
    for (const destination of ['https://other-sp.example/saml/sls', `${SP}/api/v1/auth/saml/acs`, null]) {
      const xml = logoutRequestXml({ issuer: IDP, destination, nameId, issueInstant: new Date(a.clock.now()) });
      await logoutRefused(() => sendLogoutRequest(binding, xml, idpKey), 'destination');
    }
    expect(await active(session)).toBe(true);
  });

  it('threat: a LogoutRequest while this service publishes no SLS (slo_url unset): 401 SAML_VALIDATION_FAILED destination, no session ended', async () => {
    const nameId = `noslo-${newId()}`;
    const session = await openSession(nameId, '_idx-n');
    await configure({ slo_url: null });
    try {
      const xml = logoutRequestXml({ issuer: IDP, destination: SLS, nameId, issueInstant: new Date(a.clock.now()) });
      await logoutRefused(() => sendLogoutRequest('post', xml, idpKey), 'destination');
    } finally {
      await configure();
    }
    expect(await active(session)).toBe(true);
  });

  it.each(bindings)('threat: a LogoutRequest signed by the IdP key with another Issuer (%s): 401 SAML_VALIDATION_FAILED issuer, no session ended', async (binding) => {
    const nameId = `issuer-${newId()}`;
    const session = await openSession(nameId, '_idx-i');
    await logoutRefused(() => sendLogoutRequest(binding, logoutRequestXml({ issuer: 'https://evil.example/idp', destination: SLS, nameId, issueInstant: new Date(a.clock.now()) }), idpKey), 'issuer');
    expect(await active(session)).toBe(true);
  });

  it.each(bindings)('threat: a stale or future LogoutRequest (%s): IssueInstant beyond the clock skew either way, or NotOnOrAfter passed, is 401 SAML_VALIDATION_FAILED and ends no session; inside the skew it is accepted', async (binding) => {
    const nameId = `time-${newId()}`;
    const session = await openSession(nameId, '_idx-t');
    const now = a.clock.now();
    const cases = [
      [{ issueInstant: new Date(now - 61_000) }, 'expired'],
      [{ issueInstant: new Date(now - 3_600_000) }, 'expired'],
      [{ issueInstant: new Date(now + 120_000) }, 'not_yet_valid'],
      [{ issueInstant: new Date(now), notOnOrAfter: new Date(now - 61_000) }, 'expired'],
    ] as const;
    for (const [times, reason] of cases) await logoutRefused(() => sendLogoutRequest(binding, logoutRequestXml({ issuer: IDP, destination: SLS, nameId, ...times }), idpKey), reason);
    expect(await active(session)).toBe(true);
    const within = await sendLogoutRequest(binding, logoutRequestXml({ issuer: IDP, destination: SLS, nameId, issueInstant: new Date(now - 30_000), notOnOrAfter: new Date(now + 30_000) }), idpKey);
    expect(within.statusCode, within.body).toBe(200);
    expect(await active(session)).toBe(false);
  });

  it('the replay cache keeps a LogoutRequest ID only until it would be refused as expired anyway (IssueInstant plus the skew)', async () => {
    const id = newId();
    const nameId = `cache-${newId()}`;
    const issued = a.clock.now();
    expect((await slsPost('SAMLRequest', encode(sign(logoutRequestXml({ id, issuer: IDP, destination: SLS, nameId, issueInstant: new Date(issued) }), key(idpKey), 'logoutRequest')))).statusCode).toBe(200);
    const row = await a.s.database.db.selectFrom('saml_assertions').selectAll().where('issuer', '=', IDP).where('assertion_id', '=', id).executeTakeFirstOrThrow();
    expect(new Date(row.expires_at).getTime()).toBe(Math.floor(issued / 1000) * 1000 + 60_000);
  });
});

describe('NameID normalised alike at sign-in and at single logout', () => {
  it.each(['post', 'redirect'] as const)('a NameID with whitespace around it (pretty-printed by the IdP) signs in and is signed out as the same subject (%s)', async (binding) => {
    const nameId = `trim-${newId()}`;
    const s = await spec({ nameId, sessionIndex: '_idx-w' });
    const res = await post(encode(signBoth(responseXml(s, assertionXml(s, `\n      ${nameId}\n    `)), key(idpKey))));
    expect(res.statusCode, res.body).toBe(200);
    const session = res.json().session_id as string;
    expect((await a.s.database.db.selectFrom('saml_sessions').select('name_id').where('session_id', '=', session).executeTakeFirstOrThrow()).name_id).toBe(nameId);
    const xml = logoutRequestXml({ issuer: IDP, destination: SLS, nameId, nameIdXml: `\n  ${nameId}  \n`, sessionIndex: '_idx-w', issueInstant: new Date(a.clock.now()) });
    const out = await sendLogoutRequest(binding, xml, idpKey);
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toEqual({ status: 'success', sessions_ended: 1 });
    expect(await active(session)).toBe(false);
  });
});

describe('threat: a forged or misdirected LogoutResponse (sign-outs started here)', () => {
  const APP = 'https://app.bank.test';
  const RELAY = `${APP}/signed-out`;

  beforeAll(async () => {
    // IdP-initiated sign-in stays off: the IdP's answer to our own sign-out must still be taken.
    await configure({ idp_slo_url: `${IDP}/slo`, allowed_relay_origins: [APP], allow_idp_initiated: false });
  });

  afterAll(async () => {
    await configure();
  });

  /** Signs a person in (forged response) and out here: the ID of the LogoutRequest sent to the IdP. */
  async function startLogout(): Promise<string> {
    const res = await post(encode(signBoth(responseXml(await spec({ nameId: `slo-${newId()}` })), key(idpKey))));
    expect(res.statusCode, res.body).toBe(200);
    const out = await a.app.inject({ method: 'POST', url: '/api/v1/auth/saml/logout', headers: bearer(res.json().access_token), payload: { relay_state: RELAY } });
    expect(out.statusCode, out.body).toBe(200);
    const url = new URL(out.json().redirect_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${IDP}/slo`);
    return url.searchParams.get('RelayState')!;
  }

  const logoutResponse = (inResponseTo: string | undefined, over: Partial<Parameters<typeof logoutResponseXml>[0]> = {}) =>
    logoutResponseXml({ issuer: IDP, destination: SLS, inResponseTo, issueInstant: new Date(a.clock.now()), ...over });

  const sendLogoutResponse = (binding: 'post' | 'redirect', xml: string, k: TestCertificate | null, node: TestApp = a) =>
    binding === 'post'
      ? slsPost('SAMLResponse', encode(k === null ? xml : sign(xml, key(k), 'logoutResponse')), node)
      : slsGet(k === null ? redirectQuery('SAMLResponse', xml, key(idpKey)).replace(/&Signature=[^&]*$/, '') : redirectQuery('SAMLResponse', xml, key(k)), node);

  /** The IdP's genuine answer to `id` brings the browser to the relay URL: the request was not spent by what came before. */
  async function stillAnswerable(id: string): Promise<void> {
    const res = await sendLogoutResponse('post', logoutResponse(id), idpKey);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(RELAY);
  }

  it.each(['post', 'redirect'] as const)('with allow_idp_initiated off, the IdP\'s signed LogoutResponse (%s) to our sign-out brings the browser to relay_state (303), once; again: 401 in_response_to', async (binding) => {
    const id = await startLogout();
    const res = await sendLogoutResponse(binding, logoutResponse(id), idpKey);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(RELAY);
    await logoutRefused(() => sendLogoutResponse(binding, logoutResponse(id), idpKey, nodes.b), 'in_response_to');
  });

  it('threat: InResponseTo planted in a comment before the signed root: read from the signed root only, 401 SAML_VALIDATION_FAILED in_response_to, the pending sign-out not spent', async () => {
    const spent = await startLogout();
    await stillAnswerable(spent);
    const pending = await startLogout();
    const signed = sign(logoutResponse(spent), key(idpKey), 'logoutResponse');
    const planted = `<!-- InResponseTo="${pending}" -->${signed}`;
    expect(/\bInResponseTo="([^"]+)"/.exec(planted)![1]).toBe(pending);
    await logoutRefused(() => slsPost('SAMLResponse', encode(planted)), 'in_response_to');
    // Also with no InResponseTo at all on the signed root.
    await logoutRefused(() => slsPost('SAMLResponse', encode(`<!-- InResponseTo="${pending}" -->${sign(logoutResponse(undefined), key(idpKey), 'logoutResponse')}`)), 'in_response_to');
    await stillAnswerable(pending);
  });

  it('threat: a LogoutResponse answering a pending AuthnRequest: 401 SAML_VALIDATION_FAILED in_response_to, the sign-in it names still completes', async () => {
    const authn = await requestId();
    await logoutRefused(() => sendLogoutResponse('post', logoutResponse(authn), idpKey), 'in_response_to');
    await logoutRefused(() => sendLogoutResponse('redirect', logoutResponse(authn), idpKey), 'in_response_to');
    const res = await post(encode(signBoth(responseXml(await spec({ inResponseTo: authn })), key(idpKey))));
    expect(res.statusCode, res.body).toBe(200);
  });

  it('threat: a SAMLResponse at the ACS answering a pending LogoutRequest: 401 SAML_VALIDATION_FAILED in_response_to, the sign-out still answerable', async () => {
    const pending = await startLogout();
    await refused(signBoth(responseXml(await spec({ inResponseTo: pending })), key(idpKey)), 401, 'SAML_VALIDATION_FAILED', { reason: 'in_response_to' });
    await stillAnswerable(pending);
  });

  type LogoutResponseSpec = Partial<Parameters<typeof logoutResponseXml>[0]>;
  it.each([
    ['Destination another SP\'s', () => ({ destination: 'https://other-sp.example/saml/sls' }), 'destination'],
    ['no Destination', () => ({ destination: null }), 'destination'],
    ['another Issuer', () => ({ issuer: 'https://evil.example/idp' }), 'issuer'],
    ['IssueInstant beyond the skew', () => ({ issueInstant: new Date(a.clock.now() - 61_000) }), 'expired'],
    ['IssueInstant in the future', () => ({ issueInstant: new Date(a.clock.now() + 120_000) }), 'not_yet_valid'],
    ['status Responder', () => ({ statusCode: 'urn:oasis:names:tc:SAML:2.0:status:Responder' }), 'status'],
  ] as Array<[string, () => LogoutResponseSpec, string]>)('threat: a signed LogoutResponse with %s: 401 SAML_VALIDATION_FAILED, the sign-out not spent', async (_name, over, reason) => {
    const id = await startLogout();
    for (const binding of ['post', 'redirect'] as const) await logoutRefused(() => sendLogoutResponse(binding, logoutResponse(id, over()), idpKey), reason);
    await stillAnswerable(id);
  });

  it('threat: an unsigned LogoutResponse, or one signed by another key (both bindings): 401 SAML_INVALID_SIGNATURE (LogoutResponse), the sign-out not spent', async () => {
    const id = await startLogout();
    for (const k of [null, otherKey]) {
      const res = await sendLogoutResponse('post', logoutResponse(id), k);
      expect(withoutRequestId(expectError(res, 401, 'SAML_INVALID_SIGNATURE').details)).toEqual({ element: 'LogoutResponse' });
    }
    for (const k of [null, otherKey]) expect(withoutRequestId(expectError(await sendLogoutResponse('redirect', logoutResponse(id), k), 401, 'SAML_INVALID_SIGNATURE').details)).toEqual({ element: 'LogoutResponse' });
    await stillAnswerable(id);
  });
});
