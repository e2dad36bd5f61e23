import { execFileSync } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAY, NOW, androidChain, breakSignature, certificate, ecKey, refusal, testCa, type AndroidChainOptions, type TestCert } from '../../../test/harness/attestation.js';
import { ManualClock } from '../../platform/clock.js';
import { verifyAndroidKeyAttestation, type AndroidAttestationOptions } from './android.js';

const ca = testCa();
const roots = [ca.root.pem];
const challenge = Buffer.from('kP3vR8tY1wQ6zM9nB2cX5aL0jH7gF4dS6eU1iO3pK8m', 'utf8');
const signingDigest = createHash('sha256').update('the app signing certificate').digest();

const b64 = (chain: TestCert[]): string[] => chain.map((c) => c.b64);

function attest(o: Partial<AndroidChainOptions> = {}) {
  return androidChain({ ca, challenge, ...o });
}

function verify(chain: string[], spki: string, options: Partial<AndroidAttestationOptions> = {}, expected: Buffer = challenge) {
  return verifyAndroidKeyAttestation({ certificateChain: chain, challenge: expected, publicKey: spki }, { clock: new ManualClock(NOW), trustedRoots: roots, ...options });
}

describe('Android Key Attestation', () => {
  it('accepts a key generated in the TEE for this enrolment', () => {
    const a = attest();
    expect(verify(b64(a.chain), a.spki)).toEqual({ platform: 'android', security_level: 'tee', attestation_version: 300, verified_boot: { device_locked: true, state: 'verified' } });
  });

  it('accepts a StrongBox key as strongbox', () => {
    const a = attest({ securityLevel: 2 });
    expect(verify(b64(a.chain), a.spki).security_level).toBe('strongbox');
  });

  it('refuses a software-only key (attestation security level Software)', () => {
    const a = attest({ securityLevel: 0 });
    expect(refusal(() => verify(b64(a.chain), a.spki))).toBe('software_key');
  });

  it('refuses a software key behind a hardware attestation (the key\'s level differs from the attestation\'s)', () => {
    const a = attest({ securityLevel: 1, keyMintSecurityLevel: 0 });
    expect(refusal(() => verify(b64(a.chain), a.spki))).toBe('software_key');
  });

  it('refuses a key description whose two hardware levels disagree (StrongBox attestation of a TEE key)', () => {
    const a = attest({ securityLevel: 2, keyMintSecurityLevel: 1 });
    expect(refusal(() => verify(b64(a.chain), a.spki))).toBe('key_description_invalid');
  });

  it('refuses a chain to an untrusted root (Google\'s roots by default; another CA)', () => {
    const a = attest();
    expect(refusal(() => verifyAndroidKeyAttestation({ certificateChain: b64(a.chain), challenge, publicKey: a.spki }, { clock: new ManualClock(NOW) }))).toBe('chain_untrusted');
    expect(refusal(() => verify(b64(a.chain), a.spki, { trustedRoots: [testCa('Another Root').root.pem] }))).toBe('chain_untrusted');
  });

  it('refuses a chain whose root was swapped for a look-alike self-signed one', () => {
    const a = attest();
    const impostor = certificate({ cn: 'Test Attestation Root', key: ecKey('P-384'), notBefore: NOW - DAY, notAfter: NOW + DAY, ca: true });
    expect(refusal(() => verify(b64([a.chain[0]!, a.chain[1]!, impostor]), a.spki))).toBe('chain_signature_invalid');
  });

  it('refuses a challenge from another enrolment (replay)', () => {
    const a = attest({ challenge: Buffer.from('the challenge of an earlier enrolment') });
    expect(refusal(() => verify(b64(a.chain), a.spki))).toBe('challenge_mismatch');
  });

  it('refuses when the claimed key differs from the attested key', () => {
    const a = attest();
    const other = ecKey('P-256').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
    expect(refusal(() => verify(b64(a.chain), other))).toBe('key_mismatch');
    const p384 = ecKey('P-384').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
    expect(refusal(() => verify(b64(a.chain), p384))).toBe('key_mismatch');
    expect(refusal(() => verify(b64(a.chain), 'not a key'))).toBe('key_mismatch');
  });

  it('refuses an expired certificate in the chain (the intermediate, a year later)', () => {
    const a = attest();
    expect(refusal(() => verify(b64(a.chain), a.spki, { clock: new ManualClock(NOW + 366 * DAY) }))).toBe('certificate_expired');
  });

  it('refuses a certificate not yet valid', () => {
    const a = attest();
    expect(refusal(() => verify(b64(a.chain), a.spki, { clock: new ManualClock(NOW - 31 * DAY) }))).toBe('certificate_expired');
  });

  it('does not date-check the leaf (the device\'s clock sets it) nor the trust anchor, as Google\'s verifier does', () => {
    const a = attest();
    // The leaf here runs from the epoch to 2048; a re-issue of the root with the same key, expired, still anchors.
    const expiredReissue = certificate({ cn: 'Test Attestation Root', key: ca.root.key, notBefore: NOW - 3650 * DAY, notAfter: NOW - DAY, ca: true });
    expect(verify(b64([a.chain[0]!, a.chain[1]!, expiredReissue]), a.spki).security_level).toBe('tee');
  });

  it('accepts a chain sent without its root (the last certificate signed by a trusted root)', () => {
    const a = attest();
    expect(verify(b64(a.chain.slice(0, 2)), a.spki).security_level).toBe('tee');
  });

  it('refuses a broken signature in the chain (leaf or intermediate)', () => {
    const a = attest();
    expect(refusal(() => verify(b64([breakSignature(a.chain[0]!), a.chain[1]!, a.chain[2]!]), a.spki))).toBe('chain_signature_invalid');
    expect(refusal(() => verify(b64([a.chain[0]!, breakSignature(a.chain[1]!), a.chain[2]!]), a.spki))).toBe('chain_signature_invalid');
  });

  it('refuses a key imported into the secure hardware (a copy may exist outside)', () => {
    const a = attest({ origin: 2 });
    expect(refusal(() => verify(b64(a.chain), a.spki))).toBe('key_imported');
  });

  it('refuses a genuine attested key used to sign a forged leaf (chain extension)', () => {
    const a = attest({ extendGenuineChain: true });
    expect(a.chain).toHaveLength(4);
    expect(refusal(() => verify(b64(a.chain), a.spki))).toBe('chain_extended');
  });

  it('refuses a chain with a revoked certificate (Google\'s status list)', () => {
    const a = attest();
    const serial = new X509Certificate(a.chain[1]!.der).serialNumber.toLowerCase().replace(/^0+/, '');
    expect(refusal(() => verify(b64(a.chain), a.spki, { revokedSerials: new Set([serial]) }))).toBe('certificate_revoked');
    expect(verify(b64(a.chain), a.spki, { revokedSerials: new Set(['1234abcd']) }).security_level).toBe('tee');
  });

  it('checks the app when configured: package name and signing certificate digest', () => {
    const a = attest({ packageName: 'com.bank.strongroom', signatureDigest: signingDigest });
    const app = { packageNames: ['com.bank.strongroom'], signatureDigests: [signingDigest.toString('hex')] };
    expect(verify(b64(a.chain), a.spki, { app }).platform).toBe('android');
    expect(verify(b64(a.chain), a.spki, { app: { ...app, signatureDigests: [signingDigest.toString('base64url')] } }).platform).toBe('android');
    expect(refusal(() => verify(b64(a.chain), a.spki, { app: { ...app, packageNames: ['com.attacker.app'] } }))).toBe('app_mismatch');
    expect(refusal(() => verify(b64(a.chain), a.spki, { app: { ...app, signatureDigests: [Buffer.alloc(32, 9).toString('hex')] } }))).toBe('app_mismatch');
  });

  it('refuses what does not decode, and a leaf without a key description', () => {
    const a = attest();
    expect(refusal(() => verify(['not base64!'], a.spki))).toBe('malformed');
    expect(refusal(() => verify([Buffer.from('garbage').toString('base64'), a.chain[1]!.b64], a.spki))).toBe('malformed');
    expect(refusal(() => verify([a.chain[0]!.b64], a.spki))).toBe('malformed');
    expect(refusal(() => verify([], a.spki))).toBe('malformed');
    const plain = certificate({ cn: 'no description', key: a.deviceKey, issuer: ca.intermediate, notBefore: NOW - DAY, notAfter: NOW + DAY });
    expect(refusal(() => verify(b64([plain, a.chain[1]!, a.chain[2]!]), a.spki))).toBe('key_description_invalid');
  });

  it('builds chains openssl accepts as X.509 (the harness forges real certificates)', () => {
    const a = attest();
    const dir = mkdtempSync(path.join(tmpdir(), 'attest-'));
    try {
      const file = (name: string, c: TestCert) => { const f = path.join(dir, name); writeFileSync(f, c.pem); return f; };
      const out = execFileSync('openssl', ['verify', '-attime', String(NOW / 1000), '-CAfile', file('root.pem', a.chain[2]!), '-untrusted', file('int.pem', a.chain[1]!), file('leaf.pem', a.chain[0]!)], { encoding: 'utf8' });
      expect(out).toContain('OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
