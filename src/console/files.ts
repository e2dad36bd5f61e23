/**
 * The built console (packages/console, built by scripts/build-if-changed.mjs into dist/console):
 * its two HTML pages and its hashed assets, read once, held in memory (about 0.5 MB), and served
 * by name only: a request can name a file the build listed, never a path on disk.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Bytes as sent, with their SHA-256 in hex, computed once at load for the X-Content-SHA256 header. */
export interface Encoded {
  body: Buffer;
  sha256: string;
}

export interface ConsoleFile extends Encoded {
  type: string;
  /** The same file compressed at build time (`<name>.br`, `<name>.gz`), when the build wrote them. */
  br?: Encoded;
  gzip?: Encoded;
}

export interface ConsoleBuild {
  /** The console's page (/console) and the account pages' (/account); null when the build is missing. */
  pages: { console: Buffer; account: Buffer } | null;
  /** Hashed assets by file name (`console-B0uWyr5W.js`). */
  assets: ReadonlyMap<string, ConsoleFile>;
  dir: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

/** The repository (or image) root: the nearest folder above this file that holds package.json. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return from;
  }
}

/** dist/console of this installation, wherever the server runs from (src/ through tsx, or dist/src/). */
export function defaultConsoleDir(): string {
  return path.join(packageRoot(import.meta.dirname), 'dist', 'console');
}

function encoded(file: string): Encoded | undefined {
  if (!existsSync(file)) return undefined;
  const body = readFileSync(file);
  return { body, sha256: createHash('sha256').update(body).digest('hex') };
}

export function loadConsoleBuild(dir: string): ConsoleBuild {
  const page = (name: string) => path.join(dir, name);
  if (!existsSync(page('index.html')) || !existsSync(page('account.html'))) return { pages: null, assets: new Map(), dir };
  const assets = new Map<string, ConsoleFile>();
  const assetDir = path.join(dir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const file = path.join(assetDir, name);
    assets.set(name, { ...encoded(file)!, type, br: encoded(`${file}.br`), gzip: encoded(`${file}.gz`) });
  }
  return { pages: { console: readFileSync(page('index.html')), account: readFileSync(page('account.html')) }, assets, dir };
}
