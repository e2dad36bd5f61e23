import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DAY, NOW, appAttestation, breakSignature, ecKey, refusal, testCa, type AppAttestOptions as HarnessOptions } from '../../../test/harness/attestation.js';
import { ManualClock } from '../../platform/clock.js';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { appAttestClientDataHash, verifyAppAttestation, type AppAttestOptions } from './apple.js';

const ca = testCa('Test App Attestation Root');
const appId = 'ABCDE12345.com.bank.strongroom';
const challenge = 'kP3vR8tY1wQ6zM9nB2cX5aL0jH7gF4dS6eU1iO3pK8m';
const spki = ecKey('P-256').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
/** Computed here, not by the module: the app computes it the same way. */
const clientDataHash = (c = challenge, key = spki) => createHash('sha256').update(`strongroom-push-approval-attest|${c}|${key}`, 'utf8').digest();

function attest(o: Partial<HarnessOptions> = {}) {
  return appAttestation({ ca, appId, clientDataHash: clientDataHash(), ...o });
}

function verify(a: { keyId: string; attestation: string }, options: Partial<AppAttestOptions> = {}, input: { challenge?: string; publicKey?: string } = {}) {
  return verifyAppAttestation({ keyId: a.keyId, attestation: a.attestation, challenge, publicKey: spki, ...input }, { clock: new ManualClock(NOW), appId, trustedRoots: [ca.root.pem], ...options });
}

describe('App Attest', () => {
  it('defines the client-data hash over the challenge and the key being enrolled', () => {
    expect(appAttestClientDataHash(challenge, spki).equals(clientDataHash())).toBe(true);
  });

  it('accepts a production attestation of the genuine app vouching for this key and challenge', () => {
    const a = attest();
    expect(verify(a)).toEqual({ platform: 'ios', security_level: 'app_attest', environment: 'production', key_id: a.keyId, receipt: Buffer.from('receipt').toString('base64') });
  });

  it('refuses an attestation for another app id (rpIdHash)', () => {
    const a = attest({ appId: 'ZZZZZ99999.com.attacker.app' });
    expect(refusal(() => verify(a))).toBe('app_mismatch');
  });

  it('refuses a nonce that does not match SHA-256(authData || clientDataHash)', () => {
    const a = attest({ nonce: Buffer.alloc(32, 5) });
    expect(refusal(() => verify(a))).toBe('challenge_mismatch');
  });

  it('refuses an attestation made for another enrolment\'s challenge (replay)', () => {
    const a = attest({ clientDataHash: clientDataHash('the challenge of an earlier enrolment') });
    expect(refusal(() => verify(a))).toBe('challenge_mismatch');
  });

  it('refuses when the key sent is not the one the app attested (a swapped push-approval key)', () => {
    const a = attest();
    const other = ecKey('P-256').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
    expect(refusal(() => verify(a, {}, { publicKey: other }))).toBe('challenge_mismatch');
  });

  it('refuses a development key (aaguid appattestdevelop) in production, accepts it when development is allowed', () => {
    const a = attest({ aaguid: 'development' });
    expect(refusal(() => verify(a))).toBe('environment_refused');
    expect(verify(a, { allowDevelopment: true }).environment).toBe('development');
  });

  it('refuses an unknown aaguid', () => {
    const a = attest({ aaguid: Buffer.alloc(16, 1) });
    expect(refusal(() => verify(a, { allowDevelopment: true }))).toBe('environment_refused');
  });

  it('refuses a counter that is not 0 (the key was used before)', () => {
    const a = attest({ counter: 1 });
    expect(refusal(() => verify(a))).toBe('counter_not_zero');
  });

  it('refuses a key id that is not the attested key', () => {
    const a = attest();
    const b = attest();
    expect(refusal(() => verify({ keyId: b.keyId, attestation: a.attestation }))).toBe('key_mismatch');
    // Even when the authenticator data names that key id: the certificate's key is what counts.
    const c = attest({ credentialId: Buffer.from(b.keyId, 'base64') });
    expect(refusal(() => verify({ keyId: b.keyId, attestation: c.attestation }))).toBe('key_mismatch');
  });

  it('refuses authenticator data whose credential id is not the attested key id', () => {
    const a = attest({ credentialId: Buffer.alloc(32, 3) });
    expect(refusal(() => verify(a))).toBe('key_mismatch');
  });

  it('refuses a chain to an untrusted root (Apple\'s root by default)', () => {
    const a = attest();
    expect(refusal(() => verifyAppAttestation({ keyId: a.keyId, attestation: a.attestation, challenge, publicKey: spki }, { clock: new ManualClock(NOW), appId }))).toBe('chain_untrusted');
  });

  it('refuses an expired credential certificate', () => {
    const a = attest({ notAfter: NOW + DAY });
    expect(refusal(() => verify(a, { clock: new ManualClock(NOW + 2 * DAY) }))).toBe('certificate_expired');
  });

  it('refuses a broken signature in the x5c chain', () => {
    const a = attest();
    const obj = isoCBOR.decodeFirst<Map<string, unknown>>(Buffer.from(a.attestation, 'base64'));
    const stmt = obj.get('attStmt') as Map<string, unknown>;
    const [leaf, intermediate] = stmt.get('x5c') as Uint8Array[];
    const broken = breakSignature({ der: Buffer.from(leaf!), b64: '', pem: '', name: Buffer.alloc(0), key: ecKey() });
    stmt.set('x5c', [new Uint8Array(broken.der), intermediate]);
    const tampered = Buffer.from(isoCBOR.encode(obj as never)).toString('base64');
    expect(refusal(() => verify({ keyId: a.keyId, attestation: tampered }))).toBe('chain_signature_invalid');
  });

  it('threat: a long x5c costs only its count: more than 10 certificates are refused before any is parsed (malformed)', () => {
    const a = attest();
    const obj = isoCBOR.decodeFirst<Map<string, unknown>>(Buffer.from(a.attestation, 'base64'));
    const stmt = obj.get('attStmt') as Map<string, unknown>;
    // Bytes that are no certificate: parsing any of them would fail with another message.
    stmt.set('x5c', Array.from({ length: 11 }, () => new Uint8Array(64).fill(7)));
    const long = Buffer.from(isoCBOR.encode(obj as never)).toString('base64');
    expect(refusal(() => verify({ keyId: a.keyId, attestation: long }))).toBe('malformed');
    expect(() => verify({ keyId: a.keyId, attestation: long })).toThrow(/x5c must hold 2 to 10 certificates/);
  });

  it('refuses another attestation format and what does not decode', () => {
    expect(refusal(() => verify(attest({ fmt: 'packed' })))).toBe('format_invalid');
    const a = attest();
    expect(refusal(() => verify({ keyId: a.keyId, attestation: Buffer.from('not cbor at all').toString('base64') }))).toBe('malformed');
    expect(refusal(() => verify({ keyId: a.keyId, attestation: '%%%' }))).toBe('malformed');
    expect(refusal(() => verify({ keyId: 'not base64!', attestation: a.attestation }))).toBe('malformed');
  });
});
