/**
 * The SDK's push-approval helpers against a real Strongroom (the SDK encrypting its calls, the
 * local FCM fake, a frozen clock): the page asks the phone and waits (long polls of
 * `POST /api/v1/auth/push-approval/complete`) while the phone (the harness's enrolled software
 * key) approves with the number shown, denies, or does not answer; a waiting page can stop. A
 * signed-in page steps up the same way (`stepUp`: long polls of `.../step-up/complete`).
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { startFakeFcm, type FakeFcm } from '../../../test/harness/fcm.js';
import { STRONG_PASSWORD, withoutRiskResponses } from '../../../test/harness/fixtures.js';
import { approvalKit, FIREFOX, type Enrolled } from '../../../test/harness/push-approval.js';
import { generateClientKeyPair } from '../src/crypto.js';
import { StrongroomClient, StrongroomError, type FetchLike, type PushApprovalSent } from '../src/index.js';

let fcm: FakeFcm;
let t: TestApp;
let baseUrl: string;
const keyPair = await generateClientKeyPair();
const kit = approvalKit(() => t);

beforeAll(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({ env: { ...fcm.env, TWO_FACTOR_TOKEN_EXPIRE_MINUTES: '15' } }); // not enforced: the phone's side is the harness's plaintext calls; the SDK encrypts all the same
  await withoutRiskResponses(t.s);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

const COMPLETE = '/api/v1/auth/push-approval/complete';
const STEP_UP_COMPLETE = '/api/v1/auth/push-approval/step-up/complete';

/** A web client whose `polled` resolves when its first poll of `watched` has been sent; `polls` counts them. */
function page(watched = COMPLETE): { web: StrongroomClient; polled: Promise<void>; polls: () => number } {
  let sent!: () => void;
  let polls = 0;
  const polled = new Promise<void>((resolve) => {
    sent = resolve;
  });
  const fetch: FetchLike = async (input, init) => {
    const answer = globalThis.fetch(input, init);
    if (new URL(input).pathname === watched) {
      polls++;
      sent();
    }
    return answer;
  };
  return { web: new StrongroomClient({ baseUrl, keyPair, fetch, headers: { 'user-agent': FIREFOX } }), polled, polls: () => polls };
}

async function failure(p: Promise<unknown>): Promise<StrongroomError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(StrongroomError);
  return err as StrongroomError;
}

/** The password step in the SDK: the 2FA token of 401 2FA_REQUIRED offering push_approval. */
async function passwordStep(web: StrongroomClient, u: Enrolled): Promise<string> {
  const challenge = await failure(web.login({ username: u.username, password: STRONG_PASSWORD }));
  expect(challenge).toMatchObject({ status: 401, errorCode: '2FA_REQUIRED' });
  expect(challenge.details.methods).toContain('push_approval');
  return String(challenge.details.two_factor_token);
}

