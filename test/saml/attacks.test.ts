/**
 * The SAML attack corpus (issue 12 section 5): responses built and signed by an independent
 * signer (`xmlsec1`, test/harness/saml-forge.ts) that shares nothing with the SP's validation.
 * Each attack asserts the exact status and error_code, and that no user and no session came of
 * it. A well-formed response signed the same way signs in first, so the refusals are the
 * attacks', not the forge's. Two nodes on one PostgreSQL, for the replay on another node.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTwoNodes, type TestApp, type TwoNodes } from '../harness/app.js';
import { selfSignedCertificate, type TestCertificate } from '../harness/certificates.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { assertionXml, type AssertionSpec, element, encode, ensureXmlsec, logoutRequestXml, newId, responseXml, sign, signBoth, withDoctype, xsw } from '../harness/saml-forge.js';

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
    payload: { sp_entity_id: `${SP}/saml`, acs_url: ACS, idp_entity_id: IDP, idp_sso_url: `${IDP}/sso`, idp_x509cert: idpKey.pem, ...extra },
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
  const sls = (samlRequest: string) =>
    a.app.inject({ method: 'POST', url: '/api/v1/auth/saml/sls', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ SAMLRequest: samlRequest }).toString() });

  it('a LogoutRequest signed by the IdP ends the sessions of that NameID and SessionIndex only; unsigned or signed by another key it is refused and ends nothing', async () => {
    const nameId = `logout-${newId()}`;
    const open = async (sessionIndex: string) => {
      const res = await post(encode(signBoth(responseXml(await spec({ nameId, sessionIndex })), key(idpKey))));
      expect(res.statusCode, res.body).toBe(200);
      return res.json().session_id as string;
    };
    const [first, second] = [await open('_idx-1'), await open('_idx-2')];
    const active = async (id: string) => (await a.s.database.db.selectFrom('sessions').select('is_active').where('session_id', '=', id).executeTakeFirstOrThrow()).is_active;
    const request = (k: TestCertificate | null) => {
      const xml = logoutRequestXml({ issuer: IDP, destination: `${SP}/api/v1/auth/saml/sls`, nameId, sessionIndex: '_idx-1', issueInstant: new Date(a.clock.now()) });
      return encode(k === null ? xml : sign(xml, key(k), 'logoutRequest'));
    };
    expect(expectError(await sls(request(null)), 401, 'SAML_INVALID_SIGNATURE').details).toEqual({ element: 'LogoutRequest' });
    expectError(await sls(request(otherKey)), 401, 'SAML_INVALID_SIGNATURE');
    expectError(await sls(encode(withDoctype(sign(logoutRequestXml({ issuer: IDP, destination: `${SP}/api/v1/auth/saml/sls`, nameId, issueInstant: new Date(a.clock.now()) }), key(idpKey), 'logoutRequest')))), 401, 'SAML_VALIDATION_FAILED');
    expect([await active(first), await active(second)]).toEqual([true, true]);
    const res = await sls(request(idpKey));
    expect(res.statusCode, res.body).toBe(200); // no idp_slo_url configured: nothing to send a LogoutResponse to
    expect(res.json()).toEqual({ status: 'success', sessions_ended: 1 });
    expect([await active(first), await active(second)]).toEqual([false, true]);
  });
});
