/**
 * A local SMS gateway that speaks Strongroom's contract (src/mfa/otp/sms-gateway.ts): a
 * node:http server on loopback that checks the bearer token, the headers and the JSON shape,
 * keeps every accepted message and answers `{id, status: "queued"}`. It can be told to fail
 * with a status, to answer garbage, or to hang (never answer), so each failure path is real.
 * A message is recorded before the answer is written, so once the request that sent it
 * resolves the message is already in `messages`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';

export interface ReceivedSms {
  to: string;
  from: string;
  message: string;
  reference: string;
  idempotencyKey: string;
  /** The gateway's id for it. */
  id: string;
}

/** `ok`: accept; `fail`: answer `failStatus`; `garbage`: 200 with a body that is not JSON; `hang`: never answer. */
export type GatewayMode = 'ok' | 'fail' | 'garbage' | 'hang';

export interface TestSmsGateway {
  url: string;
  token: string;
  messages: ReceivedSms[];
  /** Requests refused by the checks (wrong token, bad shape), with the status given: contract violations. */
  refused: Array<{ status: number; reason: string }>;
  /** Requests that passed the checks and were answered `failStatus` because `mode` was `fail` (deliberate). */
  failed: Array<{ status: number; reference: string }>;
  mode: GatewayMode;
  failStatus: number;
  /** The newest message sent to `to`. */
  latest(to: string): ReceivedSms | undefined;
  close(): Promise<void>;
}

const E164 = /^\+[1-9][0-9]{6,14}$/;

function shapeProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body is not a JSON object';
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  if (keys !== 'from,message,reference,to') return `unexpected fields: ${keys}`;
  if (typeof b.to !== 'string' || !E164.test(b.to)) return 'to is not E.164';
  for (const k of ['from', 'message', 'reference'] as const) if (typeof b[k] !== 'string' || b[k] === '') return `${k} is not a non-empty string`;
  if ((b.message as string).length > 160) return 'message longer than 160 characters';
  return null;
}

export async function startSmsGateway(opts: { token?: string } = {}): Promise<TestSmsGateway> {
  const token = opts.token ?? `gw-${randomUUID()}`;
  const byKey = new Map<string, ReceivedSms>();
  const gw: TestSmsGateway = {
    url: '', token, messages: [], refused: [], failed: [], mode: 'ok', failStatus: 500,
    latest: (to) => gw.messages.filter((m) => m.to === to).at(-1),
    close: () => new Promise((resolve) => {
      server.closeAllConnections(); // hanging requests included
      server.close(() => resolve());
    }),
  };
  const refuse = (res: http.ServerResponse, status: number, reason: string) => {
    gw.refused.push({ status, reason });
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: reason }));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (gw.mode === 'hang') return;
      if (req.method !== 'POST') return refuse(res, 405, 'POST only');
      if (req.headers.authorization !== `Bearer ${token}`) return refuse(res, 401, 'bad or missing bearer token');
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return refuse(res, 415, 'content-type must be application/json');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return refuse(res, 400, 'body is not JSON');
      }
      const problem = shapeProblem(body);
      if (problem) return refuse(res, 400, problem);
      const b = body as Omit<ReceivedSms, 'id' | 'idempotencyKey'>;
      const key = req.headers['idempotency-key'];
      if (typeof key !== 'string' || key !== b.reference) return refuse(res, 400, 'Idempotency-Key must equal reference');
      if (gw.mode === 'fail') {
        gw.failed.push({ status: gw.failStatus, reference: b.reference });
        return res.writeHead(gw.failStatus, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'told to fail' }));
      }
      if (gw.mode === 'garbage') return res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      let msg = byKey.get(key); // the same key twice: sent once, same answer
      if (!msg) {
        msg = { ...b, idempotencyKey: key, id: `gw-${randomUUID()}` };
        byKey.set(key, msg);
        gw.messages.push(msg);
      }
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ id: msg.id, status: 'queued' }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  gw.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1/messages`;
  return gw;
}
