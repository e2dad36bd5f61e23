/**
 * The directory connection pool (src/ldap/pool.ts) against a real OpenLDAP: connections reused
 * across sign-ins, never searching in a user's identity, replaced after the directory restarts
 * or drops them, bounded, closed when idle and on close. The slapd statistics log is the witness
 * for what each connection did.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { Client } from 'ldapts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryUnavailableError, LdapDirectory, type LdapDirectoryConfig } from '../../src/ldap/directory.js';
import { DirectoryPool, watchedClient } from '../../src/ldap/pool.js';
import { type RunningSlapd, startSlapd } from '../harness/slapd.js';

let ldap: RunningSlapd;
let ca: Buffer;

beforeAll(async () => {
  ldap = await startSlapd();
  ca = readFileSync(ldap.caFile);
});

afterAll(async () => {
  await ldap?.stop();
});

const made: LdapDirectory[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => d.close()));
});

function directory(overrides: Partial<LdapDirectoryConfig> = {}): LdapDirectory {
  const dir = new LdapDirectory({
    uri: ldap.uri, bindDn: ldap.bindDn, bindPassword: ldap.bindPassword, baseDn: ldap.baseDn,
    userFilter: '(&(objectClass=inetOrgPerson)(uid={username}))', attrMail: 'mail', attrName: 'displayName', groupMemberAttr: 'memberOf',
    timeoutMs: 5000, poolSize: 1,
    ...overrides,
  });
  made.push(dir);
  return dir;
}

/** Established TCP connections from this host to `port`, client side. */
function connectionsTo(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((file) => readFileSync(file, 'utf8').split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[2]?.endsWith(`:${hexPort}`) && cols[3] === '01').length;
}

/** The log from `mark` on, once a marker search (uid=log-fence-N) sent after `work` is in it: every line of `work` is then there too. */
let fences = 0;
async function logOf(work: () => Promise<unknown>): Promise<string> {
  const mark = ldap.log().length;
  await work();
  const fence = `log-fence-${++fences}`;
  const raw = new Client({ url: ldap.uri, timeout: 2000 });
  try {
    await raw.bind(ldap.bindDn, ldap.bindPassword);
    await raw.search(ldap.baseDn, { filter: `(uid=${fence})` });
  } finally {
    await raw.unbind();
  }
  await ldap.waitForLog(new RegExp(`uid=${fence}`), mark);
  return ldap.log().slice(mark);
}

/** slapd's request lines of one connection, in order: `BIND dn="..."` (the request, not its `mech=` result line), `SRCH base=...` and so on. */
function requests(log: string, conn: string): string[] {
  return [...log.matchAll(new RegExp(` ${conn} op=\\d+ (BIND dn="[^"]*"(?= method=)|SRCH base=[^\\n]*|EXT [^\\n]*|UNBIND)`, 'g'))].map((m) => m[1]!);
}

/** The connections slapd accepted in this part of its log, but the fence's. */
const accepted = (log: string): string[] => [...log.matchAll(/ (conn=\d+) fd=\d+ ACCEPT /g)].map((m) => m[1]!)
  .filter((conn) => !requests(log, conn).some((op) => op.includes('log-fence')));

describe('reuse', () => {
  it('sign-ins one after another share one connection: no new connection, no unbind between them', async () => {
    const dir = directory();
    const log = await logOf(async () => {
      for (let i = 0; i < 5; i++) expect(await dir.authenticate('bob', ldap.users.bob.password)).toMatchObject({ kind: 'ok' });
    });
    const conns = accepted(log);
    expect(conns).toHaveLength(1);
    const ops = requests(log, conns[0]!);
    expect(ops.filter((o) => o.startsWith('SRCH'))).toHaveLength(5);
    expect(ops.filter((o) => o === `BIND dn="${ldap.users.bob.dn}"`)).toHaveLength(5);
    expect(ops).not.toContain('UNBIND');
    expect(dir.connections).toBe(1);
  });
});

