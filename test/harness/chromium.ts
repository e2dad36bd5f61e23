/**
 * Finds Debian's Chromium for the browser suites (driven by playwright-core, which never
 * downloads a browser here). Installs the Debian package `chromium` when it is missing and we
 * are root with apt-get; otherwise fails saying what to install. CHROMIUM_PATH overrides.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { aptInstall } from './apt.js';

export const CHROMIUM_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

function findChromium(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given && existsSync(given)) return given;
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  const which = spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() !== '' ? which.stdout.trim() : undefined;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The path of a Chromium executable, installing Debian's package when possible. */
export function ensureChromium(): string {
  let found = findChromium();
  if (found) return found;
  if (isRoot() && existsSync('/usr/bin/apt-get')) {
    console.log('[harness] Chromium not found: installing Debian package chromium');
    aptInstall(['chromium'], 'command -v chromium >/dev/null');
    found = findChromium();
    if (found) return found;
  }
  throw new Error('Chromium is missing: install the Debian package "chromium" (apt-get install chromium), or set CHROMIUM_PATH to a Chromium executable.');
}

/** The client SDK (packages/client) bundled for the browser, as a bank's web app would ship it. */
export async function browserSdkBundle(): Promise<string> {
  const built = await build({
    entryPoints: [path.resolve(import.meta.dirname, '../../packages/client/src/index.ts')],
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
  });
  return built.outputFiles[0]!.text;
}

/** What a browser suite drives: the service's origin and a Chromium started for it. */
export interface Served {
  origin: string;
  browser: Browser;
}

/**
 * The browser suites' set-up: `app` listening on loopback (on `port`, or a free one) and Debian's
 * Chromium started headless. `localhost: true` gives the origin as http://localhost (a passkey's
 * relying party is a domain name), resolved to 127.0.0.1 by the browser. The caller closes the
 * browser, then the app.
 */
export async function serveToChromium(app: { listen(o: { host: string; port: number }): Promise<unknown>; server: { address(): unknown } }, opts: { port?: number; localhost?: boolean } = {}): Promise<Served> {
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const port = (app.server.address() as AddressInfo).port;
  const args = opts.localhost ? [...CHROMIUM_ARGS, '--host-resolver-rules=MAP localhost 127.0.0.1'] : CHROMIUM_ARGS;
  const browser = await chromium.launch({ executablePath: ensureChromium(), args });
  return { origin: `http://${opts.localhost ? 'localhost' : '127.0.0.1'}:${port}`, browser };
}
