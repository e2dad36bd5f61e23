/**
 * Who may use each channel: the roles whose holders may sign in and hold sessions on it. A
 * channel some sign-in routes let the client name (`POST /auth/login/mobile` and SAML take
 * `mobile` or `agent`) must not be a way around the policy of the channel the person belongs
 * to: a customer who names `agent` would otherwise escape the mobile channel's bound-device and
 * IP rules, since the agent policies narrowed to the `agent` role do not cover them. So the
 * agent channel is open only to agents, whatever the route, and the check runs before any
 * session is opened and again on every request of a session (rule `channel`).
 *
 * Defaults live here, not in a row, so that they hold on a fresh database and cannot be deleted
 * by mistake; an administrator's setting (table `channel_access`, audited) replaces a channel's
 * default until set back.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';
import { CHANNELS, type Channel } from './policy.js';

/** null: anyone may use the channel. */
export type AllowedRoles = readonly string[] | null;

/**
 * Web, mobile and USSD serve every customer and member of staff; USSD is reached only through
 * the bank's gateway. The agent channel is the agents' own.
 */
export const DEFAULT_CHANNEL_ROLES: Readonly<Record<Channel, AllowedRoles>> = { web: null, mobile: null, ussd: null, agent: ['agent'] };

export interface ChannelAccess {
  channel: Channel;
  allowedRoles: AllowedRoles;
  /** false: the built-in default is in force. */
  configured: boolean;
  updatedAt: Date | null;
  /** The administrator's user id (uuid). */
  updatedBy: string | null;
}

/** Whether a holder of `roles` may use a channel that allows `allowed`. */
export function mayUse(allowed: AllowedRoles, roles: readonly string[]): boolean {
  return allowed === null || roles.some((r) => allowed.includes(r));
}

type Row = { allowed_roles: unknown; updated_at: Date | string; updated_by: string | null };

function toAccess(channel: Channel, row: Row | undefined): ChannelAccess {
  if (!row) return { channel, allowedRoles: DEFAULT_CHANNEL_ROLES[channel], configured: false, updatedAt: null, updatedBy: null };
  const allowedRoles = (typeof row.allowed_roles === 'string' ? JSON.parse(row.allowed_roles) : row.allowed_roles) as AllowedRoles;
  return { channel, allowedRoles, configured: true, updatedAt: new Date(row.updated_at), updatedBy: row.updated_by };
}

export class ChannelAccessStore {
  constructor(private readonly db: Db) {}

  /** Every channel, in order, with its setting or its default. */
  async list(db: Db = this.db): Promise<ChannelAccess[]> {
    const rows = new Map((await db.selectFrom('channel_access').selectAll().execute()).map((r) => [r.channel, r]));
    return CHANNELS.map((channel) => toAccess(channel, rows.get(channel)));
  }

  /**
   * One channel's setting, held until `trx` ends: two changes at once go one after the other,
   * each seeing what the other left. An advisory lock, since the first change has no row to lock.
   */
  async lock(trx: Db, channel: Channel): Promise<ChannelAccess> {
    await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.channelAccess}::int, hashtext(${channel}))`.execute(trx);
    return toAccess(channel, await trx.selectFrom('channel_access').selectAll().where('channel', '=', channel).executeTakeFirst());
  }

  async set(trx: Db, channel: Channel, allowedRoles: AllowedRoles, actor: string | null, now: Date): Promise<ChannelAccess> {
    const values = { allowed_roles: JSON.stringify(allowedRoles), updated_at: now, updated_by: actor };
    await trx.insertInto('channel_access').values({ channel, ...values }).onConflict((oc) => oc.column('channel').doUpdateSet(values)).execute();
    return { channel, allowedRoles, configured: true, updatedAt: now, updatedBy: actor };
  }
}
