/**
 * Key attestation at push-approval enrolment over HTTP (both databases; PUSH_APPROVAL_ATTESTATION
 * required; the clock frozen at the forged chains' date; the harness's test CAs as the trusted
 * roots through PUSH_APPROVAL_ANDROID_ROOTS_FILE and PUSH_APPROVAL_APPLE_ROOTS_FILE). An Android
 * phone asks for the challenge first, makes its key with it (setAttestationChallenge) and sends
 * the key with its Keystore chain; an iOS phone's App Attest key vouches for its key. The threats:
 * a software key, an attestation made for another enrolment, an attested key that is not the key
 * sent, another app's App Attest, and no attestation at all are refused; a confirmation is used
 * once. Optional mode (a phone sending none enrols) is in push-approval.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { appAttestClientDataHash } from '../../src/push-approval/attestation/apple.js';
import { enrolMessage } from '../../src/push-approval/crypto.js';
import type { TestApp } from '../harness/app.js';
import { NOW, androidChain, appAttestation, ecKey, testCa, type AndroidChainOptions, type KeyPair } from '../harness/attestation.js';
import type { FakeFcm } from '../harness/fcm.js';
import { auditTotal, bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { approvalKit, newPhone, signWith, startApprovalApp, type Enrolled } from '../harness/push-approval.js';

const PACKAGE = 'com.bank.strongroom';
const APP_ID = 'ABCDE12345.com.bank.strongroom';
const androidCa = testCa('Test Attestation Root');
const appleCa = testCa('Test App Attestation Root');

let fcm: FakeFcm;
let t: TestApp;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'attestation-roots-'));
  const file = (name: string, pem: string) => { const f = path.join(dir, name); writeFileSync(f, pem); return f; };
  ({ t, fcm } = await startApprovalApp({
    clock: new ManualClock(NOW),
    env: {
      PUSH_APPROVAL_ATTESTATION: 'required', PUSH_APPROVAL_ANDROID_PACKAGES: PACKAGE, PUSH_APPROVAL_IOS_APP_ID: APP_ID,
      PUSH_APPROVAL_ANDROID_ROOTS_FILE: file('android.pem', androidCa.root.pem), PUSH_APPROVAL_APPLE_ROOTS_FILE: file('apple.pem', appleCa.root.pem),
    },
  }));
});
afterAll(async () => {
  await t?.close();
  await fcm?.close();
  rmSync(dir, { recursive: true, force: true });
});

const { post, register, passwordStep, ask, answer, steppedUp } = approvalKit(() => t);
type Json = Record<string, unknown>;
interface Customer { user: { id: number; uuid: string }; username: string; access: string; deviceId: string; token: string }

/** A customer signed in on their phone, its push token registered, nothing enrolled. */
async function customer(username: string): Promise<Customer> {
  const user = await seedUser(t.s, username);
  const access = (await signIn(t.app, username)).access_token;
  const phone = newPhone(); // its token only: the key is made below, as each test needs
  return { user, username, access, token: phone.token, deviceId: await register(access, phone) };
}

/** Starts the enrolment (with the key, or without: Android makes it after); the challenge. */
async function setup(c: Customer, publicKey?: string): Promise<string> {
  const res = await post('/api/v1/2fa/push-approval/setup', { device_id: c.deviceId, current_password: STRONG_PASSWORD, ...(publicKey ? { public_key: publicKey } : {}) }, bearer(c.access));
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ attestation: 'required' });
  return res.json<{ challenge: string }>().challenge;
}

const confirm = (c: Customer, body: Json) => post('/api/v1/2fa/push-approval/confirm', body, bearer(c.access));
const spkiOf = (k: KeyPair): string => k.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');

/** What an Android phone sends: the key made with this challenge in its TEE (unless `o` says otherwise), signed by that key. */
function android(c: Customer, challenge: string, o: Partial<AndroidChainOptions> = {}) {
  const a = androidChain({ ca: androidCa, challenge: Buffer.from(challenge, 'utf8'), packageName: PACKAGE, ...o });
  return {
    key: a.deviceKey,
    body: { signature: signWith(a.deviceKey.privateKey, enrolMessage(c.user.uuid, challenge)), public_key: a.spki, attestation: { format: 'android-key', certificate_chain: a.chain.map((x) => x.b64) } },
  };
}

/** What an iOS phone sends: its Secure Enclave key, vouched for by App Attest of `appId`. */
function ios(c: Customer, challenge: string, appId = APP_ID) {
  const key = ecKey('P-256');
  const { keyId, attestation } = appAttestation({ ca: appleCa, appId, clientDataHash: appAttestClientDataHash(challenge, spkiOf(key)) });
  return { key, body: { signature: signWith(key.privateKey, enrolMessage(c.user.uuid, challenge)), public_key: spkiOf(key), attestation: { format: 'apple-appattest', key_id: keyId, attestation_object: attestation } } };
}

async function stored(userId: number) {
  return t.s.database.db.selectFrom('push_approval_keys').select(['public_key', 'attestation', 'confirmed_at']).where('user_id', '=', userId).executeTakeFirstOrThrow();
}

/** The refusal's `details`, nothing enrolled, and the refusal audited. */
async function refused(c: Customer, res: Awaited<ReturnType<typeof confirm>>, code: string, reason: string): Promise<void> {
  const details = expectError(res, 400, code).details as Json;
  if (code === 'PUSH_APPROVAL_ATTESTATION_INVALID') expect(details.reason).toBe(reason);
  expect(await t.s.factors.active(c.user.id)).toEqual([]);
  expect((await stored(c.user.id)).confirmed_at).toBeNull();
  const failed = (await t.s.audit.query({ userId: c.user.uuid, eventType: 'MFA_FAILED', limit: 5, offset: 0 })).entries;
  expect(failed.map((e) => e.details)).toEqual([expect.objectContaining({ reason: 'enrolment_attestation', attestation_reason: reason })]);
}

