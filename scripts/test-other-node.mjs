#!/usr/bin/env node
/**
 * The suite runs on the machine's Node.js; this runs the HTTP suites again on the other supported
 * major (24 on a machine with 20, 20 on one with 24 or later), so that both stay green. The other
 * Node.js comes from the npm registry's `node` package (the official binary for this platform),
 * installed once into .cache/node-<major>/ and reused while it is that major.
 *
 *   node scripts/test-other-node.mjs [vitest arguments...]   (default: unit + HTTP on PostgreSQL)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
/**
 * The unit suite (the embedded PGlite among it) and the HTTP suites on PostgreSQL (every route,
 * end to end), two files at a time: what differs between Node.js majors is the runtime (crypto,
 * fetch, streams, WebAssembly, the bcrypt addon's ABI), which they exercise; the HTTP suites'
 * PGlite pass would repeat them on the other database for nine more minutes.
 */
const DEFAULT_ARGS = ['--project', 'unit', '--project', 'http-postgres', '--maxWorkers=2'];
const current = Number(process.versions.node.split('.')[0]);
const major = current >= 24 ? 20 : 24;
const dir = path.join(ROOT, '.cache', `node-${major}`);
const bin = path.join(dir, 'node_modules', 'node', 'bin', 'node');

function installedMajor() {
  if (!existsSync(bin)) return undefined;
  const r = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.split('.')[0]) : undefined;
}

if (installedMajor() !== major) {
  console.log(`Installing Node.js ${major} from the npm registry into ${path.relative(ROOT, dir)}/ for the second pass`);
  mkdirSync(dir, { recursive: true });
  // Its own package.json: the `node` package's preinstall script fetches the platform's binary package.
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ private: true, allowScripts: { node: true } }, null, 2)}\n`);
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `node@${major}`], { cwd: dir, stdio: 'inherit' });
  if (npm.status !== 0 || installedMajor() !== major) {
    console.error(`Could not install Node.js ${major} from the npm registry (npm exit ${npm.status}).`);
    process.exit(1);
  }
}

const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
const args = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_ARGS;
console.log(`\nSecond pass on Node.js ${version} (the suite above ran on ${process.version}): vitest run ${args.join(' ')}\n`);
// npm finds its global configuration (a CA file, a proxy, the registry) beside the Node.js that
// runs it: run by this one, it would look in .cache/, so it is told where the machine's is.
const globalconfig = spawnSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8' }).stdout.trim();
const run = spawnSync(bin, [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args], {
  cwd: ROOT,
  stdio: 'inherit',
  // Whatever the suites start with `node` (or process.execPath) is this Node.js too.
  env: {
    ...process.env,
    PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}`,
    ...(globalconfig !== '' && process.env.npm_config_globalconfig === undefined ? { npm_config_globalconfig: globalconfig } : {}),
  },
});
process.exit(run.status ?? 1);
