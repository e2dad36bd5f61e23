/**
 * SAML sign-in end to end against a real identity provider (SimpleSAMLphp, test/harness/idp.ts),
 * driven like a browser: our SP metadata loaded into the IdP, SP-initiated sign-in answered as
 * JSON and as the browser flow (303 with a one-time code, exchanged once), just-in-time
 * provisioning with branch and roles from groups, the second sign-in through the link, linking
 * by email, IdP-initiated sign-in (off, then on: bounced back to the IdP as a bound sign-in), two
 * parallel first sign-ins creating one user, and the browser binding of the browser flow (the
 * cookie `saml/login` sets, without which the ACS gives no code). The service's clock is the
 * real time here (the IdP signs with it): set to it before each test, so that a slow run (the
 * suite under load) never leaves it behind the IdP's by more than the clock skew.
 */
import { createHash, createVerify, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { Authenticator } from '../harness/authenticator.js';
import { auditTotal, bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { type IdpPage, type IdpUser, type RunningIdp, startIdp } from '../harness/idp.js';

const SP = 'https://sp.bank.test';
const ACS = `${SP}/api/v1/auth/saml/acs`;
const APP = 'https://app.bank.test';

const teller: IdpUser = { username: 'wanjiru', password: 'Idp#Passw0rd-1', email: 'wanjiru@bank.test', displayName: 'Wanjiru Kamau', groups: ['Tellers', 'All Staff'], branch: 'NBO-001', phone: '+254700000001' };
const manager: IdpUser = { username: 'otieno', password: 'Idp#Passw0rd-2', email: 'otieno@bank.test', displayName: 'Otieno Odhiambo', groups: ['Branch Managers', 'Strongroom Admins'], branch: 'CLOSED-9' };
const customer: IdpUser = { username: 'amina', password: 'Idp#Passw0rd-3', email: 'amina.local@bank.test', displayName: 'Amina Hassan' };
const root: IdpUser = { username: 'root-at-idp', password: 'Idp#Passw0rd-4', email: 'saml.root@bank.test', groups: ['Tellers'] };
const operator: IdpUser = { username: 'njeri', password: 'Idp#Passw0rd-6', email: 'njeri@bank.test', groups: ['Back Office'] };
const twin: IdpUser = { username: 'twin', password: 'Idp#Passw0rd-5', email: 'twin@bank.test', groups: ['Tellers'] };
const mallory: IdpUser = { username: 'mallory', password: 'Idp#Passw0rd-7', email: 'mallory@bank.test', groups: ['Tellers'] };

const PLACEHOLDER = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${SP}/saml"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ACS}" index="1"/></md:SPSSODescriptor></md:EntityDescriptor>`;

let t: TestApp;
let idp: RunningIdp;
let adminToken: string;

const config = (extra: Record<string, unknown> = {}) => ({
  sp_entity_id: `${SP}/saml`, acs_url: ACS, slo_url: `${SP}/api/v1/auth/saml/sls`,
  idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_slo_url: idp.sloUrl, idp_x509cert: idp.certPem,
  allowed_relay_origins: [APP],
  attribute_map: { name: ['displayName'] },
  group_roles: { staff: ['Tellers', 'Branch Managers'], admin: ['Strongroom Admins'], operators: ['Back Office'] },
  ...extra,
});

async function configure(extra: Record<string, unknown> = {}): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/config', headers: bearer(adminToken), payload: config(extra) });
  expect(res.statusCode, res.body).toBe(200);
}

beforeAll(async () => {
  // Operators must hold a second factor (the browser flow's pending-2fa is tested with one).
  t = await createTestApp({ env: { MFA_REQUIRED_ROLES: 'operator' } });
  await seedUser(t.s, 'saml.e2e.admin', { roles: ['admin'] });
  adminToken = (await signIn(t.app, 'saml.e2e.admin')).access_token;
  idp = await startIdp({ users: [teller, manager, customer, root, twin, operator, mallory], spMetadataXml: PLACEHOLDER });
  await configure();
  // The operator loads our metadata into the IdP.
  const metadata = await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' });
  expect(metadata.statusCode).toBe(200);
  idp.setSpMetadata(metadata.body);
  const db = t.s.database.db;
  await db.insertInto('entities').values([{ code: 'NBO-001', name: 'Nairobi Moi Avenue', is_active: true, created_at: new Date(), updated_at: new Date() }, { code: 'CLOSED-9', name: 'Closed branch', is_active: false, created_at: new Date(), updated_at: new Date() }]).execute();
}, 180_000);

beforeEach(() => t.clock.set(Date.now()));

afterAll(async () => {
  await idp?.stop();
  await t?.close();
});

/** The IdP's form post to our ACS, and the browser-binding cookie (`name=value`) the browser holds for us, if any. */
interface Answer {
  fields: Record<string, string>;
  cookie?: string;
}

/** The IdP's form post to our ACS, or a failure that shows what the IdP said. */
function posted(page: IdpPage, cookie?: string): Answer {
  if (page.kind !== 'post') throw new Error(`expected the IdP's POST to the ACS, got ${JSON.stringify(page).slice(0, 1500)}\n${idp.log().slice(-4000)}`);
  expect(page.action).toBe(ACS);
  return { fields: page.fields, ...(cookie === undefined ? {} : { cookie }) };
}

const BINDING = '__Host-strongroom_saml';

/** The Set-Cookie values of a response. */
const setCookies = (res: { headers: Record<string, unknown> }): string[] => {
  const h = res.headers['set-cookie'];
  return h === undefined ? [] : Array.isArray(h) ? h.map(String) : [String(h)];
};

/** The browser-binding cookie a response sets (`name=value`, for a Cookie header), if it sets one. */
const bindingSet = (res: { headers: Record<string, unknown> }): string | undefined =>
  setCookies(res).find((c) => c.startsWith(`${BINDING}=`) && !/Max-Age=0/.test(c))?.split(';')[0];

/** SP-initiated: our login route, then the IdP in a browser (a new one unless given) with `user`'s password; the cookie the login set is kept with the answer, as the browser would. */
async function idpAnswer(user: IdpUser, body: Record<string, unknown> = {}, browser = idp.browser()): Promise<Answer> {
  const start = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: body });
  expect(start.statusCode, start.body).toBe(200);
  return posted(await browser.visit(start.json().redirect_url, { username: user.username, password: user.password }), bindingSet(start));
}