describe('threat: a connection left bound as a user and reused for another\'s search', () => {
  // alice may read only her own entry (slapd: `by self read`): a search for bob in her identity
  // finds nothing, and a directory that searched in it would answer "invalid" for bob, or worse,
  // with what alice may read.
  it('after alice\'s bind, the search for bob runs as the service account again, on the same connection', async () => {
    const dir = directory();
    const log = await logOf(async () => {
      expect(await dir.find('alice')).toMatchObject({ dn: ldap.users.alice.dn }); // the connection is the service account's
      expect(await dir.verify(ldap.users.alice.dn, ldap.users.alice.password)).toBe(true);
      expect(await dir.find('bob')).toEqual({ dn: ldap.users.bob.dn, mail: 'bob@bank.test', name: 'Bob Baker', groups: [ldap.groups.tellers] });
    });
    const [conn, ...others] = accepted(log);
    expect(others).toEqual([]);
    expect(requests(log, conn!)).toEqual([
      `BIND dn="${ldap.bindDn}"`, expect.stringMatching(/^SRCH .*\(uid=alice\)/),
      `BIND dn="${ldap.users.alice.dn}"`, `BIND dn="${ldap.bindDn}"`, expect.stringMatching(/^SRCH base="dc=bank,dc=test" scope=2 .*\(uid=bob\)/),
    ]);
  });

  it('after a failed bind (the connection is anonymous then), the search is bound as the service account first', async () => {
    const dir = directory();
    const log = await logOf(async () => {
      expect(await dir.find('alice')).toMatchObject({ dn: ldap.users.alice.dn });
      expect(await dir.verify(ldap.users.alice.dn, 'not-her-password')).toBe(false);
      expect(await dir.find('bob')).toMatchObject({ dn: ldap.users.bob.dn, groups: [ldap.groups.tellers] });
    });
    const [conn, ...others] = accepted(log);
    expect(others).toEqual([]);
    expect(requests(log, conn!).slice(2)).toEqual([`BIND dn="${ldap.users.alice.dn}"`, `BIND dn="${ldap.bindDn}"`, expect.stringMatching(/^SRCH .*\(uid=bob\)/)]);
  });

  it('under parallel sign-ins of different users on two connections, every search follows a service bind on its connection', async () => {
    const dir = directory({ poolSize: 2 });
    const keys = ['alice', 'bob', 'carol', 'unicode'] as const;
    const log = await logOf(() => Promise.all(Array.from({ length: 24 }, async (_, i) => {
      const user = ldap.users[keys[i % keys.length]!];
      expect(await dir.authenticate(user.uid, user.password)).toMatchObject({ kind: 'ok', dn: user.dn });
    })));
    const conns = accepted(log);
    expect(conns).toHaveLength(2);
    for (const conn of conns) {
      let bound = '';
      for (const op of requests(log, conn)) {
        if (op.startsWith('BIND')) bound = op;
        else if (op.startsWith('SRCH')) expect(bound).toBe(`BIND dn="${ldap.bindDn}"`);
      }
    }
  });
});

