/**
 * The sessions of the synthetic users, written in the same statement as their users
 * (bench-seed-users.ts), from generate_series: session `k` (1 to `sessions`) belongs to user
 * `((k - 1) mod users) + 1`, so user `n` holds sessions `n`, `n + users`, ... `activeSessions`
 * of them, spread evenly over `k`, are active, each with a refresh family and an unspent refresh
 * token; the others ended within the last ENDED_SESSION_DAYS days.
 */
import { sql, type RawBuilder } from 'kysely';
import type { SeedContext } from './bench-seed-context.js';

/** How long the synthetic active sessions and their refresh tokens live after the seed's start. */
export const ACTIVE_SESSION_DAYS = 30;

/**
 * The ended sessions ended within this many days before the seed's start: the server deletes
 * ended sessions after RECORD_RETENTION_DAYS (default 90), so older ones would be deleted by the
 * first server started on the seed, in the middle of whatever it measures.
 */
export const ENDED_SESSION_DAYS = 60;

export const SEED_USER_AGENTS = sql.raw(`ARRAY['StrongroomMobile/4.2 (Android 14)', 'StrongroomMobile/4.2 (iOS 17.5)', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/128.0', 'USSD gateway']`);

/** CTEs `sk` to `st`: the sessions of the users of `nu` (id, n), their refresh families and tokens. */
export function sessionCtes(ctx: SeedContext): RawBuilder<unknown> {
  const { users, sessions, activeSessions } = ctx.plan;
  const at = ctx.anchor;
  return sql`
    sk AS (
      SELECT nu.id, nu.n, k,
             floor(k::numeric * ${activeSessions}::bigint / ${sessions}::bigint) > floor((k - 1)::numeric * ${activeSessions}::bigint / ${sessions}::bigint) AS active
      FROM nu CROSS JOIN LATERAL generate_series(nu.n::bigint, ${sessions}::bigint, ${users}::bigint) AS k
    ), sc AS (
      SELECT sk.*, CASE WHEN active THEN ${at}::timestamptz - make_interval(mins => (k % 600)::int)
                        ELSE ${at}::timestamptz - make_interval(days => (k % ${ENDED_SESSION_DAYS})::int, mins => (k % 1440)::int) END AS created_at
      FROM sk
    ), ss AS (
      INSERT INTO sessions (session_id, user_id, created_at, last_activity, expires_at, device_fingerprint, ip_address, user_agent,
                            is_active, mfa_completed, channel, aes_key, aes_key_expires_at, ended_at, end_reason)
      SELECT gen_random_uuid(), id, created_at, created_at + make_interval(mins => (k % 10)::int),
             CASE WHEN active THEN ${at}::timestamptz + make_interval(days => ${ACTIVE_SESSION_DAYS}) ELSE created_at + interval '1 day' END,
             'fp-' || substr(md5('fp' || n), 1, 24), encode(sha256(('ip' || n % 50000)::bytea), 'hex'), (${SEED_USER_AGENTS})[1 + k % 4],
             active, n % 10 IN (7, 9), (ARRAY['mobile', 'mobile', 'web', 'ussd'])[1 + k % 4],
             ${ctx.sessionKey}, ${at}::timestamptz + interval '1 day',
             CASE WHEN active THEN NULL ELSE created_at + make_interval(mins => (5 + k % 50)::int) END,
             CASE WHEN active THEN NULL ELSE (ARRAY['logout', 'inactivity', 'expired', 'superseded'])[1 + k % 4] END
      FROM sc
      RETURNING session_id, user_id, is_active, created_at
    ), sf AS (
      INSERT INTO refresh_families (family_id, session_id, user_id, created_at)
      SELECT gen_random_uuid(), session_id, user_id, created_at FROM ss WHERE is_active
      RETURNING family_id, created_at
    ), st AS (
      INSERT INTO refresh_tokens (jti, family_id, issued_at, expires_at)
      SELECT gen_random_uuid()::text, family_id, created_at, ${at}::timestamptz + make_interval(days => ${ACTIVE_SESSION_DAYS}) FROM sf
    )`;
}