/** The IdP's redirect to our SLS, as the path and query the browser would request. */
function toSls(page: IdpPage): string {
  if (page.kind !== 'redirect') throw new Error(`expected a redirect to our SLS, got ${JSON.stringify(page).slice(0, 1500)}\n${idp.log().slice(-4000)}`);
  const url = new URL(page.url);
  expect(`${url.origin}${url.pathname}`).toBe(`${SP}/api/v1/auth/saml/sls`);
  return `${url.pathname}${url.search}`;
}

const sessionActive = async (id: string) => (await db().selectFrom('sessions').select(['is_active', 'end_reason']).where('session_id', '=', id).executeTakeFirstOrThrow());

const acs = (answer: Answer) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/acs', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(answer.cookie ? { cookie: answer.cookie } : {}) }, payload: new URLSearchParams(answer.fields).toString() });

const db = () => t.s.database.db;
const userByName = (username: string) => db().selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
const usersNamed = async (username: string) => Number((await db().selectFrom('users').select((eb) => eb.fn.countAll().as('n')).where('username', '=', username).executeTakeFirstOrThrow()).n);
/** Users, sessions and one-time codes: what a refused browser sign-in must not add to. */
const created = async () => {
  const n = async (table: 'users' | 'sessions' | 'saml_codes') => Number((await db().selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return { users: await n('users'), sessions: await n('sessions'), codes: await n('saml_codes') };
};

describe('SP-initiated sign-in, answered as JSON', () => {
  it('provisions a new staff member: email as username, name, phone, roles from groups, the branch linked, the link and the IdP session remembered', async () => {
    const res = await acs(await idpAnswer(teller));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'bearer', user: { active: true }, user_profile: { username: teller.email, email: teller.email, full_name: 'Wanjiru Kamau', roles: ['staff'], channel: 'web', password_expires_at: null } });
    const user = (await userByName(teller.email!))!;
    expect(user.phone === null).toBe(false);
    const link = await db().selectFrom('user_identity_providers').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(link).toMatchObject({ idp_type: 'SAML', idp_subject: teller.username, idp_issuer: idp.entityId, active: true });
    const branches = await db().selectFrom('user_entities').innerJoin('entities', 'entities.id', 'user_entities.entity_id').select('entities.code').where('user_entities.user_id', '=', user.id).execute();
    expect(branches.map((b) => b.code)).toEqual(['NBO-001']);
    const remembered = await db().selectFrom('saml_sessions').selectAll().where('session_id', '=', body.session_id).executeTakeFirstOrThrow();
    expect(remembered).toMatchObject({ user_id: user.id, issuer: idp.entityId, name_id: teller.username });
    expect(remembered.session_index).toMatch(/.+/);
    const credential = await db().selectFrom('credentials').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(credential.password_hash).toBeNull();
    expect(await auditTotal(t.s, user.uuid, 'USER_PROVISIONED')).toBe(1);
    // The token works.
    const me = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(body.access_token) });
    expect(me.statusCode, me.body).toBe(200);
  });

  it('signs the same person in again through the link: the same account, nothing created', async () => {
    const before = (await userByName(teller.email!))!;
    const res = await acs(await idpAnswer(teller));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user.id).toBe(before.id);
    expect(await usersNamed(teller.email!)).toBe(1);
    expect(await auditTotal(t.s, before.uuid, 'USER_PROVISIONED')).toBe(1);
  });

  it('maps several groups to several roles, and does not link an inactive branch', async () => {
    const res = await acs(await idpAnswer(manager));
    const user = (await userByName(manager.email!))!;
    const roles = (await t.s.users.grants(user.id)).roles;
    expect(roles).toEqual(['admin', 'staff']);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user_profile.roles).toEqual(['admin', 'staff']);
    const branches = await db().selectFrom('user_entities').select('entity_id').where('user_id', '=', user.id).execute();
    expect(branches).toEqual([]);
  });

  it('links an existing customer by email (audited), and signs them in as that account', async () => {
    await seedUser(t.s, 'amina.local', { email: customer.email! });
    const local = (await userByName('amina.local'))!;
    const res = await acs(await idpAnswer(customer));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user.id).toBe(local.id);
    expect(await auditTotal(t.s, local.uuid, 'IDENTITY_LINKED')).toBe(1);
  });

  it('refuses to link an administrator by email: 409 IDENTITY_CONFLICT reason privileged_account, audited, no link', async () => {
    await seedUser(t.s, 'saml.root', { roles: ['admin'], email: root.email! });
    const admin = (await userByName('saml.root'))!;
    const res = await acs(await idpAnswer(root));
    expect(expectError(res, 409, 'IDENTITY_CONFLICT').details).toMatchObject({ reason: 'privileged_account' });
    expect(await db().selectFrom('user_identity_providers').select('id').where('user_id', '=', admin.id).execute()).toEqual([]);
    expect(await auditTotal(t.s, admin.uuid, 'IDENTITY_CONFLICT')).toBe(1);
  });

  it('refuses the same response posted twice: the request it answers is spent (401 SAML_VALIDATION_FAILED in_response_to)', async () => {
    const fields = await idpAnswer(teller);
    expect((await acs(fields)).statusCode).toBe(200);
    expect(expectError(await acs(fields), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'in_response_to' });
  });

  it('two parallel first sign-ins of one person create one user, one link', async () => {
    const answers = await Promise.all([idpAnswer(twin), idpAnswer(twin)]);
    const results = await Promise.all(answers.map(acs));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(new Set(results.map((r) => r.json().user.id)).size).toBe(1);
    expect(await usersNamed(twin.email!)).toBe(1);
    const user = (await userByName(twin.email!))!;
    expect(await db().selectFrom('user_identity_providers').select('id').where('user_id', '=', user.id).execute()).toHaveLength(1);
    expect(await auditTotal(t.s, user.uuid, 'USER_PROVISIONED')).toBe(1);
  });

  it('a wrong password at the IdP never reaches us: no response, nothing created', async () => {
    const start = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: {} });
    const page = await idp.browser().visit(start.json().redirect_url, { username: 'nobody-here', password: 'wrong' });
    expect(page.kind).toBe('page');
    expect(await usersNamed('nobody-here')).toBe(0);
  });
});