describe('push approval in the SDK', () => {
  it('asks the phone, and resolves to the sign-in once the phone approves with the number shown while the page waits (one long poll): the client is signed in', async () => {
    const u = await kit.enrolled('sdk.approval');
    const { web, polled, polls } = page();
    const token = await passwordStep(web, u);
    const sent = await web.pushApproval.request(token);
    expect(sent).toMatchObject({ request_id: expect.any(String), expires_in: 300 });
    const waiting = web.pushApproval.waitForApproval(token, sent.request_id);
    await polled;
    const approved = await kit.answer(u, sent.request_id, 'approve', sent.number);
    expect(approved.statusCode, approved.body).toBe(200);
    const done = await waiting;
    expect(done.user_profile).toMatchObject({ username: u.username, mfa_completed: true });
    expect(polls()).toBe(1); // the server held the poll (wait_seconds) and answered when the phone did
    expect(web.signedIn).toBe(true);
    expect((await web.validate()).session_id).toBe(done.session_id);
  });

  it('rejects with 403 PUSH_APPROVAL_DENIED when the phone denies while the page waits', async () => {
    const u = await kit.enrolled('sdk.denied');
    const { web, polled } = page();
    const token = await passwordStep(web, u);
    const sent = await web.pushApproval.request(token);
    const waiting = failure(web.pushApproval.waitForApproval(token, sent.request_id));
    await polled;
    expect((await kit.answer(u, sent.request_id, 'deny')).statusCode).toBe(200);
    expect(await waiting).toMatchObject({ status: 403, errorCode: 'PUSH_APPROVAL_DENIED', details: { reason: 'denied' } });
    expect(web.signedIn).toBe(false);
  });

  it('rejects with 410 PUSH_APPROVAL_EXPIRED once the phone has not answered for five minutes', async () => {
    const u = await kit.enrolled('sdk.expired');
    const { web } = page();
    const token = await passwordStep(web, u);
    const sent = await web.pushApproval.request(token);
    t.clock.advance(5 * 60_000 + 1000);
    expect(await failure(web.pushApproval.waitForApproval(token, sent.request_id))).toMatchObject({ status: 410, errorCode: 'PUSH_APPROVAL_EXPIRED' });
  });

  it('stops with ABORTED when the page aborts; waiting again then finishes the sign-in the phone approved', async () => {
    const u = await kit.enrolled('sdk.aborted');
    const { web, polled } = page();
    const token = await passwordStep(web, u);
    const sent = await web.pushApproval.request(token);
    const stop = new AbortController();
    const waiting = failure(web.pushApproval.waitForApproval(token, sent.request_id, { signal: stop.signal }));
    await polled;
    stop.abort();
    expect(await waiting).toMatchObject({ status: 0, errorCode: 'ABORTED' });
    expect(web.signedIn).toBe(false);
    expect((await kit.answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    expect((await web.pushApproval.waitForApproval(token, sent.request_id)).user_profile.mfa_completed).toBe(true);
  });
});

describe('push-approval step-up in the SDK', () => {
  /** A page signed in with push approval (through the SDK), watching its step-up polls. */
  async function signedIn(prefix: string): Promise<{ u: Enrolled } & ReturnType<typeof page>> {
    const u = await kit.enrolled(prefix);
    const p = page(STEP_UP_COMPLETE);
    const token = await passwordStep(p.web, u);
    const sent = await p.web.pushApproval.request(token);
    expect((await kit.answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    await p.web.pushApproval.waitForApproval(token, sent.request_id);
    return { u, ...p };
  }

  it('stepUp asks the phone, hands the number to show, and resolves to the step-up once the phone approves with it (one long poll)', async () => {
    const { u, web, polled, polls } = await signedIn('sdk.stepup');
    let shown: PushApprovalSent | undefined;
    const stepping = web.pushApproval.stepUp({ onSent: (sent) => { shown = sent; } });
    await polled;
    expect(shown).toMatchObject({ request_id: expect.any(String), number: expect.any(Number), expires_in: 300 });
    expect((await kit.answer(u, shown!.request_id, 'approve', shown!.number)).statusCode).toBe(200);
    const done = await stepping;
    expect(done).toMatchObject({ verified: true, method: 'push_approval', session_id: (await web.validate()).session_id });
    expect(polls()).toBe(1);
  });

  it('stepUp rejects with 403 PUSH_APPROVAL_DENIED when the phone denies while the page waits', async () => {
    const { u, web, polled } = await signedIn('sdk.stepup.denied');
    let shown: PushApprovalSent | undefined;
    const stepping = failure(web.pushApproval.stepUp({ onSent: (sent) => { shown = sent; } }));
    await polled;
    expect((await kit.answer(u, shown!.request_id, 'deny')).statusCode).toBe(200);
    expect(await stepping).toMatchObject({ status: 403, errorCode: 'PUSH_APPROVAL_DENIED', details: { reason: 'denied' } });
  });

  it('stepUp stops with ABORTED when the page aborts; waitForStepUp then finishes the step-up the phone approved', async () => {
    const { u, web, polled } = await signedIn('sdk.stepup.aborted');
    let shown: PushApprovalSent | undefined;
    const stop = new AbortController();
    const stepping = failure(web.pushApproval.stepUp({ onSent: (sent) => { shown = sent; }, signal: stop.signal }));
    await polled;
    stop.abort();
    expect(await stepping).toMatchObject({ status: 0, errorCode: 'ABORTED' });
    expect((await kit.answer(u, shown!.request_id, 'approve', shown!.number)).statusCode).toBe(200);
    expect(await web.pushApproval.waitForStepUp(shown!.request_id)).toMatchObject({ verified: true, method: 'push_approval' });
  });

  it('stepUp without a session rejects NOT_SIGNED_IN', async () => {
    const { web } = page();
    expect(await failure(web.pushApproval.stepUp())).toMatchObject({ errorCode: 'NOT_SIGNED_IN' });
  });
});
