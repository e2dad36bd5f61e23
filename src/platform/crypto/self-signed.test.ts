import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { selfSignedCertificatePem } from './self-signed.js';

describe('selfSignedCertificatePem', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  it('makes a v3 certificate Node reads, for the key, naming the subject, valid for the days asked, self-signed', () => {
    const from = Date.UTC(2026, 10, 24, 10, 0, 0);
    const pem = selfSignedCertificatePem(privateKey, 'auth.bank.example SAML SP', from, 3650);
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('CN=auth.bank.example SAML SP');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.publicKey.export({ type: 'spki', format: 'der' }).equals(publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    expect(new Date(cert.validFrom).getTime()).toBe(from);
    expect(new Date(cert.validTo).getTime()).toBe(from + 3650 * 86_400_000); // past 2050: GeneralizedTime
    expect(cert.verify(publicKey)).toBe(true);
    expect(cert.checkPrivateKey(privateKey)).toBe(true);
  });

  it('is what openssl reads as a sha256WithRSAEncryption v3 certificate', () => {
    const pem = selfSignedCertificatePem(privateKey, 'sp', Date.UTC(2026, 0, 1), 30);
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: pem }).toString();
    expect(text).toContain('Version: 3 (0x2)');
    expect(text).toContain('Signature Algorithm: sha256WithRSAEncryption');
    expect(text).toContain('Subject: CN = sp');
  });
});
