/**
 * Starts a real OpenLDAP (Debian `slapd`) for the suites: its own slapd.conf (mdb, schemas core,
 * cosine, inetorgperson, nis, the memberof overlay) in a temporary directory, on two free loopback
 * ports: ldap:// (StartTLS offered) and ldaps://, with a throwaway CA and a server certificate for
 * 127.0.0.1 and localhost made with `openssl`. Seeds dc=bank,dc=test through the protocol (so the
 * memberof overlay fills in `memberOf`, which it does not do for slapadd).
 *
 * Installs Debian's `slapd` and `ldap-utils` when /usr/sbin/slapd is missing and we are root;
 * otherwise fails saying what to install. Runs as the current user (root or not; ports are above
 * 1024 and every file lives in the temporary directory).
 *
 * Caveats: installing the package on a host with a working init system also starts the distro's
 * own slapd on port 389 (harmless, we never use it; containers usually deny it via policy-rc.d).
 * Ubuntu ships an AppArmor profile for /usr/sbin/slapd that may deny reading a config under /tmp;
 * Debian does not. slapd runs in the foreground (`-d stats`) so we own its pid and can read its
 * statistics log (ACCEPT, BIND, SRCH, closed lines) through `log()` and `waitForLog()`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'ldapts';
import { freePort } from './postgres.js';
import { aptInstall } from './apt.js';

const SLAPD = '/usr/sbin/slapd';
const BASE_DN = 'dc=bank,dc=test';

export interface SlapdUser {
  uid: string;
  password: string;
  dn: string;
  name: string;
  mail?: string;
  /** Group DNs the user is a `member` of (and that the overlay reports as `memberOf`). */
  groups: string[];
}

type UserKey = 'alice' | 'bob' | 'carol' | 'hostile' | 'nul' | 'unicode' | 'twinPeople' | 'twinContractors';

