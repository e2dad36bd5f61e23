/**
 * Push templates (issue 14 section 3) against the local FCM fake: SPEC's named templates seeded
 * in en, pt and fr; a send with a template and values is written in the user's language (en as
 * the fallback); a missing or unknown placeholder is refused and nothing is queued; a value is
 * never expanded again; administrators word the templates (audited) within the named templates'
 * placeholders; users choose their language.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let fcm: FakeFcm;
let t: TestApp;
let admin: string;

const TRANSFER = { debit_name: 'Amina Otieno', credit_name: 'Kofi Mensah', amount: '1,500.00', currency: 'KES', debit_account: '****4471', credit_account: '****9012', transaction_reference_id: 'TRX-20261126-0042' };
const token = (n: number): string => `tpl${n}:APA91bH2x7k3Lq9Zr0Xc3A_${'t'.repeat(90)}`;

/** A user with one active mobile device, in `language` (none: never chose). */
async function user(name: string, n: number, language?: 'en' | 'pt' | 'fr'): Promise<{ uuid: string; access: string }> {
  const { uuid } = await seedUser(t.s, name);
  const access = (await signIn(t.app, name)).access_token;
  expect((await t.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(access), payload: { push_token: token(n), platform: 'mobile' } })).statusCode).toBe(201);
  if (language) expect((await t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: bearer(access), payload: { language } })).json()).toEqual({ language });
  return { uuid, access };
}

const send = (body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/notifications/send', headers: bearer(admin), payload: body });
const templates = (query = '') => t.app.inject({ method: 'GET', url: `/api/v1/admin/notification-templates${query}`, headers: bearer(admin) });
const queuedFor = async (uuid: string) => Number((await t.s.db.selectFrom('push_messages').innerJoin('users', 'users.id', 'push_messages.user_id').select((eb) => eb.fn.countAll().as('n')).where('users.uuid', '=', uuid).executeTakeFirstOrThrow()).n);
async function delivered(n: number) {
  await t.scheduler.runNow('push delivery');
  return fcm.sent.filter((m) => m.token === token(n)).at(-1);
}

beforeAll(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({ env: fcm.env });
  await seedUser(t.s, 'templates.admin', { roles: ['admin'] });
  admin = (await signIn(t.app, 'templates.admin')).access_token;
});
afterAll(async () => {
  await t.close();
  await fcm.close();
});

