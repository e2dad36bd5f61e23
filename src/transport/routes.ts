import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { App } from '../platform/http/app.js';
import type { TransportKeySource } from './keys.js';

const PublicKeyResponse = Type.Object(
  {
    public_key: Type.String({ description: 'PEM (SPKI) public key', examples: ['-----BEGIN PUBLIC KEY-----\nMIIBIjANBg...\n-----END PUBLIC KEY-----\n'] }),
    algorithm: Type.Literal('RSA-2048'),
    key_id: Type.String({ examples: ['3f9a0c1d2b4e5f60'] }),
    expires_at: Type.String({ format: 'date-time', examples: ['2027-02-20T09:00:00.000Z'] }),
  },
  { title: 'TransportPublicKey', description: 'The server\'s transport public key and how long it is accepted.' },
);

/** `GET` and `POST /api/v1/auth/public_key` (ruling 1): no bearer token needed. */
export function transportRoutes(s: { transportKeys: TransportKeySource }): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const handler = async () => {
      const k = s.transportKeys.current();
      return { public_key: k.publicKeyPem, algorithm: 'RSA-2048' as const, key_id: k.keyId, expires_at: new Date(k.expiresAt).toISOString() };
    };
    const schema = {
      tags: ['Core authentication'],
      summary: 'The server transport public key',
      description: 'The current RSA-2048 public key that clients use to wrap the AES key of pre-auth request bodies (RSA-OAEP with SHA-256 for hash and MGF1). Open: no bearer token; never encrypted. GET and POST answer alike. The key is accepted until `expires_at`; a newer one may be published before then (rotation every 90 days): fetch again when `expires_at` is near or a request answers DECRYPTION_FAILED.',
      response: { 200: PublicKeyResponse },
    };
    app.get('/api/v1/auth/public_key', { schema }, handler);
    app.post('/api/v1/auth/public_key', { schema }, handler);
  };
}