describe('the browser flow: 303 to the RelayState with a one-time code', () => {
  it('redirects to the allowed relay URL with #saml_code; the code is exchanged once for the tokens, bound to the client calling', async () => {
    const res = await acs(await idpAnswer(teller, { relay_state: `${APP}/after-login?tab=2` }));
    expect(res.statusCode, res.body).toBe(303);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}${location.search}`).toBe(`${APP}/after-login?tab=2`);
    const code = new URLSearchParams(location.hash.slice(1)).get('saml_code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const pending = await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/pending-2fa', headers: { 'x-saml-code': code } });
    expect(pending.statusCode, pending.body).toBe(200);
    expect(pending.json()).toEqual({ second_factor_required: false });
    const exchanged = await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': code, 'x-device-fingerprint': 'spa-device-1' } });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    expect(exchanged.json().user_profile).toMatchObject({ username: teller.email, roles: ['staff'] });
    expect(await db().selectFrom('saml_sessions').select('session_id').where('session_id', '=', exchanged.json().session_id).execute()).toHaveLength(1);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': code } }), 401, 'SAML_CODE_INVALID');
  });

  it('of ten parallel exchanges of one code, one gets the tokens and one session is opened', async () => {
    const res = await acs(await idpAnswer(teller, { relay_state: `${APP}/home` }));
    const code = new URLSearchParams(new URL(res.headers.location as string).hash.slice(1)).get('saml_code')!;
    const user = (await userByName(teller.email!))!;
    const sessionsBefore = (await db().selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).length;
    const all = await Promise.all(Array.from({ length: 10 }, () => t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': code } })));
    expect(all.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(all.filter((r) => r.statusCode === 401 && r.json().error_code === 'SAML_CODE_INVALID')).toHaveLength(9);
    expect((await db().selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).length).toBe(sessionsBefore + 1);
  });

  it('a code expires after a minute; an unknown one is 401 SAML_CODE_INVALID; no code header is 422 VALIDATION_ERROR', async () => {
    const res = await acs(await idpAnswer(teller, { relay_state: `${APP}/home` }));
    const code = new URLSearchParams(new URL(res.headers.location as string).hash.slice(1)).get('saml_code')!;
    t.clock.advance(60_001);
    try {
      expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': code } }), 401, 'SAML_CODE_INVALID');
    } finally {
      t.clock.advance(-60_001);
    }
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': 'A'.repeat(43) } }), 401, 'SAML_CODE_INVALID');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange' }), 422, 'VALIDATION_ERROR');
  });

  it('pending-2fa gives the challenge when a second factor is due (spending the code); exchange would answer it as every sign-in does', async () => {
    const codeOf = async () => {
      const res = await acs(await idpAnswer(operator, { relay_state: `${APP}/home` }));
      expect(res.statusCode, res.body).toBe(303);
      return new URLSearchParams(new URL(res.headers.location as string).hash.slice(1)).get('saml_code')!;
    };
    const code = await codeOf();
    const pending = await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/pending-2fa', headers: { 'x-saml-code': code } });
    expect(pending.statusCode, pending.body).toBe(200);
    expect(pending.json()).toMatchObject({ second_factor_required: true, error_code: 'MFA_SETUP_INCOMPLETE' });
    expect(pending.json().two_factor_token).toMatch(/^ey/);
    expect(pending.json().setup_methods).toContain('totp');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': code } }), 401, 'SAML_CODE_INVALID');
    const other = await codeOf();
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/exchange', headers: { 'x-saml-code': other } }), 403, 'MFA_SETUP_INCOMPLETE');
    const user = (await userByName(operator.email!))!;
    expect(await db().selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).toEqual([]);
    // Finishing with the factor opens the session, which remembers its IdP session (single logout finds it).
    const twoFactor = pending.json().two_factor_token as string;
    const setup = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/setup', payload: { two_factor_token: twoFactor } });
    expect(setup.statusCode, setup.body).toBe(200);
    const verify = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify', payload: { two_factor_token: twoFactor, code: Authenticator.scan(setup.json().qr_code).code(t.clock.now()) } });
    expect(verify.statusCode, verify.body).toBe(200);
    const sessionId = verify.json().sign_in.session_id as string;
    const origin = await db().selectFrom('saml_sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    expect(origin).toMatchObject({ user_id: user.id, issuer: idp.entityId, name_id: operator.username });
    expect(origin.session_index).toMatch(/.+/);
  });

  it('a refusal after the response was accepted goes back to the relay URL as #saml_error', async () => {
    const res = await acs(await idpAnswer(root, { relay_state: `${APP}/home` }));
    expect(res.statusCode).toBe(303);
    expect(new URL(res.headers.location as string).hash).toBe('#saml_error=IDENTITY_CONFLICT');
  });
});

describe('IdP-initiated sign-in', () => {
  it('is refused while allow_idp_initiated is off (401 SAML_VALIDATION_FAILED unsolicited); when on, without a RelayState URL it signs in as JSON', async () => {
    const page = await idp.browser().idpInitiated(`${SP}/saml`, { username: teller.username, password: teller.password });
    expect(expectError(await acs(posted(page)), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'unsolicited' });
    await configure({ allow_idp_initiated: true });
    try {
      const res = await acs(posted(await idp.browser().idpInitiated(`${SP}/saml`, { username: teller.username, password: teller.password })));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().user_profile.username).toBe(teller.email);
      expect(setCookies(res)).toEqual([]);
    } finally {
      await configure();
    }
  });

  it('threat: an IdP-initiated response into a browser (an allowed RelayState URL) is bound to no browser: no sign-in, it bounces to the IdP with a new AuthnRequest and cookie; the IdP\'s answer to that, in the same browser, gives the code; the unsolicited assertion again is replayed', async () => {
    await configure({ allow_idp_initiated: true });
    try {
      const browser = idp.browser();
      const unsolicited = posted(await browser.idpInitiated(`${SP}/saml`, { username: teller.username, password: teller.password }, `${APP}/landing`));
      const before = await created();
      const bounced = await acs(unsolicited);
      expect(bounced.statusCode, bounced.body).toBe(303);
      const location = new URL(bounced.headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(idp.ssoUrl);
      expect(location.searchParams.get('SAMLRequest')).toMatch(/.+/);
      const requestId = location.searchParams.get('RelayState')!;
      const cookie = bindingSet(bounced)!;
      expect(setCookies(bounced)).toEqual([`${cookie}; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=600`]);
      const row = await db().selectFrom('saml_requests').selectAll().where('id', '=', requestId).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ relay_url: `${APP}/landing`, channel: 'web' });
      expect(Buffer.from(row.browser_binding!)).toEqual(createHash('sha256').update(cookie.split('=')[1]!).digest());
      expect(await created()).toEqual(before);
      // The same assertion again: spent by the bounce (the replay cache refuses it), even as JSON.
      expect(expectError(await acs(unsolicited), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'replayed' });
      expect(expectError(await acs({ fields: { SAMLResponse: unsolicited.fields.SAMLResponse! } }), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'replayed' });
      // The browser follows the bounce: the IdP (signed in already) answers our request, and the browser posts it with the cookie.
      const res = await acs(posted(await browser.visit(location.toString()), cookie));
      expect(res.statusCode, res.body).toBe(303);
      expect((res.headers.location as string).startsWith(`${APP}/landing#saml_code=`)).toBe(true);
      expect(setCookies(res)).toEqual([`${BINDING}=; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=0`]);
    } finally {
      await configure();
    }
  });
});

