import { X509Certificate } from 'node:crypto';
import { SettingsService } from '@simplewebauthn/server';
import { describe, expect, it } from 'vitest';
import { NOW } from '../../../test/harness/attestation.js';
import { APPLE_APP_ATTESTATION_ROOT_CA, GOOGLE_ATTESTATION_ROOTS, GOOGLE_HARDWARE_ATTESTATION_ROOT_RSA, GOOGLE_KEY_ATTESTATION_CA1 } from './roots.js';

const spki = (c: X509Certificate) => c.publicKey.export({ format: 'der', type: 'spki' });

describe('embedded attestation roots', () => {
  const cases = [
    { name: 'Google hardware attestation root (RSA)', pem: GOOGLE_HARDWARE_ATTESTATION_ROOT_RSA, subject: 'serialNumber=f92009e853b6b045', type: 'rsa',
      fingerprint: 'CE:DB:1C:B6:DC:89:6A:E5:EC:79:73:48:BC:E9:28:67:53:C2:B3:8E:E7:1C:E0:FB:E3:4A:9A:12:48:80:0D:FC' },
    { name: 'Google Key Attestation CA1 (EC)', pem: GOOGLE_KEY_ATTESTATION_CA1, subject: 'CN=Key Attestation CA1', type: 'ec',
      fingerprint: '6D:9D:B4:CE:6C:5C:0B:29:31:66:D0:89:86:E0:57:74:A8:77:6C:EB:52:5D:9E:43:29:52:0D:E1:2B:A4:BC:C0' },
    { name: 'Apple App Attestation Root CA', pem: APPLE_APP_ATTESTATION_ROOT_CA, subject: 'CN=Apple App Attestation Root CA', type: 'ec',
      fingerprint: '1C:B9:82:3B:A2:8B:A6:AD:2D:33:A0:06:94:1D:E2:AE:4F:51:3E:F1:D4:E8:31:B9:F7:E0:FA:7B:62:42:C9:32' },
  ];

  for (const c of cases) {
    it(`${c.name}: parses, is self-signed, is the published certificate, and is valid now`, () => {
      const cert = new X509Certificate(c.pem);
      expect(cert.fingerprint256).toBe(c.fingerprint);
      expect(cert.subject).toContain(c.subject);
      expect(cert.issuer).toBe(cert.subject);
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(cert.ca).toBe(true);
      expect(cert.publicKey.asymmetricKeyType).toBe(c.type);
      expect(new Date(cert.validFrom).getTime()).toBeLessThan(NOW);
      expect(new Date(cert.validTo).getTime()).toBeGreaterThan(NOW);
    });
  }

  it('trusts both Google roots by default: the RSA one and the EC one devices move to in 2026', () => {
    expect(GOOGLE_ATTESTATION_ROOTS).toEqual([GOOGLE_HARDWARE_ATTESTATION_ROOT_RSA, GOOGLE_KEY_ATTESTATION_CA1]);
  });

  it('every RSA root @simplewebauthn/server ships for android-key has the key of the embedded one (re-issues are trusted by key)', () => {
    const ours = spki(new X509Certificate(GOOGLE_HARDWARE_ATTESTATION_ROOT_RSA));
    const shipped = SettingsService.getRootCertificates({ identifier: 'android-key' });
    expect(shipped.length).toBeGreaterThanOrEqual(1);
    for (const pem of shipped) expect(spki(new X509Certificate(pem)).equals(ours)).toBe(true);
  });
});
