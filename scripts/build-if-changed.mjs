#!/usr/bin/env node
/**
 * `npm start`'s first step (and the test harness's global build): builds what changed since the
 * last build, so a warm start goes straight to `node`.
 *
 * - The server: `tsc -p tsconfig.build.json` (incremental) when any file or folder under src/ (a
 *   deleted file changes its folder), tsconfig*.json or package-lock.json is newer than
 *   dist/.build-stamp, which a successful build writes.
 * - The console and account pages: `vite build` of packages/console into dist/console when
 *   anything under packages/console or packages/client/src (the SDK it bundles), or
 *   package-lock.json, is newer than dist/.console-build-stamp (about a second).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');

/** The newest modification time under `dir` (files and folders), in milliseconds. */
function newest(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

const mtime = (file) => statSync(path.join(root, file)).mtimeMs;

/** When `stamp` was written, or 0 when it or `output` is missing. */
function builtAt(stamp, output) {
  return existsSync(stamp) && existsSync(output) ? statSync(stamp).mtimeMs : 0;
}

/** Runs a build step; whether it succeeded. */
function run(args, env = process.env) {
  return spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root, env }).status === 0;
}

function buildServer() {
  const stamp = path.join(dist, '.build-stamp');
  const server = path.join(dist, 'src', 'server.js');
  const inputs = [newest(path.join(root, 'src')), ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map(mtime)];
  const built = builtAt(stamp, server);
  if (built >= Math.max(...inputs)) return;
  // tsc's incremental record says what it emitted, not whether that is still there: without the
  // output it must start afresh, or it would emit nothing.
  if (!existsSync(server)) rmSync(path.join(dist, '.tsbuildinfo'), { force: true });
  console.error(built === 0 ? 'Building the server (first start): this takes a few tens of seconds, once.' : 'Sources changed since the last build: compiling what changed ...');
  const started = Date.now();
  if (!run([path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')])) process.exit(1);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  console.error(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

function buildConsole() {
  const stamp = path.join(dist, '.console-build-stamp');
  const inputs = [newest(path.join(root, 'packages', 'console')), newest(path.join(root, 'packages', 'client', 'src')), mtime('package-lock.json')];
  if (builtAt(stamp, path.join(dist, 'console', 'index.html')) >= Math.max(...inputs)) return;
  const started = Date.now();
  // The API does not depend on the pages: a failed console build is reported and the server
  // starts all the same (the pages answer 503 saying how to build them).
  // React's production build always: NODE_ENV=test (the test runner) or development (a shell)
  // would otherwise give Vite React's development build, which is larger and behaves otherwise
  // (its checks write innerHTML, which the pages' Trusted Types policy refuses).
  const env = { ...process.env, NODE_ENV: 'production' };
  if (!run([path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', path.join(root, 'packages', 'console', 'vite.config.ts')], env)) {
    console.error('The console and account pages did not build (above): the API starts without them; /console and /account answer 503 until `npm run build:console` succeeds.');
    return;
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  console.error(`Console built in ${((Date.now() - started) / 1000).toFixed(1)} s (dist/console).`);
}

buildServer();
buildConsole();
