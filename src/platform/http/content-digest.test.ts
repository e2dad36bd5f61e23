/**
 * X-Content-SHA256 covers the bytes actually sent: hashed by the shell for every answer, unless
 * the route gives the digest of the very bytes it sends (the console's assets, hashed once at
 * load); a digest given with a body that the envelope then seals is replaced by the sealed
 * bytes' digest.
 */
import { createHash } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { Metrics } from '../observability/metrics.js';
import { createHttpApp } from './app.js';
import type { BodyEnvelope } from './envelope.js';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const ASSET = Buffer.from('export const large = "the same bytes on every request";');

function appWith(envelope?: BodyEnvelope) {
  const app = createHttpApp({ config: loadConfig({ NODE_ENV: 'test' }), log: pino({ level: 'silent' }), metrics: new Metrics(), envelope });
  app.get('/asset', async (_request, reply) => reply.type('text/javascript').header('x-content-sha256', sha256(ASSET)).send(ASSET));
  app.get('/json', async () => ({ hello: 'world' }));
  return app;
}

describe('X-Content-SHA256', () => {
  it('keeps the digest a route gives with its bytes, and hashes every other answer', async () => {
    const app = appWith();
    const asset = await app.inject({ method: 'GET', url: '/asset' });
    expect(asset.headers['x-content-sha256']).toBe(sha256(asset.rawPayload));
    const json = await app.inject({ method: 'GET', url: '/json' });
    expect(json.headers['x-content-sha256']).toBe(sha256(json.rawPayload));
  });

  it('a body the envelope seals is hashed again: a digest given with the plaintext does not survive', async () => {
    const sealing: BodyEnvelope = {
      requestDecorator: 'sealingTest',
      enforce: async () => {},
      decrypt: async () => {},
      seal: (_request, _reply, payload) => `sealed:${payload.toString()}`,
    };
    const app = appWith(sealing);
    const asset = await app.inject({ method: 'GET', url: '/asset' });
    expect(asset.body.startsWith('sealed:')).toBe(true);
    expect(asset.headers['x-content-sha256']).toBe(sha256(asset.rawPayload));
    expect(asset.headers['x-content-sha256']).not.toBe(sha256(ASSET));
  });
});
