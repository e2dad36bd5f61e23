/**
 * Profile rectification (issue 28): the owner reads and corrects their profile. Name, language
 * and date of birth change at once (the date encrypted at rest); a new email or phone only once
 * the code sent to it (over real SMTP, through the SMS gateway) is entered, the old address told
 * at the request and at the change, the blind indexes following. Threats: testing whether an
 * address is another account's (the request answers a taken address as a free one, sends it
 * nothing; the confirmation checks again), replayed, expired and wrong codes, a burst of guesses,
 * a stolen session without the password, a directory account editing the provider's fields.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENCRYPTED_COLUMNS } from '../../src/platform/crypto/columns.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { startSmsGateway, type TestSmsGateway } from '../harness/sms-gateway.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

let t: TestApp;
let smtp: TestSmtp;
let gw: TestSmsGateway;
let n = 0;

const PROFILE = '/api/v1/auth/profile';
const UPDATE = '/api/v1/auth/profile/update';
const VERIFY = '/api/v1/auth/profile/verify-contact';

interface Person { username: string; uuid: string; id: number; token: string; email: string; phone: string }

/** A fresh customer with an email and a phone, signed in. */
async function person(tag: string): Promise<Person> {
  n += 1;
  const username = `prof.${tag}.${n}`;
  const email = `${tag}.${n}@bank.example`;
  const phone = `+2547001${String(n).padStart(5, '0')}`;
  const user = await seedUser(t.s, username, { email, phone });
  const token = (await signIn(t.app, username)).access_token;
  return { username, uuid: user.uuid, id: user.id, token, email, phone };
}

/** A profile update; codes go out after the answer, so this waits for their delivery before the test reads a mailbox. */
async function update(p: Person, payload: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'PUT', url: UPDATE, headers: bearer(p.token), payload });
  await t.s.profile.settled();
  return res;
}
const verify = (p: Person, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: VERIFY, headers: bearer(p.token), payload });
/** A contact change asked for, which must succeed (a code sent). */
async function ask(p: Person, payload: Record<string, unknown>): Promise<void> {
  const res = await update(p, { current_password: STRONG_PASSWORD, ...payload });
  expect(res.statusCode, res.body).toBe(200);
}
const read = async (p: Person) => (await t.app.inject({ method: 'GET', url: PROFILE, headers: bearer(p.token) })).json().profile as Record<string, unknown>;

const mailCode = (address: string): string => /^Code: (\d{6})$/m.exec(smtp.to(address).at(-1)!.text)![1]!;
const smsCode = (phone: string): string => /^(\d{6}) /.exec(gw.latest(phone)!.message)![1]!;
const wrong = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