describe('threat: a browser sign-in completed in a browser that did not start it', () => {
  const refusedMetric = async () => {
    const line = (await t.app.inject({ method: 'GET', url: '/metrics' })).body.split('\n').find((l) => l.startsWith('strongroom_saml_responses_refused_total{') && l.includes('reason="browser_binding"'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };

  it('saml/login sets the binding cookie only for a browser sign-in (relay_state): __Host-, Secure, HttpOnly, SameSite=None, for the request\'s lifetime', async () => {
    const bound = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: { relay_state: `${APP}/home` } });
    expect(bound.statusCode, bound.body).toBe(200);
    const [cookie] = setCookies(bound);
    expect(cookie).toMatch(/^__Host-strongroom_saml=[A-Za-z0-9_-]{43}; Path=\/; Secure; HttpOnly; SameSite=None; Max-Age=600$/);
    const row = await db().selectFrom('saml_requests').selectAll().where('id', '=', bound.json().request_id).executeTakeFirstOrThrow();
    expect(Buffer.from(row.browser_binding!)).toEqual(createHash('sha256').update(cookie!.split(';')[0]!.split('=')[1]!).digest());
    const unbound = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: {} });
    expect(setCookies(unbound)).toEqual([]);
    expect((await db().selectFrom('saml_requests').selectAll().where('id', '=', unbound.json().request_id).executeTakeFirstOrThrow()).browser_binding).toBeNull();
  });

  it('threat: login CSRF: the attacker\'s own valid response (a browser sign-in they started, at the IdP as themselves) auto-posted into the victim\'s browser, which has no cookie: 303 #saml_error=SAML_VALIDATION_FAILED; no user, session or code; counted', async () => {
    const attackers = await idpAnswer(mallory, { relay_state: `${APP}/home` });
    expect(attackers.cookie).toBeDefined(); // the attacker's browser holds it; the victim's does not
    const before = await created();
    const metric = await refusedMetric();
    const res = await acs({ fields: attackers.fields });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${APP}/home#saml_error=SAML_VALIDATION_FAILED`);
    expect(await created()).toEqual(before);
    expect(await usersNamed(mallory.email!)).toBe(0);
    expect(await refusedMetric()).toBe(metric + 1);
    // The request is spent: the attacker cannot try again with it, even with the right cookie.
    expect(expectError(await acs(attackers), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'in_response_to' });
  });

  it('threat: login CSRF into a browser that holds the cookie of its own pending sign-in: the attacker\'s response does not match it, refused alike', async () => {
    const victimsLogin = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: { relay_state: `${APP}/home` } });
    const victimsCookie = bindingSet(victimsLogin)!;
    const attackers = await idpAnswer(mallory, { relay_state: `${APP}/home` });
    expect(attackers.cookie).not.toBe(victimsCookie);
    const before = await created();
    const res = await acs({ fields: attackers.fields, cookie: victimsCookie });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${APP}/home#saml_error=SAML_VALIDATION_FAILED`);
    expect(setCookies(res)).toEqual([`${BINDING}=; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=0`]);
    expect(await created()).toEqual(before);
    expect(await usersNamed(mallory.email!)).toBe(0);
  });

  it('threat: code theft: the attacker starts a browser sign-in and sends the victim the IdP URL; the victim signs in, and their browser (without the attacker\'s cookie) gets no code', async () => {
    const start = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: { relay_state: `${APP}/home` } });
    const victimsBrowser = idp.browser();
    const victims = posted(await victimsBrowser.visit(start.json().redirect_url, { username: teller.username, password: teller.password }));
    const before = await created();
    const res = await acs(victims);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${APP}/home#saml_error=SAML_VALIDATION_FAILED`);
    expect(await created()).toEqual(before);
  });

  it('the happy path: the browser that started it posts the response with its cookie: a code, the cookie deleted', async () => {
    const answer = await idpAnswer(teller, { relay_state: `${APP}/home` });
    const before = await created();
    const res = await acs(answer);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(new RegExp(`^${APP}/home#saml_code=[A-Za-z0-9_-]{43}$`));
    expect(setCookies(res)).toEqual([`${BINDING}=; Path=/; Secure; HttpOnly; SameSite=None; Max-Age=0`]);
    expect(await created()).toEqual({ ...before, codes: before.codes + 1 });
  });

  it('several sign-ins in parallel tabs of one browser: the newest login\'s cookie wins, the older one\'s response is refused', async () => {
    const browser = idp.browser();
    const older = await idpAnswer(teller, { relay_state: `${APP}/tab-1` }, browser);
    const newer = await idpAnswer(teller, { relay_state: `${APP}/tab-2` }, browser);
    const res = await acs({ fields: older.fields, cookie: newer.cookie! });
    expect(res.headers.location).toBe(`${APP}/tab-1#saml_error=SAML_VALIDATION_FAILED`);
    const ok = await acs(newer);
    expect((ok.headers.location as string).startsWith(`${APP}/tab-2#saml_code=`)).toBe(true);
  });
});

