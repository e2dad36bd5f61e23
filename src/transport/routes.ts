import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../app.js';
import type { App } from '../platform/http/app.js';

const PublicKeyResponse = Type.Object(
  {
    public_key: Type.String({ description: 'PEM (SPKI) public key', examples: ['-----BEGIN PUBLIC KEY-----\nMIIBIjANBg...\n-----END PUBLIC KEY-----\n'] }),
    algorithm: Type.Literal('RSA-2048'),
    key_id: Type.String({ examples: ['3f9a0c1d2b4e5f60'] }),
    expires_at: Type.String({ format: 'date-time', examples: ['2027-02-20T09:00:00.000Z'] }),
  },
  { description: 'SPEC "Public key response"' },
);

/** `GET` and `POST /api/v1/auth/public_key` (ruling 1): no bearer token needed. */
export function transportRoutes(s: Pick<Services, 'transportKeys'>): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const handler = async () => ({
      public_key: s.transportKeys.publicKeyPem,
      algorithm: 'RSA-2048' as const,
      key_id: s.transportKeys.keyId,
      expires_at: s.transportKeys.expiresAt,
    });
    const schema = {
      tags: ['Core authentication'],
      summary: 'The server transport public key',
      description: 'RSA-2048 public key that clients use to encrypt pre-auth request bodies (RSA-OAEP, SHA-256). Open: no bearer token. GET and POST answer alike.',
      response: { 200: PublicKeyResponse },
    };
    app.get('/api/v1/auth/public_key', { schema }, handler);
    app.post('/api/v1/auth/public_key', { schema }, handler);
  };
}