describe('Android Key Attestation at enrolment', () => {
  it('a key generated in the TEE with this enrolment\'s challenge enrols: the level is stored and audited, and the key approves sign-ins', async () => {
    const c = await customer('attest.android');
    const challenge = await setup(c); // no key yet: the phone makes it with the challenge
    const phone = android(c, challenge);
    const res = await confirm(c, phone.body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ enrolled: true, method: 'push_approval', attestation: 'tee' });
    expect(await stored(c.user.id)).toMatchObject({
      public_key: phone.body.public_key,
      attestation: { platform: 'android', security_level: 'tee', attestation_version: 300, verified_boot: { device_locked: true, state: 'verified' } },
    });
    expect((await t.s.audit.query({ userId: c.user.uuid, eventType: 'MFA_ENROLLED', limit: 5, offset: 0 })).entries.map((e) => e.details)).toEqual([{ attestation: 'tee', platform: 'android' }]);
    // The owner's personal-data export shows how the key was proved, not the attestation itself.
    const exported = await t.app.inject({ method: 'GET', url: '/api/v1/auth/gdpr/export', headers: bearer(c.access) });
    expect((exported.json() as { push_approval: unknown[] }).push_approval).toEqual([{ created_at: new Date(NOW).toISOString(), confirmed_at: new Date(NOW).toISOString(), attestation: 'tee' }]);
    const u: Enrolled = { ...c, phone: { key: phone.key.privateKey, publicKey: phone.body.public_key, token: c.token } };
    const sent = await ask(await passwordStep(u));
    expect((await answer(u, sent.request_id, 'approve', sent.number)).json()).toMatchObject({ state: 'approved' });
  });

  it('threat: a software key is refused (400 PUSH_APPROVAL_ATTESTATION_INVALID, reason software_key), audited, nothing enrolled', async () => {
    const c = await customer('attest.software');
    const challenge = await setup(c);
    await refused(c, await confirm(c, android(c, challenge, { securityLevel: 0 }).body), 'PUSH_APPROVAL_ATTESTATION_INVALID', 'software_key');
  });

  it('threat: an attestation made for an earlier enrolment\'s challenge is refused (challenge_mismatch); a confirmation is used once, even in a parallel burst', async () => {
    const c = await customer('attest.replay');
    const earlier = android(c, await setup(c));
    const challenge = await setup(c); // started again: a new challenge
    const replayed = { ...earlier.body, signature: signWith(earlier.key.privateKey, enrolMessage(c.user.uuid, challenge)) };
    await refused(c, await confirm(c, replayed), 'PUSH_APPROVAL_ATTESTATION_INVALID', 'challenge_mismatch');
    const body = android(c, challenge).body;
    await steppedUp(c.access); // so that the later ones reach the challenge, not the step-up rule of an account with a factor
    const burst = await Promise.all(Array.from({ length: 4 }, () => confirm(c, body)));
    expect(burst.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400]);
    for (const r of burst.filter((x) => x.statusCode === 400)) expectError(r, 400, 'PUSH_APPROVAL_SETUP_EXPIRED');
    expect(await auditTotal(t.s, c.user.uuid, 'MFA_ENROLLED')).toBe(1);
  });

  it('threat: an attested key that is not the key sent is refused (key_mismatch)', async () => {
    const c = await customer('attest.swapped');
    const challenge = await setup(c);
    const attested = android(c, challenge);
    const other = ecKey('P-256');
    const body = { ...attested.body, public_key: spkiOf(other), signature: signWith(other.privateKey, enrolMessage(c.user.uuid, challenge)) };
    await refused(c, await confirm(c, body), 'PUSH_APPROVAL_ATTESTATION_INVALID', 'key_mismatch');
  });

  it('threat: with PUSH_APPROVAL_ATTESTATION=required, a confirmation without attestation is refused (400 PUSH_APPROVAL_ATTESTATION_REQUIRED)', async () => {
    const c = await customer('attest.none');
    const phone = newPhone();
    const challenge = await setup(c, phone.publicKey);
    await refused(c, await confirm(c, { signature: signWith(phone.key, enrolMessage(c.user.uuid, challenge)) }), 'PUSH_APPROVAL_ATTESTATION_REQUIRED', 'missing');
  });
});

describe('iOS App Attest at enrolment', () => {
  it('App Attest of the configured app vouching for the key enrols (app_attest; Apple\'s receipt not stored)', async () => {
    const c = await customer('attest.ios');
    const key = ecKey('P-256');
    const challenge = await setup(c, spkiOf(key)); // an iOS key may come with the setup
    const { keyId, attestation } = appAttestation({ ca: appleCa, appId: APP_ID, clientDataHash: appAttestClientDataHash(challenge, spkiOf(key)) });
    const res = await confirm(c, { signature: signWith(key.privateKey, enrolMessage(c.user.uuid, challenge)), attestation: { format: 'apple-appattest', key_id: keyId, attestation_object: attestation } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ attestation: 'app_attest' });
    expect((await stored(c.user.id)).attestation).toEqual({ platform: 'ios', security_level: 'app_attest', environment: 'production', key_id: keyId });
  });

  it('threat: App Attest of another app id is refused (app_mismatch)', async () => {
    const c = await customer('attest.ios.other');
    const challenge = await setup(c);
    await refused(c, await confirm(c, ios(c, challenge, 'ZZZZZ99999.com.attacker.app').body), 'PUSH_APPROVAL_ATTESTATION_INVALID', 'app_mismatch');
  });
});
