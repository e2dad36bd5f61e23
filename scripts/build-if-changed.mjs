#!/usr/bin/env node
/**
 * `npm start`'s first step: compiles the server (`tsc -p tsconfig.build.json`, incremental) only
 * when a source changed since the last build, so a warm start goes straight to `node`. "Changed"
 * is any file or folder under src/ (a deleted file changes its folder), tsconfig*.json or
 * package-lock.json newer than dist/.build-stamp, which a successful build writes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');

/** The newest modification time under `dir` (files and folders), in milliseconds. */
function newest(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

const inputs = [newest(path.join(root, 'src')), ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((f) => statSync(path.join(root, f)).mtimeMs)];
const built = existsSync(stamp) && existsSync(path.join(root, 'dist', 'src', 'server.js')) ? statSync(stamp).mtimeMs : 0;
if (built >= Math.max(...inputs)) process.exit(0);

// tsc's incremental record says what it emitted, not whether that is still there: without the
// output it must start afresh, or it would emit nothing.
if (!existsSync(path.join(root, 'dist', 'src', 'server.js'))) rmSync(path.join(root, 'dist', '.tsbuildinfo'), { force: true });
console.error(built === 0 ? 'Building the server (first start): this takes a few tens of seconds, once.' : 'Sources changed since the last build: compiling what changed ...');
const started = Date.now();
const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
console.error(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
