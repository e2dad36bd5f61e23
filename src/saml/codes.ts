/**
 * One-time codes of the SAML browser flow (migration 017). The assertion consumer answers a
 * browser's form post with a redirect to the allowed RelayState carrying a code in the URL
 * fragment (never sent to a server, never in a Referer); the client exchanges the code, once,
 * within a minute, for the tokens (`GET saml/exchange`) or the second-factor challenge
 * (`GET saml/pending-2fa`). Only the SHA-256 of a code is stored; spending it is one
 * DELETE ... RETURNING, so of parallel exchanges one wins.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';

export const CODE_TTL_MS = 60_000;

export interface PendingSignIn {
  userId: number;
  channel: string;
  issuer: string;
  nameId: string;
  sessionIndex: string | null;
}

const hash = (code: string): Buffer => createHash('sha256').update(code).digest();

export class SamlCodes {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  async issue(pending: PendingSignIn): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    const now = this.deps.clock.now();
    await this.deps.db.insertInto('saml_codes').values({
      code_hash: hash(code), user_id: pending.userId, channel: pending.channel, issuer: pending.issuer, name_id: pending.nameId,
      session_index: pending.sessionIndex, created_at: new Date(now), expires_at: new Date(now + CODE_TTL_MS),
    }).execute();
    return code;
  }

  /** What the code stands for, without spending it; undefined when unknown, spent or expired. */
  async peek(code: string): Promise<PendingSignIn | undefined> {
    const row = await this.deps.db.selectFrom('saml_codes').selectAll().where('code_hash', '=', hash(code)).where('expires_at', '>', new Date(this.deps.clock.now())).executeTakeFirst();
    return row && this.pending(row);
  }

  /** Spends the code: what it stood for, once. */
  async spend(code: string): Promise<PendingSignIn | undefined> {
    const row = await this.deps.db.deleteFrom('saml_codes').where('code_hash', '=', hash(code)).where('expires_at', '>', new Date(this.deps.clock.now())).returningAll().executeTakeFirst();
    return row && this.pending(row);
  }

  async purgeExpired(): Promise<number> {
    const r = await this.deps.db.deleteFrom('saml_codes').where('expires_at', '<=', new Date(this.deps.clock.now())).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  private pending(row: { user_id: number; channel: string; issuer: string; name_id: string; session_index: string | null }): PendingSignIn {
    return { userId: row.user_id, channel: row.channel, issuer: row.issuer, nameId: row.name_id, sessionIndex: row.session_index };
  }
}
