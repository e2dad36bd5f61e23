/**
 * The scale bench's PostgreSQL: like the test harness's durable one (initdb + pg_ctl, loopback,
 * PostgreSQL's durable defaults), but its data directory outlives the run, so the million-user
 * seed is made once and reused by the runs after it. It lives under STRONGROOM_SCALE_DIR
 * (default /var/tmp/strongroom-scale, which survives a reboot where /tmp may not), beside the
 * DATA_DIR whose generated keys the seed was encrypted with. Delete the directory to start over.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ensurePostgresInstalled, freePort } from '../../test/harness/postgres.js';

export const SCALE_DIR = process.env.STRONGROOM_SCALE_DIR || '/var/tmp/strongroom-scale';

export interface PersistentPostgres {
  url: (db: string) => string;
  port: number;
  /** Stops the server; the data stay for the next run. */
  stop: () => void;
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** Starts (initialising it the first time) the PostgreSQL whose data live in `dir/pg`. */
export async function startPersistentPostgres(dir = SCALE_DIR): Promise<PersistentPostgres> {
  const bin = ensurePostgresInstalled();
  const home = path.join(dir, 'pg');
  const data = path.join(home, 'data');
  mkdirSync(dir, { recursive: true, mode: 0o755 }); // the postgres user must reach dir/pg
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const asPostgres = isRoot();
  if (asPostgres) {
    const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
    chownSync(home, id('-u'), id('-g')); // PostgreSQL refuses to run as root
  }
  const run = (cmd: string, args: string[], check = true): { status: number | null; out: string } => {
    const full = asPostgres ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] as const : [path.join(bin, cmd), args] as const;
    const r = spawnSync(full[0], [...full[1]], { encoding: 'utf8' });
    if (check && r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
    return { status: r.status, out: r.stdout };
  };
  if (!existsSync(path.join(data, 'PG_VERSION'))) {
    run('initdb', ['-D', data, '-U', 'strongroom', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  }
  // A run killed before it could stop the server leaves it running: stop it, it is ours.
  if (run('pg_ctl', ['-D', data, 'status'], false).status === 0) run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  const port = await freePort();
  run('pg_ctl', ['-D', data, '-l', path.join(home, 'log'), '-w', '-t', '120', '-o', `-p ${port} -k ${home} -c listen_addresses=127.0.0.1 -c max_connections=300`, 'start']);
  return {
    url: (db) => `postgres://strongroom@127.0.0.1:${port}/${db}`,
    port,
    stop: () => {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '120', 'stop']);
    },
  };
}