describe('sending with a template', () => {
  it('INTERNAL_TRANSFER reaches a Portuguese-speaking user in Portuguese, with every value in place', async () => {
    const u = await user('tpl.maria', 1, 'pt');
    const res = await send({ user_id: u.uuid, template: 'INTERNAL_TRANSFER', values: TRANSFER, push_data: { kind: 'transfer' } });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'queued', queued: 1, language: 'pt' });
    expect(await delivered(1)).toEqual({
      token: token(1),
      notification: { title: 'Transferência concluída', body: 'Amina Otieno transferiu 1,500.00 KES da conta ****4471 para Kofi Mensah, conta ****9012. Referência TRX-20261126-0042.' },
      data: { kind: 'transfer' },
    });
  });

  it('French for a French speaker, English for a user who never chose', async () => {
    const fr = await user('tpl.jean', 2, 'fr');
    const en = await user('tpl.grace', 3);
    const deposit = { amount: '200.00', currency: 'XOF', account: '****1200', transaction_reference_id: 'DEP-7' };
    expect((await send({ user_id: fr.uuid, template: 'DEPOSIT', values: deposit })).json()).toMatchObject({ language: 'fr' });
    expect((await send({ user_id: en.uuid, template: 'DEPOSIT', values: deposit })).json()).toMatchObject({ language: 'en' });
    expect((await delivered(2))?.notification).toEqual({ title: 'Dépôt reçu', body: '200.00 XOF ont été déposés sur votre compte ****1200. Référence DEP-7.' });
    expect((await delivered(3))?.notification).toEqual({ title: 'Deposit received', body: '200.00 XOF was deposited to your account ****1200. Reference DEP-7.' });
  });

  it('a missing placeholder is refused (422 TEMPLATE_VALUES_INVALID naming it) and nothing is queued', async () => {
    const u = await user('tpl.missing', 4);
    const { currency: _omitted, ...values } = TRANSFER;
    const body = expectError(await send({ user_id: u.uuid, template: 'INTERNAL_TRANSFER', values }), 422, 'TEMPLATE_VALUES_INVALID');
    expect(body.details).toMatchObject({ template: 'INTERNAL_TRANSFER', missing: ['currency'], unknown: [] });
    expect(await queuedFor(u.uuid)).toBe(0);
  });

  it('a value the template has no placeholder for is refused too (a misspelt key would vanish silently)', async () => {
    const u = await user('tpl.unknown', 5);
    const body = expectError(await send({ user_id: u.uuid, template: 'INTERNAL_TRANSFER', values: { ...TRANSFER, ammount: '1' } }), 422, 'TEMPLATE_VALUES_INVALID');
    expect(body.details).toMatchObject({ missing: [], unknown: ['ammount'] });
    expect(await queuedFor(u.uuid)).toBe(0);
  });

  it('template injection: a value holding a placeholder is sent as text, never expanded', async () => {
    const u = await user('tpl.inject', 6);
    expect((await send({ user_id: u.uuid, template: 'INTERNAL_TRANSFER', values: { ...TRANSFER, debit_name: '{credit_account}{amount}' } })).statusCode).toBe(202);
    expect((await delivered(6))?.notification.body).toBe('{credit_account}{amount} sent 1,500.00 KES from account ****4471 to Kofi Mensah, account ****9012. Reference TRX-20261126-0042.');
  });

  it('SPEC\'s limits apply to the filled text: a body over 240 characters is 422 VALIDATION_ERROR naming body', async () => {
    const u = await user('tpl.long', 7);
    const body = expectError(await send({ user_id: u.uuid, template: 'INTERNAL_TRANSFER', values: { ...TRANSFER, debit_name: 'x'.repeat(200) } }), 422, 'VALIDATION_ERROR');
    expect(JSON.stringify(body.details)).toMatch(/"field":"body".*once the template is filled/);
    expect(await queuedFor(u.uuid)).toBe(0);
  });

  it('template and title together, values without a template, or neither: 422 VALIDATION_ERROR; an unknown template 404; control characters in values 422', async () => {
    const u = await user('tpl.shape', 8);
    expectError(await send({ user_id: u.uuid, template: 'DEPOSIT', values: {}, title: 'x', body: 'y' }), 422, 'VALIDATION_ERROR');
    expectError(await send({ user_id: u.uuid, title: 'x', body: 'y', values: { a: 'b' } }), 422, 'VALIDATION_ERROR');
    expectError(await send({ user_id: u.uuid }), 422, 'VALIDATION_ERROR');
    expect((expectError(await send({ user_id: u.uuid, template: 'NO_SUCH', values: {} }), 404, 'TEMPLATE_NOT_FOUND')).details).toMatchObject({ template: 'NO_SUCH' });
    expectError(await send({ user_id: u.uuid, template: 'DEPOSIT', values: { amount: '1\n2' } }), 422, 'VALIDATION_ERROR');
    expectError(await send({ user_id: u.uuid, template: 'bad name!', values: {} }), 422, 'VALIDATION_ERROR');
    expect(await queuedFor(u.uuid)).toBe(0);
  });
});

