/**
 * The pre-auth replay cache (issue 9, section 5). A pre-auth envelope carries no session, so
 * nothing else stops a captured one (an encrypted login, an OTP request) from being sent again:
 * its answer would be sealed to the original client's key and unreadable, but its effects
 * (attempts counted, codes sent, sessions made) would happen again. Each accepted envelope's
 * `encrypted_key` (a fresh random AES key wrapped with RSA-OAEP, so unique per envelope) is
 * recorded by its SHA-256 in PostgreSQL, shared by every node, for TRANSPORT_REPLAY_WINDOW_SECONDS;
 * an envelope seen within the window is refused as `400 DECRYPTION_FAILED`, like any other
 * envelope that does not open.
 *
 * The envelope holds no timestamp (SPEC fixes its fields), so after the window the same
 * envelope would be accepted again; the window is what the cache costs, and a replay after it
 * still only produces an answer the attacker cannot read.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';

export class ReplayCache {
  constructor(private readonly deps: { db: Db; clock: Clock; windowSec: number }) {}

  /**
   * Records the envelope whose wrapped key is `encryptedKey` (its base64, canonical) and
   * answers true, or answers false when it was recorded within the window: a replay. One
   * atomic upsert, so of two identical envelopes racing on any nodes exactly one is first.
   */
  async firstSeen(encryptedKey: string): Promise<boolean> {
    const digest = createHash('sha256').update(encryptedKey, 'utf8').digest();
    const now = this.deps.clock.now();
    const at = sql`${new Date(now)}::timestamptz`;
    const r = await sql<{ digest: Buffer }>`
      INSERT INTO transport_replay (digest, seen_at) VALUES (${digest}, ${at})
      ON CONFLICT (digest) DO UPDATE SET seen_at = EXCLUDED.seen_at
      WHERE transport_replay.seen_at <= ${new Date(now - this.deps.windowSec * 1000)}::timestamptz
      RETURNING digest`.execute(this.deps.db);
    return r.rows.length === 1;
  }

  /** Deletes the records past the window; returns how many. */
  async purge(): Promise<number> {
    const r = await this.deps.db.deleteFrom('transport_replay').where('seen_at', '<=', new Date(this.deps.clock.now() - this.deps.windowSec * 1000)).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
