/**
 * SAML sign-in (issue 12): the AuthnRequests this service sent, by ID, so that any node can
 * check a response's InResponseTo, and spend it once; with where the browser goes afterwards
 * (an allowed RelayState URL) and the channel asked for. The IdP receives only the ID as its
 * RelayState (at most 80 bytes, SAML bindings 3.4.3, and nothing to tamper with).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE saml_requests (
      id text PRIMARY KEY,
      relay_url text,
      channel text NOT NULL CHECK (channel IN ('web', 'mobile', 'ussd', 'agent')),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX saml_requests_expiry ON saml_requests (expires_at);
  `);
}