beforeAll(async () => {
  smtp = await startSmtp();
  gw = await startSmsGateway();
  t = await createTestApp({
    env: {
      DB_FIELD_ENCRYPTION: '1', SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>',
      SMS_GATEWAY_URL: gw.url, SMS_GATEWAY_TOKEN: gw.token, SMS_GATEWAY_TIMEOUT_MS: '1000', OTP_RESEND_SECONDS: '0',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await gw?.close();
});

describe('profile: read and immediate fields', () => {
  it('reads the owner\'s profile: contacts in clear, language en by default, no date of birth, nothing pending', async () => {
    const p = await person('read');
    expect(await read(p)).toEqual({
      id: p.uuid, username: p.username, full_name: null, email: p.email, phone: p.phone, language: 'en', date_of_birth: null, managed_by: null, pending_contact_changes: [],
    });
  });

  it('name, language and date of birth change at once; the date is encrypted at rest; audited with field names only', async () => {
    const p = await person('fields');
    const res = await update(p, { full_name: ' Amina W. Otieno ', language: 'pt', date_of_birth: '1988-04-17' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ changed: ['full_name', 'language', 'date_of_birth'], codes_sent: [], profile: { full_name: 'Amina W. Otieno', language: 'pt', date_of_birth: '1988-04-17' } });
    const row = await t.s.db.selectFrom('users').select(['date_of_birth', 'full_name', 'language']).where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(row.date_of_birth).not.toContain('1988');
    expect(t.s.sensitive.reveal(row.date_of_birth!, ENCRYPTED_COLUMNS.usersDateOfBirth.context)).toBe('1988-04-17');
    const [entry] = (await t.s.audit.query({ userId: p.uuid, eventType: 'PROFILE_UPDATED', limit: 1, offset: 0 })).entries;
    expect(entry!.details).toEqual({ fields: ['full_name', 'language', 'date_of_birth'] });
    expect(JSON.stringify(entry)).not.toContain('1988');
    // The same values again change nothing and audit nothing; null clears the date.
    expect((await update(p, { full_name: 'Amina W. Otieno', language: 'pt' })).json().changed).toEqual([]);
    expect((await update(p, { date_of_birth: null })).json()).toMatchObject({ changed: ['date_of_birth'], profile: { date_of_birth: null } });
    expect(await auditTotal(t.s, p.uuid, 'PROFILE_UPDATED')).toBe(2);
    expect((await t.s.profiles.profileOf(t.s.db, p.id))).toMatchObject({ dateOfBirth: null, user: { full_name: 'Amina W. Otieno', language: 'pt' } });
  });

  it('validation errors are 422 naming the field, and change nothing', async () => {
    const p = await person('invalid');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ phone: '0712 345 678', current_password: STRONG_PASSWORD }, 'phone'],
      [{ date_of_birth: '1988-02-30' }, 'date_of_birth'],
      [{ date_of_birth: '17/04/1988' }, 'date_of_birth'],
      [{ date_of_birth: '2999-01-01' }, 'date_of_birth'],
      [{ date_of_birth: '1850-01-01' }, 'date_of_birth'],
      [{ language: 'de' }, 'language'],
      [{ email: 'not-an-email', current_password: STRONG_PASSWORD }, 'email'],
      [{ email: 'new.invalid@bank.example' }, 'current_password'],
      [{ username: 'someone.else' }, 'username'],
    ];
    for (const [body, field] of cases) {
      const e = expectError(await update(p, { full_name: 'Changed', ...body }), 422, 'VALIDATION_ERROR');
      expect(JSON.stringify((e.details as { fields: unknown[] }).fields), JSON.stringify(body)).toContain(`"${field}"`);
    }
    expect(await read(p)).toMatchObject({ full_name: null, date_of_birth: null, email: p.email });
  });
});

