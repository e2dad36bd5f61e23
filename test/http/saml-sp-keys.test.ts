/**
 * The SAML service provider's signing keys (src/saml/sp-keys.ts): made once on first need, even
 * when every node needs one at the same moment; encrypted at rest; after a rotation the new key
 * signs and the metadata publishes it with the previous one.
 */
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTwoNodes } from '../harness/app.js';

const nodes = useTwoNodes();

describe('SAML SP signing keys', () => {
  it('ten parallel first needs on two nodes make one key, which both nodes use', async () => {
    const { a, b } = nodes;
    const seen = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).s.samlSpKeys.current()));
    expect(new Set(seen.map((k) => k.keyId)).size).toBe(1);
    const rows = await a.s.database.db.selectFrom('saml_sp_keys').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.private_key_enc).not.toContain('PRIVATE KEY');
    const cert = new X509Certificate(rows[0]!.certificate);
    expect(cert.checkPrivateKey(seen[0]!.privateKey)).toBe(true);
  });

  it('a rotation makes the new key current on every node; the previous one stays published, the one before is retired', async () => {
    const { a, b } = nodes;
    const first = (await a.s.samlSpKeys.current()).keyId;
    const second = (await a.s.samlSpKeys.rotate()).keyId;
    await expect.poll(async () => (await b.s.samlSpKeys.current()).keyId).toBe(second);
    expect((await b.s.samlSpKeys.published()).map((k) => k.keyId)).toEqual([second, first]);
    const third = await b.s.samlSpKeys.rotate();
    expect(third.retired).toEqual([first]);
    await expect.poll(async () => (await a.s.samlSpKeys.published()).map((k) => k.keyId)).toEqual([third.keyId, second]);
  });
});
