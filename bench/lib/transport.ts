/**
 * Transport encryption for the bench: encrypted request bodies (the test harness's reference
 * client, node:crypto only), the plugin's RSA-OAEP decrypt rate on one core and on worker
 * threads, and the machine's `openssl speed rsa2048` private-operation rate to compare it with.
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { rsaUnwrap, rsaWrap, newAesKey } from '../../src/transport/crypto.js';
import { openPreAuth, openSession, preAuthBody } from '../../test/harness/transport-client.js';
import { post } from './client.js';
import type { Rate } from './load.js';

export interface EncryptedSignIn {
  access_token: string;
  refresh_token: string;
  /** The session's AES-256 key, unwrapped from the sealed sign-in answer. */
  key: Buffer;
}

export async function serverPublicKey(base: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/auth/public_key`);
  return ((await res.json()) as { public_key: string }).public_key;
}

/** `{data: {encrypted_key, ciphertext, nonce, tag}}` as a string, for a fixed-body load. */
export function preAuthJson(serverPem: string, body: Record<string, unknown>): string {
  return JSON.stringify(preAuthBody(serverPem, body));
}

export async function encryptedLogin(base: string, serverPem: string, username: string, password: string): Promise<EncryptedSignIn> {
  const res = await post(`${base}/api/v1/auth/login`, preAuthJson(serverPem, { username, password }), { 'x-encrypted': 'true' });
  if (res.status !== 200) throw new Error(`encrypted login as ${username}: ${res.status} ${res.body}`);
  const opened = openPreAuth(JSON.parse(res.body) as Parameters<typeof openPreAuth>[0]);
  return { access_token: String(opened.body.access_token), refresh_token: String(opened.body.refresh_token), key: opened.key };
}

/**
 * `count` distinct pre-auth envelopes of `body`, made before a load so that building them costs
 * the load generator nothing while it runs; `next()` hands them out in order, once each.
 */
export function preAuthPool(serverPem: string, body: Record<string, unknown>, count: number): { next(): string } {
  const pool = Array.from({ length: count }, () => preAuthJson(serverPem, body));
  let i = 0;
  return {
    next() {
      if (i >= pool.length) throw new Error(`pre-auth envelope pool of ${count} exhausted: raise its size`);
      return pool[i++]!;
    },
  };
}

/** One encrypted validate, checked end to end before the load. */
export async function checkEncryptedValidate(base: string, token: string, body: string): Promise<void> {
  const res = await post(`${base}/api/v1/auth/validate`, body, { 'x-encrypted': 'true', authorization: `Bearer ${token}` });
  const opened = res.status === 200 ? openPreAuth(JSON.parse(res.body) as Parameters<typeof openPreAuth>[0]).body : undefined;
  if (opened?.valid !== true) throw new Error(`encrypted validate: ${res.status} ${res.body}`);
}

/** One sealed GET under the session key, checked before the load. */
export async function checkSealedGet(url: string, session: EncryptedSignIn): Promise<void> {
  const res = await fetch(url, { headers: { 'x-encrypted': 'true', authorization: `Bearer ${session.access_token}` } });
  const text = await res.text();
  if (res.status !== 200 || res.headers.get('x-encrypted') !== 'true') throw new Error(`sealed GET ${url}: ${res.status} ${text}`);
  openSession(session.key, JSON.parse(text) as Parameters<typeof openSession>[1]);
}

/** A wrapped AES key and the RSA-2048 private key that opens it, as the plugin holds them. */
function fixture(): { pem: string; wrapped: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), wrapped: rsaWrap(publicKey, newAesKey()) };
}

/** `rsaUnwrap` (src/transport/crypto.ts) in a loop on this thread: one core. */
export function rsaUnwrapRate(seconds: number, warmupMs = 500): Rate {
  const { pem, wrapped } = fixture();
  const key = createPrivateKey(pem);
  for (const end = performance.now() + warmupMs; performance.now() < end; ) rsaUnwrap(key, wrapped);
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    rsaUnwrap(key, wrapped);
    n++;
  }
  const took = (performance.now() - start) / 1000;
  return { perSec: n / took, ok: n, failed: 0, all: n, p50Ms: NaN, p99Ms: NaN, seconds: took };
}

// The worker runs the built plugin (dist/, which `npm run build` has just made from src/):
// worker threads do not get tsx's loader.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPrivateKey } = require('node:crypto');
import(workerData.url).then(({ rsaUnwrap }) => {
  const key = createPrivateKey(workerData.pem);
  for (const end = performance.now() + workerData.warmupMs; performance.now() < end; ) rsaUnwrap(key, workerData.wrapped);
  parentPort.once('message', () => {
    let n = 0;
    const start = performance.now();
    const end = start + workerData.seconds * 1000;
    while (performance.now() < end) { rsaUnwrap(key, workerData.wrapped); n++; }
    parentPort.postMessage({ n, took: (performance.now() - start) / 1000 });
  });
  parentPort.postMessage('ready');
});
`;

/** The same loop on `threads` worker threads at once (started together after each warms up). */
export async function rsaUnwrapRateThreads(root: string, threads: number, seconds: number, warmupMs = 500): Promise<Rate> {
  const { pem, wrapped } = fixture();
  const url = pathToFileURL(path.join(root, 'dist/src/transport/crypto.js')).href;
  const workers = Array.from({ length: threads }, () => new Worker(WORKER, { eval: true, workerData: { url, pem, wrapped, seconds, warmupMs } }));
  try {
    const message = (w: Worker): Promise<unknown> => new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    await Promise.all(workers.map(message));
    const results = workers.map((w) => message(w) as Promise<{ n: number; took: number }>);
    for (const w of workers) w.postMessage('go');
    const done = await Promise.all(results);
    const n = done.reduce((a, r) => a + r.n, 0);
    const took = Math.max(...done.map((r) => r.took));
    return { perSec: n / took, ok: n, failed: 0, all: n, p50Ms: NaN, p99Ms: NaN, seconds: took };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** `openssl speed -seconds N [-multi M] rsa2048`: the private-key (sign/s) rate. */
export function opensslRsaSignRate(seconds: number, multi = 1): number {
  const args = ['speed', '-seconds', String(seconds), ...(multi > 1 ? ['-multi', String(multi)] : []), 'rsa2048'];
  const out = execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const header = out.split('\n').find((l) => /\bsign\/s\b/.test(l));
  const row = out.split('\n').find((l) => /^rsa\s+2048\s+bits\s/.test(l));
  if (!header || !row) throw new Error(`cannot read openssl speed output:\n${out}`);
  // The columns after "rsa 2048 bits" line up with the header's names.
  const names = header.trim().split(/\s+/);
  const values = row.trim().split(/\s+/).slice(3);
  const i = names.indexOf('sign/s');
  const rate = Number(values[i]);
  if (!(rate > 0)) throw new Error(`cannot read sign/s from openssl speed output:\n${out}`);
  return rate;
}
