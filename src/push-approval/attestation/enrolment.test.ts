import { describe, expect, it } from 'vitest';
import { NOW, androidChain, appAttestation, ecKey, refusal, testCa } from '../../../test/harness/attestation.js';
import { ManualClock } from '../../platform/clock.js';
import type { PushApprovalAttestationConfig } from '../../platform/config-push-approval.js';
import { appAttestClientDataHash } from './apple.js';
import { levelOf, verifyEnrolmentAttestation } from './enrolment.js';

const ca = testCa();
const clock = new ManualClock(NOW);
const challenge = 'kP3vR8tY1wQ6zM9nB2cX5aL0jH7gF4dS6eU1iO3pK8m';
const APP_ID = 'ABCDE12345.com.bank.strongroom';
const config = (over: { packageNames?: string[]; appId?: string; mode?: PushApprovalAttestationConfig['mode'] } = {}): PushApprovalAttestationConfig => ({
  mode: over.mode ?? 'required',
  android: { packageNames: over.packageNames ?? [], signatureDigests: [], roots: [ca.root.pem] },
  ios: { ...(over.appId ? { appId: over.appId } : {}), allowDevelopment: false, roots: [ca.root.pem] },
});

describe('the attestation of an enrolment', () => {
  it('Android: the challenge\'s UTF-8 bytes are the attestation challenge; the app is checked when packages are configured', () => {
    const ours = androidChain({ ca, challenge: Buffer.from(challenge, 'utf8'), packageName: 'com.bank.strongroom' });
    const body = (a: typeof ours) => ({ format: 'android-key' as const, certificate_chain: a.chain.map((c) => c.b64) });
    expect(levelOf(verifyEnrolmentAttestation(body(ours), { challenge, publicKey: ours.spki }, config({ packageNames: ['com.bank.strongroom'] }), clock))).toBe('tee');
    const other = androidChain({ ca, challenge: Buffer.from(challenge, 'utf8'), packageName: 'com.other.app' });
    expect(refusal(() => verifyEnrolmentAttestation(body(other), { challenge, publicKey: other.spki }, config({ packageNames: ['com.bank.strongroom'] }), clock))).toBe('app_mismatch');
  });

  it('threat: required means our app\'s key in hardware: without PUSH_APPROVAL_ANDROID_PACKAGES an Android attestation is refused (platform_not_accepted); optional takes any app\'s hardware key', () => {
    const a = androidChain({ ca, challenge: Buffer.from(challenge, 'utf8'), packageName: 'com.other.app' });
    const body = { format: 'android-key' as const, certificate_chain: a.chain.map((c) => c.b64) };
    expect(refusal(() => verifyEnrolmentAttestation(body, { challenge, publicKey: a.spki }, config(), clock))).toBe('platform_not_accepted');
    expect(levelOf(verifyEnrolmentAttestation(body, { challenge, publicKey: a.spki }, config({ mode: 'optional' }), clock))).toBe('tee');
  });

  it('iOS: refused when no App ID is configured (platform_not_accepted); accepted for it, without Apple\'s receipt', () => {
    const key = ecKey('P-256').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
    const { keyId, attestation } = appAttestation({ ca, appId: APP_ID, clientDataHash: appAttestClientDataHash(challenge, key) });
    const body = { format: 'apple-appattest' as const, key_id: keyId, attestation_object: attestation };
    expect(refusal(() => verifyEnrolmentAttestation(body, { challenge, publicKey: key }, config(), clock))).toBe('platform_not_accepted');
    expect(verifyEnrolmentAttestation(body, { challenge, publicKey: key }, config({ appId: APP_ID }), clock)).toEqual({ platform: 'ios', security_level: 'app_attest', environment: 'production', key_id: keyId });
  });

  it('no attestation is level none', () => {
    expect(levelOf(null)).toBe('none');
  });
});
