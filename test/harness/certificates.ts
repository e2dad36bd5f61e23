/**
 * Self-signed certificates for tests (SAML signing keys, say), made by the `openssl` command:
 * nothing here shares code with what the service uses to read them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCertificate {
  /** PEM of the certificate. */
  pem: string;
  /** PEM of its private key (PKCS#8). */
  keyPem: string;
  /** The certificate's base64 DER (the PEM's body). */
  body: string;
}

/** An RSA-2048, SHA-256, self-signed certificate for `/CN=<cn>`, valid `days` days, written to `dir`. */
export function selfSignedCertificate(dir: string, cn: string, days = 30): TestCertificate {
  const out = path.join(dir, `${cn}.pem`);
  const key = path.join(dir, `${cn}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', String(days), '-subj', `/CN=${cn}`, '-keyout', key, '-out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const pem = readFileSync(out, 'utf8');
  return { pem, keyPem: readFileSync(key, 'utf8'), body: pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '') };
}
