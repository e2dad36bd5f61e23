/**
 * The AuthnRequests and LogoutRequests this service sent (migration 016), in PostgreSQL so that
 * the node that receives the response need not be the one that sent the request. A request is
 * spent once: `consume` deletes it and returns what it held, so of two parallel posts of one
 * response only one finds it.
 *
 * The two kinds share the table but never answer for each other: a LogoutRequest's row is keyed
 * `logout:<ID>` (our IDs are `_` and hex, so no AuthnRequest's key starts so), and every look-up
 * names its kind. A LogoutResponse cannot spend a pending sign-in, nor a SAMLResponse at the ACS
 * a pending sign-out.
 *
 * An AuthnRequest of the browser flow (one with a relay URL) also keeps the SHA-256 of the nonce
 * in the browser-binding cookie `saml/login` set (migration 019, src/saml/browser-binding.ts).
 */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';

/** How long a browser has at the IdP between the request and the response. */
export const REQUEST_TTL_MS = 10 * 60_000;

export interface SentRequest {
  id: string;
  relayUrl: string | null;
  channel: string;
  /** SHA-256 of the browser-binding nonce; null for a request answered as JSON (and a logout request). */
  browserBinding: Buffer | null;
  createdAt: number;
}

/** What a request is recorded with (`browserBinding` defaults to none). */
export interface RequestPurpose {
  relayUrl: string | null;
  channel: string;
  browserBinding?: Buffer | null;
}

type Row = { relay_url: string | null; channel: string; browser_binding: Buffer | null; created_at: Date | string };
const sent = (id: string, row: Row): SentRequest => ({ id, relayUrl: row.relay_url, channel: row.channel, browserBinding: row.browser_binding === null ? null : Buffer.from(row.browser_binding), createdAt: new Date(row.created_at).getTime() });

/** What was sent: an AuthnRequest (answered at the ACS) or a LogoutRequest (answered at the SLS). */
export type SamlRequestKind = 'authn' | 'logout';

const LOGOUT_PREFIX = 'logout:';

/** The row's key of request `id` of `kind`; undefined for an ID no request of that kind can have. */
function keyOf(id: string, kind: SamlRequestKind): string | undefined {
  if (kind === 'logout') return `${LOGOUT_PREFIX}${id}`;
  return id.startsWith(LOGOUT_PREFIX) ? undefined : id;
}

export class SamlRequests {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  async save(id: string, request: RequestPurpose, kind: SamlRequestKind = 'authn'): Promise<SentRequest> {
    const key = keyOf(id, kind);
    if (key === undefined) throw new Error('a request ID of the wrong shape');
    const now = this.deps.clock.now();
    const browserBinding = request.browserBinding ?? null;
    await this.deps.db.insertInto('saml_requests')
      .values({ id: key, relay_url: request.relayUrl, channel: request.channel, browser_binding: browserBinding, created_at: new Date(now), expires_at: new Date(now + REQUEST_TTL_MS) }).execute();
    return { id, relayUrl: request.relayUrl, channel: request.channel, browserBinding, createdAt: now };
  }

  /** The request of `kind` with `id`, unless answered or expired. */
  async find(id: string, kind: SamlRequestKind = 'authn'): Promise<SentRequest | undefined> {
    const key = keyOf(id, kind);
    if (key === undefined) return undefined;
    const row = await this.deps.db.selectFrom('saml_requests').selectAll().where('id', '=', key).where('expires_at', '>', new Date(this.deps.clock.now())).executeTakeFirst();
    return row && sent(id, row);
  }

  /** Spends the request of `kind`: what it held, once; undefined when it was spent already, expired, never sent, or of the other kind. */
  async consume(id: string, kind: SamlRequestKind = 'authn'): Promise<SentRequest | undefined> {
    const key = keyOf(id, kind);
    if (key === undefined) return undefined;
    const row = await this.deps.db.deleteFrom('saml_requests').where('id', '=', key).where('expires_at', '>', new Date(this.deps.clock.now())).returningAll().executeTakeFirst();
    return row && sent(id, row);
  }

  /** Deletes the requests nobody answered in time. */
  async purgeExpired(): Promise<number> {
    const r = await this.deps.db.deleteFrom('saml_requests').where('expires_at', '<=', new Date(this.deps.clock.now())).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
