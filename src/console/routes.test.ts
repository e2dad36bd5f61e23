/**
 * How src/console serves the built pages (on a bare Fastify: the HTTP conventions are the app's):
 * the pages with the strict CSP and no-store, every path under an entry answered with its page,
 * hashed assets by name only and cached for a year, an unknown asset a 404, `/` for browsers only,
 * and a missing build a 503 saying how to build it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConsoleBuild, type ConsoleBuild } from './files.js';
import { CONSOLE_CSP, consoleRoutes } from './routes.js';

const SHARED = 'export const shared = "' + 'the same words again and again '.repeat(50) + '";';

async function serve(build: ConsoleBuild) {
  const app = Fastify();
  // As the service's CORS does for an allowed origin, before the route.
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.origin) reply.header('access-control-allow-origin', request.headers.origin).header('vary', 'Origin');
  });
  await app.register(consoleRoutes(build));
  await app.ready();
  return app;
}

function fakeBuild(): ConsoleBuild {
  const dir = mkdtempSync(path.join(tmpdir(), 'console-build-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(path.join(dir, 'account.html'), '<!doctype html><title>account</title>');
  writeFileSync(path.join(dir, 'assets', 'console-AbC123.js'), 'export {};');
  writeFileSync(path.join(dir, 'assets', 'shared-Zz1.js'), SHARED);
  writeFileSync(path.join(dir, 'assets', 'shared-Zz1.js.br'), brotliCompressSync(SHARED));
  writeFileSync(path.join(dir, 'assets', 'shared-Zz1.js.gz'), gzipSync(SHARED));
  writeFileSync(path.join(dir, 'assets', 'favicon-Xy9.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(dir, 'assets', 'notes.txt'), 'not an asset type');
  return loadConsoleBuild(dir);
}

describe('serving the console', () => {
  it('answers each path under /console and /account with its page, under the strict CSP, never cached', async () => {
    const app = await serve(fakeBuild());
    for (const [url, title] of [['/console', 'console'], ['/console/users/3f0c8a5e', 'console'], ['/account', 'account'], ['/account/sessions', 'account']] as const) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain(`<title>${title}</title>`);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    }
    expect(CONSOLE_CSP).not.toContain('unsafe');
    expect(CONSOLE_CSP).toContain("require-trusted-types-for 'script'");
    expect(CONSOLE_CSP).toContain("img-src 'self';"); // no data: images: QR codes are drawn as SVG
  });

  it('serves a built asset by name, immutable for a year; anything else under /console/assets is a 404', async () => {
    const app = await serve(fakeBuild());
    const js = await app.inject({ method: 'GET', url: '/console/assets/console-AbC123.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['cross-origin-resource-policy']).toBe('same-origin');
    // The digest is computed once at load and sent with the bytes (the service's X-Content-SHA256
    // hook keeps it rather than hashing the file again on every request).
    expect(js.headers['x-content-sha256']).toBe(createHash('sha256').update('export {};').digest('hex'));
    for (const url of ['/console/assets/notes.txt', '/console/assets/shared-Zz1.js.br', '/console/assets/missing.js', '/console/assets/..%2Findex.html', '/console/assets/']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('sends an asset compressed at build time in the form the client accepts, its digest that of the bytes sent', async () => {
    const app = await serve(fakeBuild());
    const get = (acceptEncoding?: string) => app.inject({ method: 'GET', url: '/console/assets/shared-Zz1.js', headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });
    const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const br = await get('gzip, deflate, br, zstd');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(SHARED);
    expect(br.headers['x-content-sha256']).toBe(digest(br.rawPayload));
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    for (const header of ['gzip', 'br;q=0, gzip;q=0.8', 'identity, gzip']) {
      const gz = await get(header);
      expect(gz.headers['content-encoding'], header).toBe('gzip');
      expect(gunzipSync(gz.rawPayload).toString()).toBe(SHARED);
      expect(gz.headers['x-content-sha256']).toBe(digest(gz.rawPayload));
    }
    for (const header of [undefined, 'identity', 'deflate', 'br;q=0, gzip;q=0', '*;q=0']) {
      const plain = await get(header);
      expect(plain.headers['content-encoding'], String(header)).toBeUndefined();
      expect(plain.body).toBe(SHARED);
    }
    expect((await get('*')).headers['content-encoding']).toBe('br');
    // A shared cache keys on the origin as well as the encoding: CORS's Vary is kept, not replaced.
    const fromApp = await app.inject({ method: 'GET', url: '/console/assets/shared-Zz1.js', headers: { origin: 'https://app.bank.example', 'accept-encoding': 'br' } });
    expect(fromApp.headers.vary).toBe('Origin, accept-encoding');
    // A file the build did not compress is sent as it is.
    expect((await app.inject({ method: 'GET', url: '/console/assets/console-AbC123.js', headers: { 'accept-encoding': 'br' } })).headers['content-encoding']).toBeUndefined();
  });

  it('/ is a page of links for a browser and a 404 for anyone else', async () => {
    const app = await serve(fakeBuild());
    const page = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.statusCode).toBe(200);
    for (const link of ['href="/console"', 'href="/account"', 'href="/api/docs"']) expect(page.body).toContain(link);
    expect(page.body).not.toMatch(/<script|<style|style=|data:/);
    expect(page.body).toContain('<link rel="icon" type="image/svg+xml" href="/console/assets/favicon-Xy9.svg">');
    expect(page.headers.vary).toMatch(/accept/i); // a cache must not give the page to an API client, nor the 404 to a browser
    for (const accept of ['application/json', '*/*', undefined]) {
      const other = await app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
      expect(other.statusCode, String(accept)).toBe(404);
      expect(other.headers.vary, String(accept)).toMatch(/accept/i);
    }
  });

  it('without a build, the pages answer 503 saying how to build it', async () => {
    const app = await serve(loadConsoleBuild(path.join(tmpdir(), 'no-such-console-build')));
    const res = await app.inject({ method: 'GET', url: '/account' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:console');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
  });
});
