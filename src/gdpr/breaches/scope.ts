/**
 * How a breach's affected accounts are found in the audit trail: every account with at least one
 * audit entry in the breach's window (`[occurred_from, occurred_to)`), optionally narrowed by a
 * small filter language that is data, never text to parse or SQL to splice:
 *
 * - `channels`: the entry's channel is one of these (`web`, `mobile`, `ussd`, `agent`);
 * - `event_types`: the entry's event type is one of these (the audit trail's names);
 * - `client_networks`: the entry's client address lies in one of these addresses or CIDR
 *   blocks (IPv4 or IPv6, at most 20).
 *
 * Filters of different kinds all apply (AND); the values within one kind are alternatives (OR).
 * Every value is checked here or by the route's schema, and reaches SQL only as a parameter.
 * The search reads the window's range of the time-partitioned log (the partitions outside it are
 * pruned; `audit_log_time`, or `audit_log_event_time` when event types are given) plus the
 * entries a legal hold keeps, groups by account once, finds each account by its uuid's index,
 * and stops after `cap + 1` accounts.
 */
import { isIP } from 'node:net';
import { sql, type RawBuilder } from 'kysely';
import type { Channel } from '../../access/policy.js';
import type { AuditEvent } from '../../audit/service.js';

export interface BreachScope {
  channels?: Channel[];
  event_types?: AuditEvent[];
  client_networks?: string[];
}

export interface FieldProblem {
  location: 'body';
  field: string;
  message: string;
}

export const MAX_NETWORKS = 20;

/**
 * An address or CIDR block in its canonical form (`10.1.0.0/16`, `2001:db8::/32`; a bare address
 * gets the full prefix), or null when it is neither. Host bits below the prefix are refused: a
 * block written `10.1.2.3/16` is most likely a typing error that would widen the search.
 */
export function canonicalNetwork(text: string): string | null {
  const m = /^([0-9A-Fa-f:.]{2,45})(?:\/(\d{1,3}))?$/.exec(text.trim());
  if (!m) return null;
  const family = isIP(m[1]!);
  if (family !== 4 && family !== 6) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = m[2] === undefined ? max : Number(m[2]);
  if (prefix > max || (m[2] !== undefined && m[2].length > 1 && m[2].startsWith('0'))) return null;
  const bits = addressBits(m[1]!, family);
  if (bits === null) return null;
  const hostBits = bits.slice(prefix);
  if (hostBits.includes('1')) return null;
  return `${m[1]!.toLowerCase()}/${prefix}`;
}

/** The address as a string of bits, or null. */
function addressBits(address: string, family: 4 | 6): string | null {
  if (family === 4) return address.split('.').map((o) => Number(o).toString(2).padStart(8, '0')).join('');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let text = address;
  let tail = '';
  if (v4) {
    tail = addressBits(v4[1]!, 4)!;
    const head = address.slice(0, -v4[1]!.length);
    text = head.endsWith('::') ? head : head.slice(0, -1);
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split(':'));
  const h = groups(head);
  const r = groups(rest);
  const total = 8 - tail.length / 16;
  const missing = rest === undefined ? 0 : total - h.length - r.length;
  if (missing < 0) return null;
  const all = [...h, ...Array<string>(missing).fill('0'), ...r];
  if (all.length !== total) return null;
  return all.map((g) => parseInt(g, 16).toString(2).padStart(16, '0')).join('') + tail;
}

/** The scope's problems, each naming its field (`scope.client_networks.2`); empty when it is sound. */
export function scopeProblems(scope: BreachScope): FieldProblem[] {
  const problems: FieldProblem[] = [];
  (scope.client_networks ?? []).forEach((n, i) => {
    if (canonicalNetwork(n) === null) {
      problems.push({ location: 'body', field: `scope.client_networks.${i}`, message: 'must be an IPv4 or IPv6 address or CIDR block with no host bits set, such as 198.51.100.0/24 or 2001:db8::/32' });
    }
  });
  return problems;
}

/** The scope as stored: canonical networks, sorted and without repeats, empty filters left out. */
export function normalisedScope(scope: BreachScope): BreachScope {
  const out: BreachScope = {};
  if (scope.channels?.length) out.channels = [...new Set(scope.channels)].sort();
  if (scope.event_types?.length) out.event_types = [...new Set(scope.event_types)].sort();
  if (scope.client_networks?.length) out.client_networks = [...new Set(scope.client_networks.map((n) => canonicalNetwork(n)!))].sort();
  return out;
}

/** An account's uuid as the audit trail writes it (anything else in `user_id` names no account). */
const UUID_TEXT = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** The WHERE clause of one audit table for the window and the scope (values as parameters). */
function matches(from: Date, to: Date, scope: BreachScope): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`timestamp >= ${from}`, sql`timestamp < ${to}`, sql`user_id IS NOT NULL`];
  if (scope.channels?.length) parts.push(sql`channel IN (${sql.join(scope.channels)})`);
  if (scope.event_types?.length) parts.push(sql`event_type IN (${sql.join(scope.event_types)})`);
  if (scope.client_networks?.length) {
    parts.push(sql`(${sql.join(scope.client_networks.map((n) => sql`breach_try_inet(ip_address) <<= ${n}::inet`), sql` OR `)})`);
  }
  return sql.join(parts, sql` AND `);
}

/**
 * The statement that stores a breach's affected accounts: one row per account (not a service
 * account) with an entry in the window matching the scope, and how many entries matched; at most
 * `cap + 1` rows, so a caller that gets more than `cap` back knows the scope is too broad.
 */
export function insertAffected(breachId: string, from: Date, to: Date, scope: BreachScope, cap: number): RawBuilder<{ events: number }> {
  const where = matches(from, to, scope);
  return sql<{ events: number }>`
    INSERT INTO breach_affected (breach_id, user_id, events)
    SELECT ${breachId}::uuid, u.id, m.n FROM (
      SELECT CASE WHEN a.user_id ~ ${UUID_TEXT} THEN a.user_id::uuid END AS uuid, count(*)::int AS n FROM (
        SELECT user_id FROM audit_log WHERE ${where}
        UNION ALL
        SELECT user_id FROM audit_log_held WHERE ${where}
      ) a GROUP BY a.user_id
    ) m
    JOIN users u ON u.uuid = m.uuid
    WHERE NOT u.is_service_account
    ORDER BY u.id
    LIMIT ${cap + 1}
    RETURNING events`;
}
