/**
 * SAML browser binding (docs/decisions.md "SAML"): a sign-in started with a `relay_state` (the
 * assertion consumer will answer the browser with a one-time code) is bound to the browser that
 * started it. `saml/login` sets a cookie holding a random nonce, and the request's row keeps its
 * SHA-256 here; the ACS compares the cookie it receives with it. Null for a request answered as
 * JSON (no relay URL), which stays unbound.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE saml_requests ADD COLUMN browser_binding bytea CHECK (browser_binding IS NULL OR octet_length(browser_binding) = 32);
  `);
}
