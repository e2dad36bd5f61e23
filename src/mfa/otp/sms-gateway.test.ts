import http from 'node:http';
import type net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../../../test/harness/smtp.js';
import { startSmsGateway, type TestSmsGateway } from '../../../test/harness/sms-gateway.js';
import { SmsDeliveryError, SmsGateway } from './sms-gateway.js';

const lines: string[] = [];
const log = pino({ level: 'debug' }, new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
const MESSAGE = '482913 is your Strongroom code to finish signing in. Valid 5 minutes. Never share it: the bank will never ask for it.';
const REF = '6f1c2d0e-8a4b-4c55-9e1f-3b7a2d9c0e11';

let gw: TestSmsGateway;
const client = (over: Partial<{ url: string; token: string | undefined; timeoutMs: number }> = {}) =>
  new SmsGateway({ url: gw.url, token: gw.token, sender: 'Strongroom', timeoutMs: 2000, ...over }, log);

async function reasonOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(SmsDeliveryError);
  return (err as SmsDeliveryError).reason;
}

beforeAll(async () => {
  gw = await startSmsGateway();
});
afterAll(async () => gw.close());

describe('SMS gateway contract', () => {
  it('posts {to, from, message, reference} with the bearer token and Idempotency-Key, and returns the gateway id', async () => {
    gw.mode = 'ok';
    const r = await client().send({ to: '+254712345612', message: MESSAGE, reference: REF });
    expect(r.status).toBe('queued');
    expect(gw.latest('+254712345612')).toEqual({ to: '+254712345612', from: 'Strongroom', message: MESSAGE, reference: REF, idempotencyKey: REF, id: r.id });
  });

  it('a refused token is a failure (HTTP 401), and the reason names no secret', async () => {
    expect(await reasonOf(client({ token: 'wrong-token' }).send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('HTTP 401');
    expect(await reasonOf(client({ token: undefined }).send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('HTTP 401');
  });

  it('a 5xx answer, a body that is not JSON, and a hung gateway are failures', async () => {
    gw.mode = 'fail';
    expect(await reasonOf(client().send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('HTTP 500');
    gw.mode = 'garbage';
    expect(await reasonOf(client().send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('response is not JSON');
    gw.mode = 'hang';
    expect(await reasonOf(client({ timeoutMs: 100 }).send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('timeout');
    gw.mode = 'ok';
  });

  it('a refused connection is a failure named by its socket error', async () => {
    const port = await closedPort();
    expect(await reasonOf(client({ url: `http://127.0.0.1:${port}/v1/messages` }).send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('ECONNREFUSED');
  });

  it('a redirect is not followed (the token must not travel to another host) and a 2xx off the contract is a failure', async () => {
    const srv = http.createServer((req, res) => {
      if (req.url === '/redirect') res.writeHead(307, { location: `${gw.url}` }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: '', status: 'queued' }));
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    const base = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
    const before = gw.messages.length;
    expect(await reasonOf(client({ url: `${base}/redirect` }).send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('HTTP 307');
    expect(await reasonOf(client({ url: `${base}/other` }).send({ to: '+254712345612', message: MESSAGE, reference: REF }))).toBe('response does not follow the contract');
    expect(gw.messages.length).toBe(before);
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });

  it('logs a failure by its reason, never with the bearer token or the message (it holds the code)', () => {
    const all = lines.join('');
    expect(all).toContain('SMS delivery through the gateway failed: HTTP 500');
    expect(all).not.toContain(gw.token);
    expect(all).not.toContain('482913');
  });
});
