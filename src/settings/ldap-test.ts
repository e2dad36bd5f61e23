/**
 * The directory connection test (POST /api/v1/admin/ldap/test): the settings in force, tried step
 * by step on a connection of its own (never the sign-in pool's), so an operator sees which part
 * works and which does not: the server reachable (TCP), TLS (ldaps:// or StartTLS, the
 * certificate verified as sign-in does), the service account's bind, and, for a username given,
 * the search with `user_filter` and the groups read from the entry (with the roles they map to).
 * Nothing is changed; the user's password is never asked for (no bind as the user). The bind
 * password is never part of the answer: any detail that would hold it is cut out. The whole test
 * has one time budget, `timeoutMs` (as a sign-in has for all its directory work): each step gets
 * what is left of it, so a directory that stalls anywhere (the StartTLS handshake included, which
 * ldapts does not limit) fails that step as `timeout` instead of holding the request.
 */
import net from 'node:net';
import tls, { type ConnectionOptions } from 'node:tls';
import { Client, InvalidCredentialsError, SizeLimitExceededError } from 'ldapts';
import { withTimeout } from '../ldap/directory.js';
import { userFilter } from '../ldap/filter.js';
import { ldapGroupKeys } from '../ldap/groups.js';
import type { LdapSettings } from '../ldap/settings.js';
import { mapRoles } from '../users/provisioned.js';

export type LdapTestStep = 'connect' | 'tls' | 'bind' | 'search' | 'groups';
export type LdapTestOutcome = 'passed' | 'failed' | 'skipped';

/** Why a step failed or was skipped, in stable words the console translates. */
export type LdapTestReason =
  | 'unreachable' | 'timeout' | 'tls_failed' | 'no_tls' | 'credentials_refused' | 'directory_error'
  | 'user_not_found' | 'user_ambiguous' | 'no_username' | 'not_read' | 'earlier_step_failed';

export interface LdapTestStepResult {
  step: LdapTestStep;
  outcome: LdapTestOutcome;
  reason: LdapTestReason | null;
  /** What the directory or the network said (English), or what was found; never a secret. */
  detail: string;
}

export interface LdapTestUser {
  dn: string;
  mail: string | null;
  name: string | null;
  groups: string[];
  /** The roles the group-role map gives these groups (what a sign-in would set). */
  roles: string[];
}

export interface LdapTestResult {
  ok: boolean;
  steps: LdapTestStepResult[];
  user: LdapTestUser | null;
}

class StepFailed extends Error {
  constructor(readonly reason: LdapTestReason, message: string) {
    super(message);
  }
}

function endpoint(uri: string): { host: string; port: number; secure: boolean } {
  const url = new URL(uri);
  const secure = url.protocol === 'ldaps:';
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || (secure ? 636 : 389)), secure };
}

function tlsOptions(host: string, caCert: string | undefined): ConnectionOptions {
  return { rejectUnauthorized: true, ...(caCert === undefined ? {} : { ca: caCert }), ...(net.isIP(host) ? {} : { servername: host }) };
}

