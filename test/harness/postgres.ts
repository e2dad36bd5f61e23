/**
 * Starts a real PostgreSQL for the suites: initdb + pg_ctl in a temporary directory, on a free
 * loopback port. Installs Debian's postgresql when the binaries are missing and we are root;
 * otherwise fails saying what to install. As root, the server runs as the `postgres` user
 * (PostgreSQL refuses to run as root).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { aptInstall } from './apt.js';

export interface RunningPostgres {
  url: (db: string) => string;
  stop: () => void;
}

function findBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return which.status === 0 ? path.dirname(which.stdout.trim()) : undefined;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

export function ensurePostgresInstalled(): string {
  let bin = findBinDir();
  if (bin) return bin;
  if (isRoot() && existsSync('/usr/bin/apt-get')) {
    console.log('[harness] PostgreSQL not found: installing Debian package postgresql');
    aptInstall(['postgresql'], 'ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1');
    bin = findBinDir();
    if (bin) return bin;
  }
  throw new Error('PostgreSQL server binaries (initdb, pg_ctl) are missing: install the Debian package "postgresql" (apt-get install postgresql).');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/**
 * A PostgreSQL of its own in a temporary directory. The test suite's trades durability for
 * speed (`fsync`, `synchronous_commit` and `full_page_writes` off); `durable` keeps PostgreSQL's
 * defaults, as the bench must (ARCHITECTURE.md section 6).
 */
export async function startPostgres(opts: { durable?: boolean } = {}): Promise<RunningPostgres> {
  const bin = ensurePostgresInstalled();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const asPostgres = isRoot();
  if (asPostgres) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), Number(execFileSync('id', ['-g', 'postgres']).toString().trim()));
  const run = (cmd: string, args: string[]): void => {
    const full = asPostgres ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] as const : [path.join(bin, cmd), args] as const;
    const r = spawnSync(full[0], [...full[1]], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-U', 'strongroom', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  run('pg_ctl', [
    '-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${opts.durable ? '' : '-c fsync=off -c synchronous_commit=off -c full_page_writes=off '}-c max_connections=300`,
    'start',
  ]);
  return {
    url: (db) => `postgres://strongroom@127.0.0.1:${port}/${db}`,
    stop: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
