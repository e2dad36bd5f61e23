/**
 * Refresh-token rotation (SPEC "States": single use, rotated on refresh). Each sign-in starts a
 * family; each refresh spends one token and issues the next in the same family. Presenting a
 * spent token again means it was copied: the whole family and its session end, and the event
 * is audited as TOKEN_REUSE_DETECTED (OAuth 2.0 Security BCP, RFC 9700 4.14.2).
 */
import { sql } from 'kysely';
import { auditContext, type AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import { safeEqual } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { Session, SessionService } from '../sessions/service.js';
import { TokenErrors } from '../tokens/errors.js';
import type { TokenService } from '../tokens/service.js';
import { grantsOf, userColumnsOf, type UserRow, type UserStore } from '../users/store.js';

type SpentRow = UserRow & {
  family_id: string;
  revoked_at: Date | null;
  session_id: string;
  roles: string[];
  permissions: string[];
  password_expires_at: Date | string | null;
};
import type { AccessPolicyCheck, ClientContext, SignInPipeline, SignInResult } from './pipeline.js';

export class RefreshService {
  constructor(
    private readonly deps: { db: Db; clock: Clock; tokens: TokenService; sessions: SessionService; users: UserStore; audit: AuditLog; pipeline: SignInPipeline; accessPolicy: AccessPolicyCheck },
  ) {}

  /** A new token pair, and a new transport key for the session (the old one stops at once). */
  async refresh(refreshToken: string, ctx: ClientContext): Promise<SignInResult> {
    const d = this.deps;
    const claims = await d.tokens.verify(refreshToken, 'refresh');
    const now = new Date(d.clock.now());

    // Refused before it is spent: a copy presented without the device, or from where the
    // session's channel policy does not allow it, cannot burn the owner's session.
    const bound = await d.sessions.current(claims.session_id);
    if (bound && bound.deviceFingerprint !== '' && ctx.fingerprint === '') throw TokenErrors.FINGERPRINT_REQUIRED();
    if (bound && bound.deviceFingerprint !== '' && !safeEqual(bound.deviceFingerprint, ctx.fingerprint)) throw TokenErrors.FINGERPRINT_MISMATCH();
    if (bound?.isActive) await this.checkPolicy(bound, claims.user_id, ctx);

    // One round trip: spend the token atomically (of two parallel uses exactly one wins) and
    // read, in the same statement, its family, the user, their grants and password expiry.
    const spent = (await sql<SpentRow>`
      WITH spent AS (
        UPDATE refresh_tokens AS rt SET used_at = ${now}
        FROM refresh_families AS f
        WHERE rt.jti = ${claims.jti} AND rt.used_at IS NULL AND f.family_id = rt.family_id
        RETURNING rt.family_id, f.revoked_at, f.session_id, f.user_id)
      SELECT spent.family_id, spent.revoked_at, spent.session_id, ${userColumnsOf('u')}, ${grantsOf(sql.ref('u.id'))},
             c.expires_at AS password_expires_at
      FROM spent JOIN users u ON u.id = spent.user_id
      LEFT JOIN credentials c ON c.user_id = u.id AND c.type = 'password'`.execute(d.db)).rows[0];
    if (!spent) {
      const known = await d.db.selectFrom('refresh_tokens').select('family_id').where('jti', '=', claims.jti).executeTakeFirst();
      if (!known) throw TokenErrors.TOKEN_INVALID();
      await this.revokeForReuse(known.family_id, claims.session_id, claims.user_id, ctx, bound?.channel ?? ctx.channel);
      throw TokenErrors.REFRESH_TOKEN_REUSED();
    }
    if (spent.revoked_at !== null || spent.session_id !== claims.session_id) throw TokenErrors.TOKEN_REVOKED();

    const session = await d.sessions.validate(claims.session_id, ctx.fingerprint); // its activity is written below
    const { family_id: familyId, roles, permissions, password_expires_at: passwordExpiresAt, ...row } = spent;
    const user = d.users.reveal(row as UserRow);
    if (!user.is_active || user.uuid !== claims.user_id) throw TokenErrors.TOKEN_REVOKED();
    const grants = { roles, permissions };

    // One more: the next refresh token, the session's new transport key and activity, the
    // audit entry and the notice to other nodes, in one statement (atomic, like a transaction, without its
    // extra round trips).
    const { pair, refreshRow } = await d.pipeline.mintPair(user, grants, session, familyId);
    const rekey = d.sessions.newKey();
    const audit = d.audit.row({ eventType: 'TOKEN_REFRESH', status: 'SUCCESS', userId: user.uuid, username: user.username, ...auditContext({ ...ctx, channel: session.channel }), details: { session_id: session.sessionId } });
    await d.db
      .with('issued', (db) => db.insertInto('refresh_tokens').values(refreshRow))
      .with('rekeyed', (db) => db.updateTable('sessions').set({ ...rekey.set, last_activity: now }).where('session_id', '=', session.sessionId))
      .with('audited', (db) => db.insertInto('audit_log').values(audit))
      .selectNoFrom(d.sessions.changedNotice(session.sessionId).as('notified')) // other nodes hear of the new key on commit
      .execute();
    d.sessions.rekeyed(session, rekey.key, rekey.expiresAt, now.getTime());
    const lastLogin = user.last_login_at ? new Date(user.last_login_at) : null;
    const body = await d.pipeline.response(user, grants, session, pair, lastLogin, passwordExpiresAt === null ? null : new Date(passwordExpiresAt).getTime());
    return { body, sessionKey: rekey.key };
  }

  /**
   * The session's channel policy for this request, as the bearer guard checks it: the user's
   * roles are read only when a policy of the channel depends on them (most refreshes: no read).
   */
  private async checkPolicy(session: Session, userUuid: string, ctx: ClientContext): Promise<void> {
    const d = this.deps;
    const roles = d.accessPolicy.rolesMatter(session.channel) ? (await d.users.grants(session.userId)).roles : [];
    await d.accessPolicy.checkSession({
      sessionId: session.sessionId, userId: session.userId, userUuid, roles, channel: session.channel,
      fingerprint: session.deviceFingerprint, ip: ctx.ip, userAgent: ctx.userAgent,
    });
  }

  /** `channel`: the session's, not the refresh request's placeholder. */
  private async revokeForReuse(familyId: string, sessionId: string, userUuid: string, ctx: ClientContext, channel: string): Promise<void> {
    const d = this.deps;
    const user = await d.users.findByUuid(userUuid);
    const ended = await d.db.transaction().execute(async (trx) => {
      await trx.updateTable('refresh_families').set({ revoked_at: new Date(d.clock.now()), revoke_reason: 'reuse_detected' }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
      const ids = user ? (await trx.selectFrom('sessions').select('session_id').where('session_id', '=', sessionId).where('is_active', '=', true).execute()).map((r) => r.session_id) : [];
      if (user) await d.sessions.endMany(trx, ids, 'refresh_reuse', user.id);
      await d.audit.record({ eventType: 'TOKEN_REUSE_DETECTED', status: 'DETECTED', userId: userUuid, username: user?.username ?? null, ...auditContext({ ...ctx, channel }), details: { family_id: familyId, session_id: sessionId } }, trx);
      return ids;
    });
    await d.sessions.announce(ended);
  }

  /** Deletes refresh tokens past their expiry (a one-node background job). */
  async purgeExpired(): Promise<void> {
    await this.deps.db.deleteFrom('refresh_tokens').where('expires_at', '<', new Date(this.deps.clock.now())).execute();
  }
}
