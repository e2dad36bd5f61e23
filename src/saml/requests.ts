/**
 * The AuthnRequests this service sent (migration 016), in PostgreSQL so that the node that
 * receives the response need not be the one that sent the request. A request is spent once:
 * `consume` deletes it and returns what it held, so of two parallel posts of one response only
 * one finds it.
 */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';

/** How long a browser has at the IdP between the request and the response. */
export const REQUEST_TTL_MS = 10 * 60_000;

export interface SentRequest {
  id: string;
  relayUrl: string | null;
  channel: string;
  createdAt: number;
}

export class SamlRequests {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  async save(id: string, request: { relayUrl: string | null; channel: string }): Promise<SentRequest> {
    const now = this.deps.clock.now();
    await this.deps.db.insertInto('saml_requests')
      .values({ id, relay_url: request.relayUrl, channel: request.channel, created_at: new Date(now), expires_at: new Date(now + REQUEST_TTL_MS) }).execute();
    return { id, ...request, createdAt: now };
  }

  /** The request with `id`, unless answered or expired. */
  async find(id: string): Promise<SentRequest | undefined> {
    const row = await this.deps.db.selectFrom('saml_requests').selectAll().where('id', '=', id).where('expires_at', '>', new Date(this.deps.clock.now())).executeTakeFirst();
    return row && { id: row.id, relayUrl: row.relay_url, channel: row.channel, createdAt: new Date(row.created_at).getTime() };
  }

  /** Spends the request: what it held, once; undefined when it was spent already, expired or never sent. */
  async consume(id: string): Promise<SentRequest | undefined> {
    const row = await this.deps.db.deleteFrom('saml_requests').where('id', '=', id).where('expires_at', '>', new Date(this.deps.clock.now())).returningAll().executeTakeFirst();
    return row && { id: row.id, relayUrl: row.relay_url, channel: row.channel, createdAt: new Date(row.created_at).getTime() };
  }

  /** Deletes the requests nobody answered in time. */
  async purgeExpired(): Promise<number> {
    const r = await this.deps.db.deleteFrom('saml_requests').where('expires_at', '<=', new Date(this.deps.clock.now())).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