describe('template administration', () => {
  it('SPEC\'s four named templates are seeded in en, pt and fr', async () => {
    const res = await templates('?channel=push');
    expect(res.statusCode).toBe(200);
    const rows = (res.json() as { templates: Array<{ name: string; language: string; named: boolean; allowed_placeholders: string[] }> }).templates.filter((r) => r.named);
    expect(rows.map((r) => `${r.name}/${r.language}`).sort()).toEqual(['DEPOSIT', 'INITIAL_DEPOSIT', 'INTERNAL_TRANSFER', 'send2FA'].flatMap((n) => ['en', 'fr', 'pt'].map((l) => `${n}/${l}`)).sort());
    expect(rows.find((r) => r.name === 'INTERNAL_TRANSFER')!.allowed_placeholders).toHaveLength(7);
  });

  it('every route needs notifications.templates: a customer gets 403 PERMISSION_DENIED, nobody 401; nothing changes', async () => {
    const u = await user('tpl.nosy', 9);
    const [one] = (await templates('?name=DEPOSIT&language=en')).json().templates as Array<{ id: string; subject: string }>;
    const routes = [
      { method: 'GET', url: '/api/v1/admin/notification-templates' },
      { method: 'GET', url: `/api/v1/admin/notification-templates/${one!.id}` },
      { method: 'POST', url: '/api/v1/admin/notification-templates', payload: { name: 'NOSY', language: 'en', subject: 's', message: 'm' } },
      { method: 'PUT', url: `/api/v1/admin/notification-templates/${one!.id}`, payload: { subject: 'Hacked', message: 'Call +1 555 0100' } },
      { method: 'DELETE', url: `/api/v1/admin/notification-templates/${one!.id}` },
      { method: 'POST', url: `/api/v1/admin/notification-templates/${one!.id}/preview`, payload: { values: {} } },
    ] as const;
    for (const r of routes) {
      expectError(await t.app.inject({ ...r, headers: bearer(u.access) }), 403, 'PERMISSION_DENIED');
      expectError(await t.app.inject(r), 401, 'TOKEN_MISSING');
    }
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/notification-templates/${one!.id}`, headers: bearer(admin) })).json()).toMatchObject({ subject: one!.subject });
    expect((await templates('?name=NOSY')).json()).toEqual({ templates: [] });
  });

  it('hostile input: names that are Object.prototype keys work like any other; control, bidirectional and NUL characters and lone surrogates are 422, never 500', async () => {
    const create = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/admin/notification-templates', headers: bearer(admin), payload });
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const res = await create({ name, language: 'en', subject: 'Hello {x}', message: 'A {x} message' });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ name, named: false, allowed_placeholders: ['x'] });
      const preview = await t.app.inject({ method: 'POST', url: `/api/v1/admin/notification-templates/${res.json().id}/preview`, headers: bearer(admin), payload: { values: { x: 'y' } } });
      expect(preview.json()).toEqual({ language: 'en', title: 'Hello y', body: 'A y message' });
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/notification-templates/${res.json().id}`, headers: bearer(admin) })).statusCode).toBe(200);
    }
    expect((await templates()).statusCode).toBe(200);
    for (const [field, text] of [['subject', 'a\u0000b'], ['subject', 'line\nbreak'], ['message', 'bell\u0007'], ['message', '1,500.00 \u202EKES'], ['subject', 'half \ud800 pair'], ['message', 'C1 \u0085 control']] as const) {
      const payload = { name: 'HOSTILE', language: 'en', subject: 'ok', message: 'ok', [field]: text };
      const body = expectError(await create(payload), 422, 'TEMPLATE_INVALID');
      expect(JSON.stringify(body.details), JSON.stringify(text)).toContain(field);
    }
    const u = await user('tpl.hostile', 13);
    const service = (body: Record<string, unknown>) => send({ user_id: u.uuid, ...body });
    for (const body of [
      { title: 'a\u0000b', body: 'x' }, { title: 'x', body: 'RTL \u202Eoverride' }, { title: 'x', body: 'y', push_data: { k: 'half \ud800' } },
      { title: 'x', body: 'y', push_data: { 'k\u0000': 'v' } }, { title: 'x', body: 'y', image_url: 'https://cdn.bank.example/\u0000.png' },
      { template: 'DEPOSIT', values: { amount: '\u202E1', currency: 'KES', account: 'a', transaction_reference_id: 'r' } },
    ]) expectError(await service(body), 422, 'VALIDATION_ERROR');
    expect((await service({ title: 'Statement', body: 'Line one\nLine two' })).statusCode).toBe(202); // a line break in a body is fine
    expect(await queuedFor(u.uuid)).toBe(1);
  });

  it('send2FA must keep {code} in every language (a reworded template can never send a code-less message)', async () => {
    const [fr] = (await templates('?name=send2FA&language=fr')).json().templates as Array<{ id: string }>;
    const body = expectError(await t.app.inject({ method: 'PUT', url: `/api/v1/admin/notification-templates/${fr!.id}`, headers: bearer(admin), payload: { subject: 'Votre code', message: 'Appelez le +33 1 23 45 67 89 pour obtenir votre code.' } }), 422, 'TEMPLATE_INVALID');
    expect(JSON.stringify(body.details)).toContain('{code}');
    expect((await t.app.inject({ method: 'PUT', url: `/api/v1/admin/notification-templates/${fr!.id}`, headers: bearer(admin), payload: { subject: 'Code {code}', message: 'Valable {validity_minutes} minutes.' } })).statusCode).toBe(200); // in the title is enough
  });

  it('concurrency: twenty parallel creations of one template and language make one row and one audit entry; the rest are 409 TEMPLATE_EXISTS', async () => {
    const create = () => t.app.inject({ method: 'POST', url: '/api/v1/admin/notification-templates', headers: bearer(admin), payload: { name: 'BURST', language: 'en', subject: 'Burst', message: 'Once {x}' } });
    const results = await Promise.all(Array.from({ length: 20 }, create));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, 'TEMPLATE_EXISTS');
    expect((await templates('?name=BURST')).json().templates).toHaveLength(1);
    const audited = (await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'NOTIFICATION_TEMPLATE_CREATED').execute()).filter((a) => a.details.name === 'BURST');
    expect(audited).toHaveLength(1);
  });

  it('a language other than en needs the en version first (409 TEMPLATE_FALLBACK_MISSING): no template some users would get 404 for', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/notification-templates', headers: bearer(admin), payload: { name: 'PT_ONLY', language: 'pt', subject: 'Olá', message: 'Mensagem' } });
    expectError(res, 409, 'TEMPLATE_FALLBACK_MISSING');
    expect((await templates('?name=PT_ONLY')).json()).toEqual({ templates: [] });
  });

  it('rewording: the next send uses the new text; a named template cannot gain a placeholder its callers do not send, nor a stray brace', async () => {
    const [en] = (await templates('?name=INITIAL_DEPOSIT&language=en')).json().templates as Array<{ id: string }>;
    const put = (payload: Record<string, unknown>) => t.app.inject({ method: 'PUT', url: `/api/v1/admin/notification-templates/${en!.id}`, headers: bearer(admin), payload });
    const bad = expectError(await put({ subject: 'Welcome', message: 'Welcome {name}, your branch is {branch}.' }), 422, 'TEMPLATE_INVALID');
    expect(JSON.stringify(bad.details)).toContain('{branch}');
    expectError(await put({ subject: 'Welcome {name', message: 'Welcome.' }), 422, 'TEMPLATE_INVALID');
    const ok = await put({ subject: 'Welcome aboard', message: 'Hello {name}: account {account} opened with {amount} {currency}.' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ subject: 'Welcome aboard', placeholders: ['name', 'account', 'amount', 'currency'] });
    const u = await user('tpl.new', 10);
    expect((await send({ user_id: u.uuid, template: 'INITIAL_DEPOSIT', values: { name: 'Wanjiru', account: '****0001', amount: '50.00', currency: 'KES' } })).statusCode).toBe(202);
    expect((await delivered(10))?.notification).toEqual({ title: 'Welcome aboard', body: 'Hello Wanjiru: account ****0001 opened with 50.00 KES.' });
    const audit = (await t.s.db.selectFrom('audit_log').select(['event_type', 'username', 'details']).where('event_type', '=', 'NOTIFICATION_TEMPLATE_UPDATED').execute()).filter((a) => a.details.name === 'INITIAL_DEPOSIT');
    expect(audit).toEqual([{ event_type: 'NOTIFICATION_TEMPLATE_UPDATED', username: 'templates.admin', details: expect.objectContaining({ template_id: en!.id, name: 'INITIAL_DEPOSIT', language: 'en' }) }]);
  });

  it('a template of the bank\'s own: created (201), 409 TEMPLATE_EXISTS twice, sent, previewed; its en stays while other languages exist; a language deleted falls back to en', async () => {
    const create = (language: string, subject: string, message: string) => t.app.inject({ method: 'POST', url: '/api/v1/admin/notification-templates', headers: bearer(admin), payload: { name: 'LOAN_DUE', language, subject, message } });
    const en = await create('en', 'Loan payment due', '{amount} {currency} is due on {due_date}.');
    expect(en.statusCode, en.body).toBe(201);
    expect(en.json().id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const pt = await create('pt', 'Prestação a pagar', '{amount} {currency} a pagar até {due_date}.');
    expect(pt.statusCode).toBe(201);
    expect(expectError(await create('en', 'again', 'again'), 409, 'TEMPLATE_EXISTS').details).toMatchObject({ id: en.json().id });
    const preview = await t.app.inject({ method: 'POST', url: `/api/v1/admin/notification-templates/${pt.json().id}/preview`, headers: bearer(admin), payload: { values: { amount: '300.00', currency: 'MZN', due_date: '30/11' } } });
    expect(preview.json()).toEqual({ language: 'pt', title: 'Prestação a pagar', body: '300.00 MZN a pagar até 30/11.' });
    const del = (id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/admin/notification-templates/${id}`, headers: bearer(admin) });
    expectError(await del(en.json().id), 409, 'TEMPLATE_REQUIRED');
    const u = await user('tpl.loan', 11, 'pt');
    const values = { amount: '300.00', currency: 'MZN', due_date: '30/11' };
    expect((await send({ user_id: u.uuid, template: 'LOAN_DUE', values })).json()).toMatchObject({ language: 'pt' });
    expect((await delivered(11))?.notification).toEqual({ title: 'Prestação a pagar', body: '300.00 MZN a pagar até 30/11.' });
    expect((await del(pt.json().id)).json()).toEqual({ deleted: true, id: pt.json().id });
    expect((await send({ user_id: u.uuid, template: 'LOAN_DUE', values })).json()).toMatchObject({ language: 'en' });
    expect((await delivered(11))?.notification).toEqual({ title: 'Loan payment due', body: '300.00 MZN is due on 30/11.' });
    expectError(await del(pt.json().id), 404, 'TEMPLATE_NOT_FOUND');
    // The en of a named template is everyone's fallback: never deleted.
    const [named] = (await templates('?name=DEPOSIT&language=en')).json().templates as Array<{ id: string }>;
    expectError(await del(named!.id), 409, 'TEMPLATE_REQUIRED');
    const events = (await t.s.db.selectFrom('audit_log').select(['event_type', 'details']).where('event_type', 'like', 'NOTIFICATION_TEMPLATE_%').execute()).filter((r) => r.details.name === 'LOAN_DUE').map((r) => r.event_type);
    expect(events.filter((e) => e === 'NOTIFICATION_TEMPLATE_CREATED')).toHaveLength(2);
    expect(events.filter((e) => e === 'NOTIFICATION_TEMPLATE_DELETED')).toHaveLength(1);
  });

  it('preview of a draft (an editor\'s live preview): the unsaved text filled; a placeholder the callers do not send or a stray brace is 422 TEMPLATE_INVALID naming the field, a value the draft lacks 422 TEMPLATE_VALUES_INVALID; nothing is saved', async () => {
    const [pt] = (await templates('?name=DEPOSIT&language=pt')).json().templates as Array<{ id: string; subject: string; message: string }>;
    const preview = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: `/api/v1/admin/notification-templates/${pt!.id}/preview`, headers: bearer(admin), payload });
    const values = { amount: '1,500.00', currency: 'KES', account: '****4471', transaction_reference_id: 'TRX-1' };
    const ok = await preview({ values: { amount: '1,500.00', account: '****4471' }, message: 'Recebeu {amount} na conta {account}.' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ language: 'pt', title: pt!.subject, body: 'Recebeu 1,500.00 na conta ****4471.' });
    expect((await preview({ values, subject: 'Depósito de {amount}' })).json()).toMatchObject({ title: 'Depósito de 1,500.00' });
    const unknown = expectError(await preview({ values, message: 'Recebeu {amount} de {sender}.' }), 422, 'TEMPLATE_INVALID');
    expect(unknown.details).toMatchObject({ fields: [{ field: 'message', message: expect.stringContaining('{sender}') as string }] });
    expect(expectError(await preview({ values, subject: 'Depósito {amount' }), 422, 'TEMPLATE_INVALID').details).toMatchObject({ fields: [{ field: 'subject', message: expect.stringContaining('brace') as string }] });
    expect(expectError(await preview({ values: { amount: '1' }, message: 'Recebeu {amount} {currency}.' }), 422, 'TEMPLATE_VALUES_INVALID').details).toMatchObject({ missing: ['currency'] });
    expectError(await preview({ values, message: ' ' }), 422, 'VALIDATION_ERROR');
    expect((await templates('?name=DEPOSIT&language=pt')).json().templates[0]).toMatchObject({ subject: pt!.subject, message: pt!.message });
  });

  it('threat: an integer notification template id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const [one] = (await templates('?name=DEPOSIT&language=pt')).json().templates as Array<{ id: string }>;
    const row = await t.s.db.selectFrom('notification_templates').selectAll().where('uuid', '=', one!.id).executeTakeFirstOrThrow();
    const url = `/api/v1/admin/notification-templates/${row.id}`;
    for (const r of [
      { method: 'GET', url }, { method: 'PUT', url, payload: { subject: 'Changed', message: 'Changed {amount}' } },
      { method: 'DELETE', url }, { method: 'POST', url: `${url}/preview`, payload: { values: {} } },
    ] as const) {
      const body = expectError(await t.app.inject({ ...r, headers: bearer(admin) }), 422, 'VALIDATION_ERROR');
      expect(body.details, r.method).toMatchObject({ expected: 'uuid', fields: [{ location: 'params', field: 'id' }] });
      expect(body.message).toContain('GET /api/v1/admin/notification-templates');
    }
    expect(await t.s.db.selectFrom('notification_templates').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()).toEqual(row);
  });
});

describe('the user\'s language', () => {
  it('is en until chosen; pt, fr accepted and audited; anything else 422; an administrator may set it at creation', async () => {
    const u = await user('tpl.lang', 12);
    const get = () => t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(u.access) });
    expect((await get()).json()).toEqual({ language: 'en' });
    expect((await t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: bearer(u.access), payload: { language: 'en' } })).json()).toEqual({ language: 'en' }); // no change: not audited
    expect((await t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: bearer(u.access), payload: { language: 'fr' } })).json()).toEqual({ language: 'fr' });
    expect((await get()).json()).toEqual({ language: 'fr' });
    expectError(await t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: bearer(u.access), payload: { language: 'de' } }), 422, 'VALIDATION_ERROR');
    expect((await get()).json()).toEqual({ language: 'fr' });
    const audit = await t.s.db.selectFrom('audit_log').select(['details']).where('event_type', '=', 'NOTIFICATION_LANGUAGE_CHANGED').where('username', '=', 'tpl.lang').execute();
    expect(audit.map((a) => a.details)).toEqual([{ from: 'en', to: 'fr' }]);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences' })).statusCode).toBe(401);

    const created = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(admin), payload: { username: 'tpl.created', roles: ['customer'], language: 'pt' } });
    expect(created.statusCode, created.body).toBe(201);
    expect((await t.s.db.selectFrom('users').select('language').where('username', '=', 'tpl.created').executeTakeFirstOrThrow()).language).toBe('pt');
  });
});