describe('profile: email and phone change with a code to the new address', () => {
  it('email end to end: code to the new address, old address told twice, sign-in by the new email only', async () => {
    const p = await person('email');
    const next = `moved.${p.username}@bank.example`;
    const res = await update(p, { email: next, current_password: STRONG_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ changed: [], codes_sent: [{ kind: 'email', destination: 'm***@bank.example', expires_in: 300 }], profile: { email: p.email } });
    expect((res.json().profile as { pending_contact_changes: unknown[] }).pending_contact_changes).toMatchObject([{ kind: 'email', destination: 'm***@bank.example' }]);
    expect(smtp.to(next).at(-1)!.subject).toBe('Confirm your new email address');
    expect(smtp.to(p.email).at(-1)!.subject).toBe('A change of your email address was requested');
    expect(smtp.to(p.email).at(-1)!.text).not.toContain(next);
    // Until the code is entered, nothing changed: the old email still signs in.
    expect((await login(t.app, p.email)).statusCode).toBe(200);
    const row = await t.s.db.selectFrom('profile_contact_changes').selectAll().where('user_id', '=', p.id).executeTakeFirstOrThrow();
    expect(row.new_value).not.toContain('moved.');
    expect(row.code_hash).not.toContain(mailCode(next));

    const ok = await verify(p, { kind: 'email', code: mailCode(next) });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ changed: 'email', profile: { email: next, pending_contact_changes: [] } });
    expect(smtp.to(p.email).at(-1)!.subject).toBe('Your email address has been changed');
    expect((await login(t.app, next)).statusCode).toBe(200);
    expectError(await login(t.app, p.email), 401, 'INVALID_CREDENTIALS');
    const stored = await t.s.db.selectFrom('users').select(['email', 'email_bidx']).where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(stored.email).not.toContain('moved.');
    expect((await t.s.users.findByLogin(next))!.id).toBe(p.id);
    const [changed] = (await t.s.audit.query({ userId: p.uuid, eventType: 'CONTACT_CHANGED', limit: 1, offset: 0 })).entries;
    expect(changed!.details).toMatchObject({ kind: 'email', from: `${p.email[0]}***@bank.example`, to: 'm***@bank.example' });
    expect(JSON.stringify(changed)).not.toContain(next);
    const [requested] = (await t.s.audit.query({ userId: p.uuid, eventType: 'CONTACT_CHANGE_REQUESTED', limit: 1, offset: 0 })).entries;
    expect(JSON.stringify(requested)).not.toContain(next);
  });

  it('phone end to end: the code by SMS to the new number, the old number told, the phone index follows', async () => {
    const p = await person('phone');
    const next = `+2547009${String(n).padStart(5, '0')}`;
    const res = await update(p, { phone: next, current_password: STRONG_PASSWORD, language: 'fr' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ changed: ['language'], codes_sent: [{ kind: 'phone' }] });
    expect(gw.latest(p.phone)!.message).toContain('was requested');
    const ok = await verify(p, { kind: 'phone', code: smsCode(next) });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().profile).toMatchObject({ phone: next, language: 'fr' });
    expect(gw.latest(p.phone)!.message).toContain('votre numéro a été remplacé'); // told in the language chosen meanwhile
    expect((await t.s.users.findByPhone(next))!.id).toBe(p.id);
    expect(await t.s.users.findByPhone(p.phone)).toBeUndefined();
  });

  it('stolen session without the password: 401 INVALID_CREDENTIALS, nothing sent, nothing pending', async () => {
    const p = await person('stolen');
    const before = smtp.messages.length;
    expectError(await update(p, { email: `thief.${n}@evil.example`, current_password: WRONG_PASSWORD, full_name: 'Thief' }), 401, 'INVALID_CREDENTIALS');
    expect(smtp.messages.length).toBe(before);
    expect(await read(p)).toMatchObject({ full_name: null, pending_contact_changes: [] });
  });

  it('stolen session and password of an account with a second factor: 403 STEP_UP_REQUIRED', async () => {
    const p = await person('stepup');
    await t.s.db.transaction().execute(async (trx) => t.s.factors.activate(trx, (await t.s.users.findById(p.id, trx))!, 'email', new Date(t.clock.now())));
    expectError(await update(p, { email: `stepup.${n}@evil.example`, current_password: STRONG_PASSWORD }), 403, 'STEP_UP_REQUIRED');
  });
});