export interface RunningSlapd {
  /** ldap://127.0.0.1:<port>; StartTLS is offered on it. */
  uri: string;
  /** ldaps://127.0.0.1:<port>. */
  ldapsUri: string;
  port: number;
  ldapsPort: number;
  /** PEM file of the CA that signed the server certificate (SAN IP:127.0.0.1, DNS:localhost). */
  caFile: string;
  /** PEM file of an unrelated CA, for a client that trusts a CA, just not this server's. */
  untrustedCaFile: string;
  baseDn: string;
  /** Service account: may read the tree; may not read passwords. */
  bindDn: string;
  bindPassword: string;
  /** rootdn, bypasses access control; for tests that change the directory. */
  adminDn: string;
  adminPassword: string;
  users: Record<UserKey, SlapdUser>;
  groups: { tellers: string; auditors: string };
  /** Milliseconds from the call to a seeded, answering server (packages already installed). */
  startupMs: number;
  /** The statistics log so far (slapd -d stats). */
  log: () => string;
  /** Resolves once the log, from character `from` on, matches; rejects after timeoutMs. */
  waitForLog: (pattern: RegExp, from?: number, timeoutMs?: number) => Promise<void>;
  /**
   * SIGSTOP: the kernel still completes TCP handshakes, but nothing ever answers. Resolves once
   * every slapd thread is stopped (signal delivery is asynchronous; a thread already running
   * could otherwise still answer the next request).
   */
  pause: () => Promise<void>;
  resume: () => void;
  /**
   * Stops slapd (SIGTERM: it closes every connection, as a directory being restarted does) and
   * starts it again on the same ports and data, resolving once it answers. The log goes on.
   */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
  /** The slapd process (the bench counts its CPU as its own); a new one after `restart`. */
  readonly pid: number;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

export function ensureSlapdInstalled(): void {
  if (existsSync(SLAPD)) return;
  if (isRoot() && existsSync('/usr/bin/apt-get')) {
    console.log('[harness] slapd not found: installing Debian packages slapd and ldap-utils');
    // The package's default database is created but never used: we run our own configuration.
    aptInstall(['slapd', 'ldap-utils'], `[ -x ${SLAPD} ]`);
    if (existsSync(SLAPD)) return;
  }
  throw new Error(`OpenLDAP server ${SLAPD} is missing: install the Debian packages "slapd" and "ldap-utils" (apt-get install slapd ldap-utils), or run the tests as root so the harness installs them.`);
}

/** {SSHA} as slappasswd makes it, so the directory stores no clear-text password. */
export function ssha(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash('sha1').update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
}

/**
 * RFC 4514 escaping of one RDN value (the hostile uid contains a backslash), in the hex form slapd
 * itself returns (`\5C`), so `users.*.dn` equals the DN a search answers.
 */
function rdnValue(value: string): string {
  const hex = (c: string): string => `\\${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
  return value.replace(/[,+"\\<>;=\0]/g, hex).replace(/^[ #]/, hex).replace(/ $/, hex);
}

function makeCertificates(dir: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  const openssl = (args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ca = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
  openssl(['req', '-x509', ...ec, '-keyout', path.join(dir, 'ca.key'), '-out', path.join(dir, 'ca.pem'), '-subj', '/CN=Strongroom test CA', ...ca]);
  openssl(['req', '-x509', ...ec, '-keyout', path.join(dir, 'other-ca.key'), '-out', path.join(dir, 'other-ca.pem'), '-subj', '/CN=Unrelated test CA', ...ca]);
  // OpenSSL 3 signs with another CA straight from `req -x509 -CA`.
  openssl([
    'req', '-x509', ...ec, '-keyout', path.join(dir, 'server.key'), '-out', path.join(dir, 'server.pem'), '-subj', '/CN=localhost',
    '-CA', path.join(dir, 'ca.pem'), '-CAkey', path.join(dir, 'ca.key'),
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'extendedKeyUsage=serverAuth',
  ]);
}

function slapdConf(dir: string, adminDn: string, adminPassword: string, serviceDn: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
pidfile ${dir}/slapd.pid
argsfile ${dir}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
TLSCACertificateFile ${dir}/ca.pem
TLSCertificateFile ${dir}/server.pem
TLSCertificateKeyFile ${dir}/server.key
# Accept a simple bind with a DN and an empty password as anonymous (RFC 4513 5.1.2), as Active
# Directory does: so a client that forgets to refuse empty passwords would visibly "succeed".
allow bind_anon_dn

database mdb
suffix "${BASE_DN}"
rootdn "${adminDn}"
rootpw ${adminPassword}
directory ${dir}/db
maxsize 16777216
dbnosync
index objectClass,uid,mail eq
overlay memberof
# Anonymous may only authenticate; reading needs the service account (or oneself), as in a bank.
access to attrs=userPassword
  by anonymous auth
  by * none
access to *
  by dn.exact="${serviceDn}" read
  by self read
  by * none
`;
}

interface Seed {
  people: Record<UserKey, { ou: string; uid: string; name: string; mail?: string; groups: Array<'tellers' | 'auditors'> }>;
}

const SEED: Seed = {
  people: {
    alice: { ou: 'people', uid: 'alice', name: 'Alice Archer', mail: 'alice@bank.test', groups: ['tellers', 'auditors'] },
    bob: { ou: 'people', uid: 'bob', name: 'Bob Baker', mail: 'bob@bank.test', groups: ['tellers'] },
    carol: { ou: 'people', uid: 'carol', name: 'Carol Clerk', groups: [] },
    hostile: { ou: 'people', uid: 'ev*l(us)er\\x', name: 'Eve Hostile', mail: 'eve@bank.test', groups: [] },
    // slapd accepts a NUL inside a value; a C-string bug would truncate it to "nul".
    nul: { ou: 'people', uid: 'nul\0user', name: 'Nul Byte', mail: 'nul@bank.test', groups: [] },
    unicode: { ou: 'people', uid: 'jürgen', name: 'Jürgen Müller', mail: 'juergen@bank.test', groups: ['auditors'] },
    // Two entries with one uid: a sign-in must refuse to pick one.
    twinPeople: { ou: 'people', uid: 'twin', name: 'Twin One', mail: 'twin1@bank.test', groups: [] },
    twinContractors: { ou: 'contractors', uid: 'twin', name: 'Twin Two', mail: 'twin2@bank.test', groups: [] },
  },
};

async function seed(uri: string, adminDn: string, adminPassword: string, serviceDn: string, servicePassword: string): Promise<{ users: Record<UserKey, SlapdUser>; groups: RunningSlapd['groups'] }> {
  const client = new Client({ url: uri, timeout: 5000, connectTimeout: 5000 });
  try {
    await client.bind(adminDn, adminPassword);
    await client.add(BASE_DN, { objectClass: ['dcObject', 'organization'], dc: 'bank', o: 'Bank' });
    for (const ou of ['people', 'contractors', 'groups', 'services']) {
      await client.add(`ou=${ou},${BASE_DN}`, { objectClass: 'organizationalUnit', ou });
    }
    await client.add(serviceDn, { objectClass: ['organizationalRole', 'simpleSecurityObject'], cn: 'strongroom', userPassword: ssha(servicePassword) });
    const users = {} as Record<UserKey, SlapdUser>;
    for (const [key, p] of Object.entries(SEED.people) as Array<[UserKey, Seed['people'][UserKey]]>) {
      const dn = `uid=${rdnValue(p.uid)},ou=${p.ou},${BASE_DN}`;
      const password = `pw-${key}-${randomBytes(6).toString('hex')}`;
      const [given = p.name, sn = p.name] = p.name.split(' ');
      await client.add(dn, {
        objectClass: ['inetOrgPerson'], uid: p.uid, cn: p.name, sn, givenName: given, displayName: p.name,
        userPassword: ssha(password), ...(p.mail ? { mail: p.mail } : {}),
      });
      users[key] = { uid: p.uid, password, dn, name: p.name, ...(p.mail ? { mail: p.mail } : {}), groups: [] };
    }
    const groups = { tellers: `cn=tellers,ou=groups,${BASE_DN}`, auditors: `cn=auditors,ou=groups,${BASE_DN}` };
    for (const [name, dn] of Object.entries(groups) as Array<[keyof typeof groups, string]>) {
      const members = (Object.keys(users) as UserKey[]).filter((k) => SEED.people[k].groups.includes(name));
      await client.add(dn, { objectClass: 'groupOfNames', cn: name, member: members.map((k) => users[k].dn) });
      for (const k of members) users[k].groups.push(dn);
    }
    return { users, groups };
  } finally {
    await client.unbind();
  }
}

/** Linux: every task of the process in state T (stopped), read from /proc/<pid>/task/<tid>/stat. */
function allThreadsStopped(pid: number | undefined): boolean {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.every((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may itself contain them.
    return /^\)\s+[Tt]/.test(stat.slice(stat.lastIndexOf(')')));
  });
}

