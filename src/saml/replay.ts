/**
 * The assertion replay cache (migration 017): an assertion is accepted once, on any node. The
 * ID is reserved by the primary key before any account is touched; it is kept until the
 * assertion would be refused as expired anyway, then a job deletes it. The IdP's LogoutRequests
 * are reserved here too (src/saml/logout.ts), by issuer and ID: SAML core 1.3.4 makes an ID unique
 * across all of an issuer's messages.
 */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';

export class SamlAssertionCache {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** True the first time `issuer`'s `assertionId` is seen; false for a replay (also a parallel one). */
  async reserve(issuer: string, assertionId: string, until: number): Promise<boolean> {
    const r = await this.deps.db.insertInto('saml_assertions').values({ issuer, assertion_id: assertionId, expires_at: new Date(until) })
      .onConflict((oc) => oc.columns(['issuer', 'assertion_id']).doNothing()).returning('assertion_id').executeTakeFirst();
    return r !== undefined;
  }

  /** Deletes the IDs of assertions that can no longer be accepted. */
  async purgeExpired(): Promise<number> {
    const r = await this.deps.db.deleteFrom('saml_assertions').where('expires_at', '<=', new Date(this.deps.clock.now())).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
