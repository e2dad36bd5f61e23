/**
 * The LDAP row (ARCHITECTURE.md section 6, issue 11 section 5): directory sign-ins per second
 * through the service against a bare `ldapts` search-and-bind loop on the same `slapd` (the test
 * harness's), in turns in one run. Each client signs in as a staff member of its own (as a
 * bank's load is: many people, each signing in), members of the tellers group.
 */
import { Attribute, Change, Client } from 'ldapts';
import { buildUserFilter } from '../../src/ldap/filter.js';
import { ssha, startSlapd, type RunningSlapd } from '../../test/harness/slapd.js';
import { postJson } from './api.js';
import { post } from './client.js';
import { closedLoop, type Rate } from './load.js';

const USER_FILTER = '(&(objectClass=inetOrgPerson)(uid={username}))';
const ATTRIBUTES = ['mail', 'cn', 'memberOf'];
const PASSWORD = 'Bench#Directory-2026';

export interface BenchDirectory {
  slapd: RunningSlapd;
  /** uid of client i's staff member. */
  users: string[];
}

/** slapd seeded as the tests seed it, plus `count` staff members in the tellers group. */
export async function startDirectory(count: number): Promise<BenchDirectory> {
  const slapd = await startSlapd();
  const users = Array.from({ length: count }, (_, i) => `bench.teller${String(i).padStart(2, '0')}`);
  const client = new Client({ url: slapd.uri });
  try {
    await client.bind(slapd.adminDn, slapd.adminPassword);
    const dns: string[] = [];
    for (const uid of users) {
      const dn = `uid=${uid},ou=people,${slapd.baseDn}`;
      await client.add(dn, { objectClass: ['inetOrgPerson'], uid, cn: `Teller ${uid}`, sn: uid, mail: `${uid}@bank.test`, userPassword: ssha(PASSWORD) });
      dns.push(dn);
    }
    await client.modify(slapd.groups.tellers, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: dns }) }));
  } finally {
    await client.unbind();
  }
  return { slapd, users };
}

/** Points the service at the directory through `POST /api/v1/auth/ldap/config`, as an operator would, and provisions every bench user once. */
export async function configureLdap(base: string, adminToken: string, dir: BenchDirectory): Promise<void> {
  const { slapd } = dir;
  const res = await postJson(`${base}/api/v1/auth/ldap/config`, {
    uri: slapd.uri, bind_dn: slapd.bindDn, bind_password: slapd.bindPassword, base_dn: slapd.baseDn,
    user_filter: USER_FILTER, group_member_attr: 'memberOf', group_roles: { [slapd.groups.tellers]: ['staff'] },
  }, adminToken);
  if (res.status !== 200) throw new Error(`LDAP configuration: ${res.status} ${JSON.stringify(res.json)}`);
  for (const username of dir.users) {
    const first = await postJson(`${base}/api/v1/auth/ldap/login`, { username, password: PASSWORD });
    if (first.status !== 200) throw new Error(`first LDAP sign-in of ${username}: ${first.status} ${JSON.stringify(first.json)}`);
  }
}

/** One client per bench user, each signing in through `POST /api/v1/auth/ldap/login` in a loop. */
export function serviceLdapLoad(base: string, dir: BenchDirectory, seconds: number, warmupMs = 500): Promise<Rate> {
  const bodies = dir.users.map((username) => JSON.stringify({ username, password: PASSWORD }));
  return closedLoop({ workers: dir.users.length, warmupMs, seconds, makeWorker: (i) => async () => (await post(`${base}/api/v1/auth/ldap/login`, bodies[i]!)).status === 200 });
}

/**
 * The baseline: what the simplest direct client does per sign-in, with the same library, filter
 * and attributes: connect, bind as the service account, search, bind as the entry found, unbind.
 * One new connection per sign-in (the service keeps a pool of them: src/ldap/pool.ts).
 */
export function bareLdapLoad(dir: BenchDirectory, seconds: number, warmupMs = 500): Promise<Rate> {
  const { slapd } = dir;
  return closedLoop({
    workers: dir.users.length, warmupMs, seconds,
    makeWorker: (i) => async () => {
      const client = new Client({ url: slapd.uri, connectTimeout: 5000, timeout: 5000 });
      try {
        await client.bind(slapd.bindDn, slapd.bindPassword);
        const { searchEntries } = await client.search(slapd.baseDn, { scope: 'sub', filter: buildUserFilter(USER_FILTER, dir.users[i]!), attributes: ATTRIBUTES, sizeLimit: 2 });
        if (searchEntries.length !== 1) return false;
        await client.bind(searchEntries[0]!.dn, PASSWORD);
        return true;
      } finally {
        await client.unbind().catch(() => undefined);
      }
    },
  });
}