describe('single logout', () => {
  it('the IdP signs the person out: a signed LogoutRequest at our SLS ends the session from that IdP session (audited), and the IdP accepts our signed LogoutResponse', async () => {
    const browser = idp.browser();
    const res = await acs(await idpAnswer(teller, {}, browser));
    expect(res.statusCode, res.body).toBe(200);
    const { session_id: sessionId, access_token: token } = res.json();
    const other = (await acs(await idpAnswer(teller))).json().session_id; // another browser, another IdP session
    const sls = toSls(await browser.startLogout());
    // Without its signature the request is refused and nothing ends.
    const unsigned = sls.replace(/&Signature=[^&]*/, '');
    expectError(await t.app.inject({ method: 'GET', url: unsigned }), 401, 'SAML_INVALID_SIGNATURE');
    expect((await sessionActive(sessionId)).is_active).toBe(true);
    const answered = await t.app.inject({ method: 'GET', url: sls });
    expect(answered.statusCode, answered.body).toBe(302);
    expect(await sessionActive(sessionId)).toEqual({ is_active: false, end_reason: 'idp_logout' });
    expect((await sessionActive(other)).is_active).toBe(true);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) }), 401, 'SESSION_INVALID');
    const user = (await userByName(teller.email!))!;
    expect(await auditTotal(t.s, user.uuid, 'SAML_LOGOUT')).toBeGreaterThanOrEqual(1);
    const location = new URL(answered.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(idp.sloUrl);
    expect(location.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    // Our LogoutResponse's signature verifies with the certificate our metadata publishes.
    const metadata = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' })).body;
    const spCert = /<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/.exec(metadata)![1]!;
    const raw = location.search.slice(1).split('&');
    const signed = ['SAMLResponse', 'RelayState', 'SigAlg'].map((k) => raw.find((p) => p.startsWith(`${k}=`))).filter(Boolean).join('&');
    expect(createVerify('RSA-SHA256').update(signed).verify(new X509Certificate(Buffer.from(spCert, 'base64')).publicKey, Buffer.from(location.searchParams.get('Signature')!, 'base64'))).toBe(true);
    const done = await browser.visit(location.toString());
    expect(done.kind, JSON.stringify(done).slice(0, 500)).toBe('page');
    expect(done).toMatchObject({ kind: 'page', status: 200 });
    // The IdP session is over: the same browser is asked for its password again.
    const start = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', payload: {} });
    expect((await browser.visit(start.json().redirect_url)).kind).toBe('page');
  });

  it('signing out here goes on to the IdP: the session ends at once, the IdP gets our signed LogoutRequest, its LogoutResponse brings the browser to relay_state', async () => {
    const browser = idp.browser();
    const res = await acs(await idpAnswer(teller, {}, browser));
    const { session_id: sessionId, access_token: token } = res.json();
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/logout', headers: bearer(token), payload: { relay_state: `${APP}/signed-out` } });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toMatchObject({ status: 'success', sessions_ended: 1 });
    expect((await sessionActive(sessionId)).is_active).toBe(false);
    const back = toSls(await browser.visit(out.json().redirect_url));
    const landed = await t.app.inject({ method: 'GET', url: back });
    expect(landed.statusCode, landed.body).toBe(303);
    expect(landed.headers.location).toBe(`${APP}/signed-out`);
    // The LogoutResponse is spent: posted again, refused.
    expect(expectError(await t.app.inject({ method: 'GET', url: back }), 401, 'SAML_VALIDATION_FAILED').details).toMatchObject({ reason: 'in_response_to' });
  });

  it('a session not from SAML signs out here only (redirect_url null)', async () => {
    const local = await signIn(t.app, 'saml.e2e.admin');
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/logout', headers: bearer(local.access_token), payload: {} });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toEqual({ status: 'success', sessions_ended: 1, redirect_url: null });
    adminToken = (await signIn(t.app, 'saml.e2e.admin')).access_token;
  });

  it('the metadata publishes the SP signing certificate the LogoutResponse was signed with', async () => {
    const metadata = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' })).body;
    expect(metadata).toMatch(/<md:KeyDescriptor use="signing">[\s\S]*<ds:X509Certificate>[A-Za-z0-9+/=]+<\/ds:X509Certificate>/);
  });
});