async function waitUntilReady(child: ChildProcess, uri: string, adminDn: string, adminPassword: string, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`slapd exited during start-up:\n${stderr()}`);
    const client = new Client({ url: uri, connectTimeout: 500, timeout: 1000 });
    try {
      await client.bind(adminDn, adminPassword);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`slapd did not answer within 15 s (${(err as Error).message}):\n${stderr()}`);
    } finally {
      await client.unbind().catch(() => undefined);
    }
    await sleep(delay);
  }
}

export async function startSlapd(): Promise<RunningSlapd> {
  ensureSlapdInstalled();
  const began = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-ldap-'));
  let child: ChildProcess | undefined;
  // A test process that dies without stop() must not leave slapd running or its files behind.
  const killOnExit = (): void => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mkdirSync(path.join(dir, 'db'));
    makeCertificates(dir);
    const port = await freePort();
    let ldapsPort = await freePort();
    while (ldapsPort === port) ldapsPort = await freePort();
    const adminDn = `cn=admin,${BASE_DN}`;
    const adminPassword = randomBytes(12).toString('hex');
    const bindDn = `cn=strongroom,ou=services,${BASE_DN}`;
    const bindPassword = randomBytes(12).toString('hex');
    writeFileSync(path.join(dir, 'slapd.conf'), slapdConf(dir, adminDn, adminPassword, bindDn));
    const uri = `ldap://127.0.0.1:${port}`;
    const ldapsUri = `ldaps://127.0.0.1:${ldapsPort}`;

    // -d keeps slapd in the foreground (our child, our pid) and writes the stats log to stderr,
    // which we must keep draining or slapd blocks on a full pipe.
    let log = '';
    const launch = (): ChildProcess => {
      const started = spawn(SLAPD, ['-f', path.join(dir, 'slapd.conf'), '-h', `${uri}/ ${ldapsUri}/`, '-d', 'stats'], { stdio: ['ignore', 'ignore', 'pipe'] });
      started.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        log += chunk;
      });
      return started;
    };
    const exitOf = (p: ChildProcess): Promise<void> => new Promise<void>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) resolve();
      else p.once('exit', () => resolve());
    });
    child = launch();
    process.once('exit', killOnExit);
    let proc = child;
    await waitUntilReady(proc, uri, adminDn, adminPassword, () => log);
    const { users, groups } = await seed(uri, adminDn, adminPassword, bindDn, bindPassword);
    const startupMs = Math.round(performance.now() - began);

    let exited = exitOf(proc);
    return {
      uri, ldapsUri, port, ldapsPort,
      caFile: path.join(dir, 'ca.pem'),
      untrustedCaFile: path.join(dir, 'other-ca.pem'),
      baseDn: BASE_DN, bindDn, bindPassword, adminDn, adminPassword,
      users, groups, startupMs,
      get pid() {
        return proc.pid!;
      },
      log: () => log,
      waitForLog: async (pattern, from = 0, timeoutMs = 5000) => {
        const deadline = Date.now() + timeoutMs;
        const once = new RegExp(pattern.source, pattern.flags.replace('g', '')); // no lastIndex state
        while (!once.test(log.slice(from))) {
          if (Date.now() > deadline) throw new Error(`slapd log did not show ${pattern} within ${timeoutMs} ms`);
          await sleep(10);
        }
      },
      pause: async () => {
        proc.kill('SIGSTOP');
        const deadline = Date.now() + 5000;
        while (!allThreadsStopped(proc.pid)) {
          if (Date.now() > deadline) throw new Error('slapd did not stop within 5 s of SIGSTOP');
          await sleep(1);
        }
      },
      resume: () => {
        proc.kill('SIGCONT');
      },
      restart: async () => {
        proc.kill('SIGTERM');
        await exited;
        child = proc = launch();
        exited = exitOf(proc);
        await waitUntilReady(proc, uri, adminDn, adminPassword, () => log);
      },
      stop: async () => {
        process.removeListener('exit', killOnExit);
        // SIGKILL also ends a stopped process; the data is thrown away anyway.
        proc.kill('SIGKILL');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    process.removeListener('exit', killOnExit);
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

