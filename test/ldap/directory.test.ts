/**
 * LdapDirectory against a real OpenLDAP (test/harness/slapd.ts). The slapd statistics log is the
 * witness for what reached the server (binds, connections, how many entries a search matched).
 * Every directory a test makes is closed after it (its pooled connections with it).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { Client } from 'ldapts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryUnavailableError, LdapDirectory, type LdapDirectoryConfig } from '../../src/ldap/directory.js';
import { freePort } from '../harness/postgres.js';
import { type RunningSlapd, startSlapd } from '../harness/slapd.js';

let ldap: RunningSlapd;
let ca: Buffer;

beforeAll(async () => {
  ldap = await startSlapd();
  ca = readFileSync(ldap.caFile);
  console.log(`[ldap] slapd started and seeded in ${ldap.startupMs} ms`);
});

afterAll(async () => {
  await ldap?.stop();
});

/** Directories made by the current test: closed after it. */
const made: LdapDirectory[] = [];

async function closeDirectories(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => d.close()));
}

afterEach(closeDirectories);

function directory(overrides: Partial<LdapDirectoryConfig> = {}): LdapDirectory {
  const dir = new LdapDirectory({
    uri: ldap.uri,
    bindDn: ldap.bindDn,
    bindPassword: ldap.bindPassword,
    baseDn: ldap.baseDn,
    userFilter: '(&(objectClass=inetOrgPerson)(uid={username}))',
    attrMail: 'mail',
    attrName: 'displayName',
    groupMemberAttr: 'memberOf',
    timeoutMs: 5000,
    ...overrides,
  });
  made.push(dir);
  return dir;
}

/** Established TCP connections from this host to `port`, client side (from /proc, no tools needed). */
function connectionsTo(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((file) => readFileSync(file, 'utf8').split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[2]?.endsWith(`:${hexPort}`) && cols[3] === '01').length;
}

async function unavailable(work: Promise<unknown>): Promise<DirectoryUnavailableError> {
  const err = await work.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(DirectoryUnavailableError);
  expect((err as DirectoryUnavailableError).code).toBe('LDAP_UNAVAILABLE');
  return err as DirectoryUnavailableError;
}

/**
 * What slapd saw of the connections `work` opened: one string of log lines per connection, each
 * complete (up to "closed": the directories `work` made are closed after it). Lines of other
 * connections, e.g. a previous test's late "closed", are left out. A sign-in as bob afterwards
 * is the marker: once its bind is in the log, so is the ACCEPT of every connection opened before
 * it. The marker's own connections are the ones that mention bob.
 */