describe('profile: threats to a contact change', () => {
  it('account enumeration by a profile update: the answers for a taken and a free address are the same, and the taken address\'s owner receives nothing', async () => {
    const p = await person('probe');
    const holder = await person('holder'); // holder.N@bank.example: masked h***@bank.example
    const free = `h.free.${n}@bank.example`; // the same mask
    const notices = () => smtp.to(p.email).filter((m) => m.subject === 'A change of your email address was requested').length;
    const ownerMail = smtp.to(holder.email).length;
    const noticesBefore = notices();
    const answerOf = async (email: string) => {
      const res = await update(p, { email, current_password: STRONG_PASSWORD, full_name: `Name for ${email === free ? 'one' : 'other'}` });
      return { status: res.statusCode, type: res.headers['content-type'], body: res.body.replace(/Name for (one|other)/, 'Name for *') };
    };

    const taken = await answerOf(holder.email);
    const [takenChange] = (await t.s.audit.query({ userId: p.uuid, eventType: 'CONTACT_CHANGE_REQUESTED', limit: 1, offset: 0 })).entries;
    // Confirming it can never work: no code went out, and any code is a wrong one (attempts counted down alike).
    const guess = expectError(await verify(p, { kind: 'email', code: '123456' }), 401, 'OTP_INVALID');
    const freeAnswer = await answerOf(free);
    const [freeChange] = (await t.s.audit.query({ userId: p.uuid, eventType: 'CONTACT_CHANGE_REQUESTED', limit: 1, offset: 0 })).entries;
    const wrongGuess = expectError(await verify(p, { kind: 'email', code: wrong(mailCode(free)) }), 401, 'OTP_INVALID');

    expect(taken.status, taken.body).toBe(200);
    expect(taken).toEqual(freeAnswer);
    expect(JSON.parse(taken.body)).toMatchObject({ codes_sent: [{ kind: 'email', destination: 'h***@bank.example' }], profile: { email: p.email, pending_contact_changes: [{ kind: 'email', destination: 'h***@bank.example' }] } });
    expect({ ...guess, message: '', details: { ...(guess.details as object), request_id: '' } }).toEqual({ ...wrongGuess, message: '', details: { ...(wrongGuess.details as object), request_id: '' } });
    // The person's own trail reads alike (only the change id differs), and their old address was told both times.
    const shape = (e: typeof takenChange) => ({ status: e!.status, details: { ...e!.details, change_id: typeof e!.details.change_id } });
    expect(shape(takenChange)).toEqual(shape(freeChange));
    expect(notices()).toBe(noticesBefore + 2);
    const rows = await t.s.db.selectFrom('profile_contact_changes').select(['id', 'delivery_status']).where('user_id', '=', p.id).orderBy('created_at').execute();
    expect(rows.map((r) => r.delivery_status)).toEqual(['sent', 'sent']); // the person's export shows this column
    // The owner of the taken address got nothing; the refusal is audited for no account, the address masked.
    expect(smtp.to(holder.email).length).toBe(ownerMail);
    const refused = (await t.s.audit.query({ eventType: 'CONTACT_CHANGE_FAILED', limit: 50, offset: 0 })).entries.filter((e) => e.details.change_id === takenChange!.details.change_id && e.user_id === null);
    expect(refused.map((e) => ({ user_id: e.user_id, username: e.username, details: e.details }))).toEqual([
      { user_id: null, username: null, details: { kind: 'email', change_id: takenChange!.details.change_id, reason: 'identifier_taken', to: 'h***@bank.example', code_sent: false } },
    ]);
    expect(JSON.stringify(refused)).not.toContain(holder.email);
    expect((await t.s.audit.query({ userId: p.uuid, eventType: 'CONTACT_CHANGE_FAILED', limit: 50, offset: 0 })).entries.map((e) => e.details.reason)).toEqual(['invalid_code', 'invalid_code']);

    // Another's phone, and an email that is another account's username: 200 alike, nothing sent there, never confirmed.
    const sms = gw.messages.length;
    const byPhone = await update(p, { phone: holder.phone, current_password: STRONG_PASSWORD });
    expect(byPhone.statusCode, byPhone.body).toBe(200);
    expect(byPhone.json()).toMatchObject({ codes_sent: [{ kind: 'phone', expires_in: 300 }] });
    expect(gw.messages.slice(sms).map((m) => m.to)).toEqual([p.phone]); // the notice to the person's own number, nothing to the holder
    const username = `taken.name.${n}@bank.example`;
    await seedUser(t.s, username);
    expect((await update(p, { email: username, current_password: STRONG_PASSWORD })).statusCode).toBe(200);
    expect(smtp.to(username)).toEqual([]);
    expect(await read(p)).toMatchObject({ email: p.email, phone: p.phone });
  });

  it('another account took the address between request and confirmation: 409 at confirmation, never 500; the change is void', async () => {
    const a = await person('race.a');
    const b = await person('race.b');
    const target = `contested.${n}@bank.example`;
    expect((await update(a, { email: target, current_password: STRONG_PASSWORD })).statusCode).toBe(200);
    const codeA = mailCode(target);
    expect((await update(b, { email: target, current_password: STRONG_PASSWORD })).statusCode).toBe(200);
    expect((await verify(b, { kind: 'email', code: mailCode(target) })).statusCode).toBe(200);
    expectError(await verify(a, { kind: 'email', code: codeA }), 409, 'IDENTIFIER_CONFLICT');
    expect(await read(a)).toMatchObject({ email: a.email, pending_contact_changes: [] });
    expectError(await verify(a, { kind: 'email', code: codeA }), 404, 'CONTACT_CHANGE_NOT_PENDING');
  });

  it('the unique blind index has the last word: a write that loses the race is 409, never 500', async () => {
    const a = await person('index.a');
    const b = await person('index.b');
    const target = `index.${n}@bank.example`;
    expect((await update(a, { email: target, current_password: STRONG_PASSWORD })).statusCode).toBe(200);
    // The check under the lock sees the address free (as if the other write had not committed yet); the index refuses it.
    vi.spyOn(t.s.users, 'contactsTakenLocked').mockResolvedValueOnce({ email: false, phone: false, crossed: [] });
    await t.s.db.updateTable('users').set({ email_bidx: t.s.keys.blindIndex('blind-index').of(target) }).where('id', '=', b.id).execute();
    expectError(await verify(a, { kind: 'email', code: mailCode(target) }), 409, 'IDENTIFIER_CONFLICT');
    expect(await read(a)).toMatchObject({ email: a.email });
  });

  it('a replayed code is refused (401 OTP_INVALID); a wrong one counts down; an expired one is 401 OTP_EXPIRED', async () => {
    const p = await person('replay');
    const next = `replayed.${n}@bank.example`;
    await ask(p, { email: next });
    const code = mailCode(next);
    expect(expectError(await verify(p, { kind: 'email', code: wrong(code) }), 401, 'OTP_INVALID').details).toMatchObject({ attempts_remaining: 2 });
    expect((await verify(p, { kind: 'email', code })).statusCode).toBe(200);
    expectError(await verify(p, { kind: 'email', code }), 401, 'OTP_INVALID');
    expectError(await verify(p, { kind: 'phone', code }), 404, 'CONTACT_CHANGE_NOT_PENDING');

    const later = `later.${n}@bank.example`;
    await ask(p, { email: later });
    t.clock.advance(5 * 60_000 + 1);
    expectError(await verify(p, { kind: 'email', code: mailCode(later) }), 401, 'OTP_EXPIRED');
    expect((await read(p)).email).toBe(next);
    expect(await auditTotal(t.s, p.uuid, 'CONTACT_CHANGE_FAILED')).toBe(3);
  });

  it('a new request replaces the code: the old one no longer works', async () => {
    const p = await person('replace');
    await ask(p, { email: `first.${n}@bank.example` });
    const first = mailCode(`first.${n}@bank.example`);
    await ask(p, { email: `second.${n}@bank.example` });
    const second = mailCode(`second.${n}@bank.example`);
    if (first !== second) expectError(await verify(p, { kind: 'email', code: first }), 401, 'OTP_INVALID');
    expect((await verify(p, { kind: 'email', code: second })).json().profile.email).toBe(`second.${n}@bank.example`);
  });

  it('a parallel burst of guesses: exactly OTP_MAX_ATTEMPTS comparisons, then 429 OTP_ATTEMPTS_EXCEEDED, and the right code is then refused', async () => {
    const p = await person('burst');
    const next = `guessed.${n}@bank.example`;
    await ask(p, { email: next });
    const code = mailCode(next);
    const compare = vi.spyOn(t.s.profile['deps'].codes, 'matches');
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(p, { kind: 'email', code: wrong(code) })));
    expect(compare).toHaveBeenCalledTimes(3);
    compare.mockRestore();
    const codes = answers.map((r) => (r.json() as { error_code: string }).error_code).sort();
    expect(codes.filter((c) => c === 'OTP_INVALID')).toHaveLength(3);
    expect(codes.filter((c) => c === 'OTP_ATTEMPTS_EXCEEDED')).toHaveLength(17);
    expectError(await verify(p, { kind: 'email', code }), 429, 'OTP_ATTEMPTS_EXCEEDED');
    expect((await read(p)).email).toBe(p.email);
  });

  it('a parallel burst of the right code: one success, one change, one notice', async () => {
    const p = await person('single');
    const next = `once.${n}@bank.example`;
    await ask(p, { email: next });
    const code = mailCode(next);
    const answers = await Promise.all(Array.from({ length: 3 }, () => verify(p, { kind: 'email', code })));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of answers.filter((x) => x.statusCode !== 200)) expectError(r, 401, 'OTP_INVALID');
    expect(await auditTotal(t.s, p.uuid, 'CONTACT_CHANGED')).toBe(1);
    expect(smtp.to(p.email).filter((m) => m.subject === 'Your email address has been changed')).toHaveLength(1);
  });

  it('send limits: OTP_MAX_SENDS codes an hour per kind, then 429 OTP_SEND_LIMIT with Retry-After', async () => {
    const p = await person('sends');
    for (let i = 0; i < 5; i++) expect((await update(p, { email: `s${i}.${n}@bank.example`, current_password: STRONG_PASSWORD })).statusCode).toBe(200);
    const res = await update(p, { email: `s5.${n}@bank.example`, current_password: STRONG_PASSWORD });
    expectError(res, 429, 'OTP_SEND_LIMIT');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('a directory account: the provider\'s fields are 409 PROFILE_MANAGED_EXTERNALLY; language and date of birth change', async () => {
    const p = await person('ldap');
    await t.s.db.insertInto('user_identity_providers').values({ user_id: p.id, idp_type: 'LDAP', idp_subject: `uid=${p.username},ou=people,dc=bank,dc=example`, created_at: new Date() }).execute();
    const e = expectError(await update(p, { full_name: 'Renamed', language: 'fr' }), 409, 'PROFILE_MANAGED_EXTERNALLY');
    expect(e.details).toMatchObject({ fields: ['full_name'], idp_type: 'LDAP' });
    expectError(await update(p, { email: `ldap.${n}@bank.example`, current_password: STRONG_PASSWORD }), 409, 'PROFILE_MANAGED_EXTERNALLY');
    const ok = await update(p, { language: 'fr', date_of_birth: '1990-01-31' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().profile).toMatchObject({ language: 'fr', date_of_birth: '1990-01-31', managed_by: 'LDAP', full_name: null });
  });

  it('without a bearer token: 401', async () => {
    expect((await t.app.inject({ method: 'GET', url: PROFILE })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'PUT', url: UPDATE, payload: { language: 'fr' } })).statusCode).toBe(401);
  });
});

describe('profile: clean-up', () => {
  it('the clean-up job deletes a change (its new address) a day after its code expired, and keeps a live one', async () => {
    const p = await person('purge');
    await ask(p, { email: `purged.${n}@bank.example` });
    const rows = () => t.s.db.selectFrom('profile_contact_changes').select('id').where('user_id', '=', p.id).execute();
    expect(await t.scheduler.runNow('contact change clean-up')).toBe(true);
    expect(await rows()).toHaveLength(1);
    t.clock.advance(5 * 60_000 + 24 * 3_600_000 + 1);
    expect(await t.scheduler.runNow('contact change clean-up')).toBe(true);
    expect(await rows()).toHaveLength(0);
  });
});