/** A socket that connects (TCP, or TLS from the start), then is closed: whether the server is there. */
function probe(open: () => net.Socket, event: 'connect' | 'secureConnect', timeoutMs: number, failure: LdapTestReason): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = open();
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new StepFailed('timeout', `no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once(event, () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new StepFailed(failure, err.code ? `${err.code}: ${err.message}` : err.message));
    });
  });
}

/** An ldapts failure as a step's reason. */
function classify(err: unknown, fallback: LdapTestReason): StepFailed {
  if (err instanceof StepFailed) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  if (err instanceof InvalidCredentialsError) return new StepFailed('credentials_refused', e.message || 'invalid credentials');
  if (/timed? ?out/i.test(e.message)) return new StepFailed('timeout', e.message);
  return new StepFailed(fallback, e.message || e.name);
}

/** Values of one attribute of an entry, names compared as LDAP does (any case). */
function values(entry: Record<string, unknown>, attribute: string): string[] {
  const key = Object.keys(entry).find((k) => k !== 'dn' && k.toLowerCase() === attribute.toLowerCase());
  const raw = key === undefined ? [] : entry[key];
  return (Array.isArray(raw) ? raw : [raw]).map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v))).filter((v) => v !== '');
}

/** Runs the steps in order; a failed step skips the ones that need it. */
export async function testDirectory(settings: LdapSettings, username: string | undefined, timeoutMs: number): Promise<LdapTestResult> {
  const steps: LdapTestStepResult[] = [];
  const scrub = (text: string): string => (settings.bindPassword === '' ? text : text.split(settings.bindPassword).join('[bind password]'));
  const record = (step: LdapTestStep, outcome: LdapTestOutcome, reason: LdapTestReason | null, detail: string): void => {
    steps.push({ step, outcome, reason, detail: scrub(detail) });
  };
  const deadline = performance.now() + timeoutMs;
  /** What is left of the test's budget, ms. */
  const left = (): number => Math.max(0, Math.floor(deadline - performance.now()));
  const run = async (step: LdapTestStep, work: () => Promise<string>, fallback: LdapTestReason): Promise<boolean> => {
    try {
      const ms = left();
      if (ms === 0) throw new StepFailed('timeout', `the test's ${timeoutMs} ms ran out before this step`);
      record(step, 'passed', null, await withTimeout(work(), ms, () => new StepFailed('timeout', `no answer within the test's ${timeoutMs} ms`)));
      return true;
    } catch (err) {
      const failed = classify(err, fallback);
      record(step, 'failed', failed.reason, failed.message);
      return false;
    }
  };
  const skipRest = (from: LdapTestStep[]): void => {
    for (const step of from) record(step, 'skipped', 'earlier_step_failed', '');
  };

  const { host, port, secure } = endpoint(settings.uri);
  const reachable = await run('connect', async () => {
    (await probe(() => net.connect({ host, port }), 'connect', left(), 'unreachable')).destroy();
    return `${host}:${port} accepts connections`;
  }, 'unreachable');
  if (!reachable) {
    skipRest(['tls', 'bind', 'search', 'groups']);
    return { ok: false, steps, user: null };
  }

  const client = new Client({ url: settings.uri, connectTimeout: timeoutMs, timeout: timeoutMs, ...(secure ? { tlsOptions: tlsOptions(host, settings.caCert) } : {}) });
  try {
    let tlsOk = true;
    if (secure) {
      tlsOk = await run('tls', async () => {
        const socket = await probe(() => tls.connect({ host, port, ...tlsOptions(host, settings.caCert) }), 'secureConnect', left(), 'tls_failed') as tls.TLSSocket;
        const detail = `${socket.getProtocol() ?? 'TLS'}, certificate of ${socket.getPeerCertificate().subject?.CN ?? host} verified`;
        socket.destroy();
        return detail;
      }, 'tls_failed');
    } else if (settings.startTls) {
      tlsOk = await run('tls', async () => {
        // ldapts limits the extended request but not the handshake after it: a server that accepts
        // StartTLS and then stalls is cut off here (the socket is closed by unbind, below).
        await withTimeout(client.startTLS({ ...tlsOptions(host, settings.caCert), host }), left(), () => new StepFailed('timeout', `StartTLS handshake timed out (the test's ${timeoutMs} ms ran out)`));
        return 'StartTLS, certificate verified';
      }, 'tls_failed');
    } else {
      record('tls', 'skipped', 'no_tls', 'plain ldap:// without StartTLS: the bind password travels in clear');
    }
    if (!tlsOk) {
      skipRest(['bind', 'search', 'groups']);
      return { ok: false, steps, user: null };
    }

    const bound = await run('bind', async () => {
      await client.bind(settings.bindDn, settings.bindPassword);
      return `bound as ${settings.bindDn}`;
    }, 'directory_error');
    if (!bound) {
      skipRest(['search', 'groups']);
      return { ok: false, steps, user: null };
    }

    if (username === undefined || username.trim() === '') {
      record('search', 'skipped', 'no_username', '');
      record('groups', 'skipped', 'no_username', '');
      return { ok: true, steps, user: null };
    }
    return await searchFor(client, settings, username, left(), run, record, steps);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

type Run = (step: LdapTestStep, work: () => Promise<string>, fallback: LdapTestReason) => Promise<boolean>;
type Record_ = (step: LdapTestStep, outcome: LdapTestOutcome, reason: LdapTestReason | null, detail: string) => void;

async function searchFor(client: Client, settings: LdapSettings, username: string, leftMs: number, run: Run, record: Record_, steps: LdapTestStepResult[]): Promise<LdapTestResult> {
  let entry: Record<string, unknown> | undefined;
  const attributes = [...new Set([settings.attrMail, settings.attrName, settings.groupMemberAttr].filter((a) => a !== ''))];
  const found = await run('search', async () => {
    let entries: Array<Record<string, unknown>>;
    try {
      ({ searchEntries: entries } = await client.search(settings.baseDn, { scope: 'sub', filter: userFilter(settings.userFilter)(username), attributes, sizeLimit: 2, timeLimit: Math.max(1, Math.ceil(leftMs / 1000)) }));
    } catch (err) {
      if (err instanceof SizeLimitExceededError) throw new StepFailed('user_ambiguous', `more than one entry under ${settings.baseDn} matches`);
      throw err;
    }
    if (entries.length === 0) throw new StepFailed('user_not_found', `no entry under ${settings.baseDn} matches`);
    if (entries.length > 1) throw new StepFailed('user_ambiguous', `more than one entry under ${settings.baseDn} matches`);
    entry = entries[0]!;
    return String(entry.dn);
  }, 'directory_error');
  if (!found || !entry) {
    record('groups', 'skipped', 'earlier_step_failed', '');
    return { ok: false, steps, user: null };
  }
  const groups = settings.groupMemberAttr === '' ? [] : values(entry, settings.groupMemberAttr);
  const roles = mapRoles(groups, settings.groupRoles, ldapGroupKeys(settings.groupsBaseDn)).mapped;
  if (settings.groupMemberAttr === '') record('groups', 'skipped', 'not_read', 'group_member_attr is empty: groups are not read');
  else record('groups', 'passed', null, `${groups.length} in ${settings.groupMemberAttr}; roles: ${roles.length === 0 ? 'none' : roles.join(', ')}`);
  const [mail] = values(entry, settings.attrMail);
  const [name] = values(entry, settings.attrName);
  return { ok: true, steps, user: { dn: String(entry.dn), mail: mail ?? null, name: name ?? null, groups, roles } };
}