async function serverSide(work: () => Promise<unknown>): Promise<string[]> {
  // A fence first: slapd writes its log a little after the fact, so a previous test's last
  // connection could otherwise appear after the mark. Once the fence's bind is logged, every
  // connection opened before it has its ACCEPT logged too.
  const before = ldap.log().length;
  expect(await directory().authenticate(ldap.users.bob.uid, ldap.users.bob.password)).toMatchObject({ kind: 'ok' });
  await ldap.waitForLog(/BIND dn="uid=bob,ou=people,dc=bank,dc=test" mech=SIMPLE/, before);
  await closeDirectories();
  const mark = ldap.log().length;
  await work();
  await closeDirectories();
  expect(await directory().authenticate(ldap.users.bob.uid, ldap.users.bob.password)).toMatchObject({ kind: 'ok' });
  await ldap.waitForLog(/BIND dn="uid=bob,ou=people,dc=bank,dc=test" mech=SIMPLE/, mark);
  const accepted = [...ldap.log().slice(mark).matchAll(/ (conn=\d+) fd=\d+ ACCEPT /g)].map((m) => m[1] as string);
  const marker = new Set([...ldap.log().slice(mark).matchAll(/ (conn=\d+) op=\d+ (?:BIND dn="uid=bob,|SRCH .*\(uid=bob\))/g)].map((m) => m[1] as string));
  // slapd logs from several threads, so a previous connection's ACCEPT, RESULT or UNBIND can land
  // after the mark; a connection of ours has its first request (op=0: BIND, SRCH, EXT, or UNBIND for
  // one that did nothing else) after it.
  const after = ldap.log().slice(mark);
  const ours = accepted.filter((conn) => !marker.has(conn) && new RegExp(` ${conn} op=0 (?:BIND|SRCH|EXT|UNBIND)`).test(after));
  for (const conn of ours) await ldap.waitForLog(new RegExp(` ${conn} fd=\\d+ closed`), mark);
  const lines = ldap.log().slice(mark).split('\n');
  return ours.map((conn) => lines.filter((line) => line.includes(` ${conn} `)).join('\n'));
}

describe('sign-in against slapd', () => {
  it('returns the DN, mail, display name and both group DNs of a valid user', async () => {
    const { alice } = ldap.users;
    const result = await directory().authenticate(alice.uid, alice.password);
    expect(result).toEqual({ kind: 'ok', dn: alice.dn, mail: 'alice@bank.test', name: 'Alice Archer', groups: expect.any(Array) });
    expect(result.kind === 'ok' && [...result.groups].sort()).toEqual([ldap.groups.auditors, ldap.groups.tellers].sort());
  });

  it('returns a single group as a one-element list, and no mail when the entry has none', async () => {
    expect(await directory().authenticate('bob', ldap.users.bob.password)).toEqual({ kind: 'ok', dn: ldap.users.bob.dn, mail: 'bob@bank.test', name: 'Bob Baker', groups: [ldap.groups.tellers] });
    expect(await directory().authenticate('carol', ldap.users.carol.password)).toEqual({ kind: 'ok', dn: ldap.users.carol.dn, name: 'Carol Clerk', groups: [] });
  });

  it('reads attributes whatever the case of their configured names', async () => {
    const result = await directory({ attrMail: 'MAIL', attrName: 'cn', groupMemberAttr: 'memberof' }).authenticate('bob', ldap.users.bob.password);
    expect(result).toEqual({ kind: 'ok', dn: ldap.users.bob.dn, mail: 'bob@bank.test', name: 'Bob Baker', groups: [ldap.groups.tellers] });
  });

  it('answers a wrong password and an unknown user identically', async () => {
    const wrong = await directory().authenticate('alice', `${ldap.users.alice.password}x`);
    const unknown = await directory().authenticate('mallory', 'whatever-password');
    expect(wrong).toEqual({ kind: 'invalid' });
    expect(unknown).toEqual(wrong);
  });

  it('refuses a uid held by two entries, even with the right password', async () => {
    expect(await directory().authenticate('twin', ldap.users.twinPeople.password)).toEqual({ kind: 'invalid' });
    expect(await directory().authenticate('twin', ldap.users.twinContractors.password)).toEqual({ kind: 'invalid' });
  });

  it('signs in the user whose uid contains * ( ) and \\, with their own password only', async () => {
    const { hostile } = ldap.users;
    expect(hostile.uid).toMatch(/[*()\\]/);
    expect(await directory().authenticate(hostile.uid, hostile.password)).toEqual({ kind: 'ok', dn: hostile.dn, mail: 'eve@bank.test', name: 'Eve Hostile', groups: [] });
    expect(await directory().authenticate(hostile.uid, ldap.users.alice.password)).toEqual({ kind: 'invalid' });
    expect(await directory().authenticate('ev*', hostile.password)).toEqual({ kind: 'invalid' });
  });

  it('signs in the user whose uid contains a NUL, and not by the part before it', async () => {
    const { nul } = ldap.users;
    expect(nul.uid).toBe('nul\0user');
    expect(await directory().authenticate(nul.uid, nul.password)).toEqual({ kind: 'ok', dn: nul.dn, mail: 'nul@bank.test', name: 'Nul Byte', groups: [] });
    expect(await directory().authenticate('nul', nul.password)).toEqual({ kind: 'invalid' });
  });

  it('signs in a user with a non-ASCII uid (sent as UTF-8)', async () => {
    const { unicode } = ldap.users;
    expect(await directory().authenticate('jürgen', unicode.password)).toEqual({ kind: 'ok', dn: unicode.dn, mail: 'juergen@bank.test', name: 'Jürgen Müller', groups: [ldap.groups.auditors] });
  });
});

describe('filter injection', () => {
  // Each of these, concatenated raw into the template, matches alice alone, so her password would
  // sign in: an implementation that does not escape fails here, not just on "matches everyone".
  const payloads = ['ali*', '*lice', 'a*e', '*)(uid=alice', 'alice)(uid=*', 'alice)(|(uid=*', '*)(|(uid=alice)', 'alice))(|(uid=*', '*)(uid=*))(|(uid=alice'];

  it.each(payloads)('%j matches no entry and does not sign in', async (username) => {
    const [conn, ...more] = await serverSide(async () => {
      expect(await directory().authenticate(username, ldap.users.alice.password)).toEqual({ kind: 'invalid' });
    });
    expect(more).toEqual([]);
    expect(conn).toMatch(/SEARCH RESULT .*nentries=0 /);
    expect(conn).not.toMatch(/BIND dn="uid=alice/);
  });

  it('sends the escaped value: the server logs \\2A, not a wildcard', async () => {
    const [conn] = await serverSide(() => directory().authenticate('*', 'x'));
    expect(conn).toMatch(/filter="\(&\(objectClass=inetOrgPerson\)\(uid=\\2A\)\)"/i);
  });
});

describe('empty password', () => {
  it('is dangerous on this server: an unauthenticated bind with alice\'s DN succeeds', async () => {
    const raw = new Client({ url: ldap.uri, timeout: 2000 });
    try {
      await expect(raw.bind(ldap.users.alice.dn, '')).resolves.toBeUndefined();
    } finally {
      await raw.unbind();
    }
  });

  it('is refused without connecting, let alone binding', async () => {
    const connections = await serverSide(async () => {
      expect(await directory().authenticate('alice', '')).toEqual({ kind: 'invalid' });
    });
    expect(connections).toEqual([]);
  });

  it('threat: a future caller of verify that forgets the check: verify itself refuses an empty password for a real DN, without connecting (the unauthenticated bind above would succeed)', async () => {
    const connections = await serverSide(async () => {
      expect(await directory().verify(ldap.users.alice.dn, '')).toBe(false);
    });
    expect(connections).toEqual([]);
  });

  it('a password of spaces is a password: it goes to the directory and is rejected', async () => {
    const conn = (await serverSide(async () => {
      expect(await directory().authenticate('alice', '   ')).toEqual({ kind: 'invalid' });
    })).join('\n');
    expect(conn).toMatch(/BIND dn="uid=alice,ou=people,dc=bank,dc=test" method=128/);
    expect(conn).toMatch(/RESULT tag=97 err=49 /);
  });

  it('an empty username is refused too', async () => {
    expect(await directory().authenticate('', 'x')).toEqual({ kind: 'invalid' });
  });
});

describe('TLS', () => {
  it('ldaps:// with the CA trusted', async () => {
    const result = await directory({ uri: ldap.ldapsUri, ca }).authenticate('alice', ldap.users.alice.password);
    expect(result).toMatchObject({ kind: 'ok', dn: ldap.users.alice.dn });
  });

  it('ldaps:// by host name (certificate has DNS:localhost)', async () => {
    const result = await directory({ uri: `ldaps://localhost:${ldap.ldapsPort}`, ca }).authenticate('bob', ldap.users.bob.password);
    expect(result).toMatchObject({ kind: 'ok' });
  });

  it('ldaps:// without the CA (system trust store) is a TLS failure, not an invalid user', async () => {
    const err = await unavailable(directory({ uri: ldap.ldapsUri }).authenticate('alice', ldap.users.alice.password));
    expect(err.reason).toBe('tls');
  });

  it('ldaps:// trusting an unrelated CA is a TLS failure', async () => {
    const err = await unavailable(directory({ uri: ldap.ldapsUri, ca: readFileSync(ldap.untrustedCaFile) }).authenticate('alice', ldap.users.alice.password));
    expect(err.reason).toBe('tls');
  });

  it('ldaps:// to the plain port is a TLS failure', async () => {
    const err = await unavailable(directory({ uri: `ldaps://127.0.0.1:${ldap.port}`, ca }).authenticate('alice', ldap.users.alice.password));
    expect(err.reason).toBe('tls');
  });

  it('StartTLS with the CA trusted: the bind travels encrypted', async () => {
    const mark = ldap.log().length;
    const result = await directory({ startTls: true, ca }).authenticate('carol', ldap.users.carol.password);
    expect(result).toMatchObject({ kind: 'ok', dn: ldap.users.carol.dn });
    await ldap.waitForLog(/BIND dn="uid=carol,ou=people,dc=bank,dc=test" mech=SIMPLE/, mark);
    expect(ldap.log().slice(mark)).toMatch(/STARTTLS[\s\S]*BIND dn="uid=carol,ou=people,dc=bank,dc=test" mech=SIMPLE bind_ssf=0 ssf=(?!0\b)\d+/);
  });

  it('StartTLS without the CA is a TLS failure', async () => {
    const err = await unavailable(directory({ startTls: true }).authenticate('carol', ldap.users.carol.password));
    expect(err.reason).toBe('tls');
  });

  it('StartTLS on an ldaps:// URI is refused as configuration', () => {
    expect(() => directory({ uri: ldap.ldapsUri, startTls: true })).toThrow(/StartTLS/);
  });
});

describe('an unusable directory', () => {
  it('nothing listening: unreachable', async () => {
    const port = await freePort();
    const err = await unavailable(directory({ uri: `ldap://127.0.0.1:${port}` }).authenticate('alice', ldap.users.alice.password));
    expect(err.reason).toBe('unreachable');
  });

  it('a server that accepts TCP but never answers (SIGSTOP): timeout, and no socket left open', async () => {
    await ldap.pause();
    try {
      const plain = await unavailable(directory({ timeoutMs: 300 }).authenticate('alice', ldap.users.alice.password));
      expect(plain.reason).toBe('timeout');
      const ldaps = await unavailable(directory({ uri: ldap.ldapsUri, ca, timeoutMs: 300 }).authenticate('alice', ldap.users.alice.password));
      expect(ldaps.reason).toBe('timeout');
      const startTls = await unavailable(directory({ startTls: true, ca, timeoutMs: 300 }).authenticate('alice', ldap.users.alice.password));
      expect(startTls.reason).toBe('timeout');
      await expect.poll(() => connectionsTo(ldap.port) + connectionsTo(ldap.ldapsPort)).toBe(0);
    } finally {
      ldap.resume();
    }
    expect(await directory().authenticate('alice', ldap.users.alice.password)).toMatchObject({ kind: 'ok' });
  });

  it('a server that drops every connection: connection-lost, and no socket left open', async () => {
    const dropped: net.Socket[] = [];
    const server = net.createServer((socket) => {
      dropped.push(socket);
      socket.once('data', () => socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const err = await unavailable(directory({ uri: `ldap://127.0.0.1:${port}` }).authenticate('alice', 'pw'));
      expect(err.reason).toBe('connection-lost');
      expect(dropped).toHaveLength(1); // a new connection that fails is not tried again
      await expect.poll(() => connectionsTo(port)).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a server that accepts StartTLS and then stalls the handshake: timeout', async () => {
    // Answers the StartTLS extended request with success (BER by hand), then never speaks again.
    const server = net.createServer((socket) => {
      socket.once('data', (request) => {
        const messageId = request[4] ?? 1; // 30 LL 02 01 <id> 77 ...
        socket.write(Buffer.from([0x30, 0x0c, 0x02, 0x01, messageId, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const err = await unavailable(directory({ uri: `ldap://127.0.0.1:${port}`, startTls: true, ca, timeoutMs: 300 }).authenticate('alice', 'pw'));
      expect(err.reason).toBe('timeout');
      await expect.poll(() => connectionsTo(port)).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a directory that answers every operation just inside the limit: the sign-in\'s budget runs out (timeout), and no socket is left open', async () => {
    // A proxy to slapd that holds each answer 200 ms: every operation is inside its own 300 ms,
    // but a sign-in makes three round trips (service bind, search, user bind) after connecting.
    const held: net.Socket[] = [];
    const proxy = net.createServer((client) => {
      const upstream = net.connect(ldap.port, '127.0.0.1');
      held.push(client, upstream);
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => setTimeout(() => client.writable && client.write(chunk), 200));
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
      const slow = directory({ uri: `ldap://127.0.0.1:${port}`, timeoutMs: 300 });
      // With a generous limit the proxy works; with 300 ms the service bind and the search alone
      // take 400 ms, though neither passes 300 ms on its own.
      expect(await directory({ uri: `ldap://127.0.0.1:${port}`, timeoutMs: 5000 }).authenticate('alice', ldap.users.alice.password)).toMatchObject({ kind: 'ok' });
      const err = await unavailable(slow.authenticate('alice', ldap.users.alice.password));
      expect(err.reason).toBe('timeout');
      expect(err.message).toContain('in all');
      // find and verify called apart draw on one budget when given one.
      const budget = slow.budget();
      budget.leftMs = 150;
      expect((await unavailable(slow.verify(ldap.users.alice.dn, ldap.users.alice.password, budget))).reason).toBe('timeout');
      await closeDirectories(); // the generous one keeps its connection in its pool until then
      await expect.poll(() => connectionsTo(port)).toBe(0);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('a wrong service password is a configuration problem, not the user\'s', async () => {
    const err = await unavailable(directory({ bindPassword: 'not-the-password' }).authenticate('alice', ldap.users.alice.password));
    expect(err.reason).toBe('service-credentials');
    expect(err.message).not.toContain('not-the-password');
  });

  it('a search base that does not exist is a directory error', async () => {
    const err = await unavailable(directory({ baseDn: 'ou=nowhere,dc=bank,dc=test' }).authenticate('alice', ldap.users.alice.password));
    expect(err.reason).toBe('directory-error');
  });

  it('refuses a user filter without {username} at construction', () => {
    expect(() => directory({ userFilter: '(uid=alice)' })).toThrow(/\{username\}/);
  });
});

describe('under load', () => {
  it('the connection probe sees a connection that is left open', async () => {
    const raw = new Client({ url: ldap.uri, timeout: 2000 });
    await raw.bind(ldap.bindDn, ldap.bindPassword);
    expect(connectionsTo(ldap.port)).toBe(1);
    await raw.unbind();
    expect(connectionsTo(ldap.port)).toBe(0);
  });

  it('50 parallel sign-ins (good and bad) all answer correctly on at most the pool\'s 4 connections, and close leaves none open', async () => {
    const dir = directory({ startTls: true, ca, poolSize: 4 });
    let most = 0;
    const probe = setInterval(() => {
      most = Math.max(most, connectionsTo(ldap.port));
    }, 1);
    const keys = ['alice', 'bob', 'carol', 'hostile', 'unicode'] as const;
    const attempts = Array.from({ length: 50 }, (_, i) => {
      const user = ldap.users[keys[i % keys.length] as (typeof keys)[number]];
      const good = i % 5 !== 4;
      return { user, good, result: dir.authenticate(user.uid, good ? user.password : 'wrong-password') };
    });
    try {
      for (const { user, good, result } of attempts) {
        expect(await result).toEqual(good ? expect.objectContaining({ kind: 'ok', dn: user.dn }) : { kind: 'invalid' });
      }
    } finally {
      clearInterval(probe);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4);
    expect(dir.connections).toBe(4);
    await dir.close();
    await expect.poll(() => connectionsTo(ldap.port)).toBe(0);
  });
});