describe('a directory that restarts or drops connections', () => {
  it('slapd restarted between sign-ins: the next sign-in succeeds on a new connection', async () => {
    const dir = directory({ poolSize: 2 });
    expect(await dir.authenticate('alice', ldap.users.alice.password)).toMatchObject({ kind: 'ok' });
    await ldap.restart();
    expect(await dir.authenticate('alice', ldap.users.alice.password)).toMatchObject({ kind: 'ok' });
    expect(await dir.authenticate('bob', ldap.users.bob.password)).toMatchObject({ kind: 'ok' });
  });

  it('with StartTLS, the connections after a restart are upgraded again (never a silent reconnection in clear)', async () => {
    const dir = directory({ startTls: true, ca });
    expect(await dir.authenticate('carol', ldap.users.carol.password)).toMatchObject({ kind: 'ok' });
    await ldap.restart();
    const log = await logOf(async () => {
      expect(await dir.authenticate('carol', ldap.users.carol.password)).toMatchObject({ kind: 'ok' });
    });
    const ours = accepted(log);
    expect(ours).toHaveLength(1);
    const lines = log.split('\n').filter((l) => l.includes(` ${ours[0]} `));
    expect(requests(log, ours[0]!)[0]).toMatch(/^EXT oid=1\.3\.6\.1\.4\.1\.1466\.20037/);
    const binds = lines.filter((l) => / mech=SIMPLE /.test(l));
    expect(binds.map((l) => /BIND dn="([^"]*)"/.exec(l)?.[1])).toEqual([ldap.bindDn, ldap.users.carol.dn].map((dn) => dn.toLowerCase()));
    for (const l of binds) expect(l).toMatch(/ ssf=(?!0\b)\d+/);
  });

  it('a pooled connection that is dead though it looks open: one more try on a new connection, and the sign-in succeeds; a new one that fails too is not tried again', async () => {
    // A proxy to slapd that, once told to, cuts each connection it already has at its next request.
    const sockets: Array<{ client: net.Socket; upstream: net.Socket; doomed: boolean }> = [];
    let cutNew = false;
    const proxy = net.createServer((client) => {
      const upstream = net.connect(ldap.port, '127.0.0.1');
      const pair = { client, upstream, doomed: cutNew };
      sockets.push(pair);
      client.on('data', (chunk) => (pair.doomed ? (client.destroy(), upstream.destroy()) : upstream.write(chunk)));
      upstream.on('data', (chunk) => client.writable && client.write(chunk));
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as net.AddressInfo;
    try {
      const dir = directory({ uri: `ldap://127.0.0.1:${port}` });
      expect(await dir.authenticate('alice', ldap.users.alice.password)).toMatchObject({ kind: 'ok' });
      expect(sockets).toHaveLength(1);
      for (const s of sockets) s.doomed = true;
      expect(await dir.authenticate('alice', ldap.users.alice.password)).toMatchObject({ kind: 'ok' });
      expect(sockets).toHaveLength(2);

      for (const s of sockets) s.doomed = true;
      cutNew = true;
      const err = await dir.find('alice').then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(DirectoryUnavailableError);
      expect((err as DirectoryUnavailableError).reason).toBe('connection-lost');
      expect(sockets).toHaveLength(3); // the pooled one and one new one, no more
    } finally {
      for (const s of sockets) s.client.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('bounds and closing', () => {
  it('a caller waiting for a busy connection is held to its own time limit', async () => {
    const dir = directory({ timeoutMs: 300 });
    expect(await dir.authenticate('bob', ldap.users.bob.password)).toMatchObject({ kind: 'ok' });
    await ldap.pause();
    try {
      const began = performance.now();
      const results = await Promise.all([dir.find('alice'), dir.find('bob')].map((p) => p.then(() => undefined, (e: unknown) => e)));
      for (const err of results) expect((err as DirectoryUnavailableError).reason).toBe('timeout');
      expect(performance.now() - began).toBeLessThan(2000);
    } finally {
      ldap.resume();
    }
    expect(await dir.authenticate('bob', ldap.users.bob.password)).toMatchObject({ kind: 'ok' });
  });

  it('close: the idle connections close at once, a busy one when its operation ends, and a sign-in under way still finishes', async () => {
    const dir = directory({ poolSize: 2 });
    await Promise.all([dir.find('alice'), dir.find('bob')]);
    expect(dir.connections).toBe(2);
    await ldap.pause();
    const inFlight = dir.find('carol');
    await dir.close();
    expect(dir.connections).toBe(1);
    ldap.resume();
    expect(await inFlight).toMatchObject({ dn: ldap.users.carol.dn });
    expect(dir.connections).toBe(0);
    await expect.poll(() => connectionsTo(ldap.port)).toBe(0);
  });

  it('a connection idle longer than the idle limit is closed', async () => {
    const pool = new DirectoryPool({ size: 2, service: ldap, open: async () => watchedClient({ url: ldap.uri, timeout: 2000 }), idleCloseMs: 100 });
    const conn = await pool.acquire('service', new AbortController().signal);
    await conn.asService();
    pool.release(conn);
    expect(pool.connections).toBe(1);
    expect(connectionsTo(ldap.port)).toBe(1);
    await expect.poll(() => pool.connections).toBe(0);
    await expect.poll(() => connectionsTo(ldap.port)).toBe(0);
  });
});
