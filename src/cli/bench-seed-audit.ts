/**
 * The audit entries of `strongroom bench seed`, made in SQL alone from generate_series and
 * inserted through the partitioned parent `audit_log`. Entry `j` of `audit` is at the `j`-th step
 * of the period (so the batches fill the monthly partitions one after the other), for a user
 * drawn at random, with an event drawn from a mix in which sign-ins and refreshes dominate, as
 * they do in a live system.
 */
import { sql } from 'kysely';
import { monthStart } from '../audit/partitions.js';
import { seedMd5Sql, seedUuidFromMd5, type SeedContext } from './bench-seed-context.js';
import { SEED_USERNAME_PREFIX } from './bench-seed-identity.js';
import { recordBatch, type SeedBatch } from './bench-seed-marker.js';
import { SEED_USER_AGENTS } from './bench-seed-sessions.js';

/** Where the audit entries go: the `months` calendar months (UTC) before the seed's start, up to it. */
export function auditPeriod(anchor: Date, months: number): { from: Date; to: Date } {
  return { from: monthStart(anchor, -months), to: anchor };
}

/** Twenty draws: sign-ins and refreshes make most of a live audit trail. */
const EVENT_MIX = [
  ...Array<string>(9).fill('USER_LOGIN'), ...Array<string>(4).fill('TOKEN_REFRESH'), 'LOGOUT', 'LOGOUT', 'FAILED_LOGIN_ATTEMPT',
  'SESSION_ENDED', 'MFA_VERIFIED', 'PASSWORD_CHANGED', 'DEVICE_TOKEN_REGISTERED',
];

/** Audit entries `batch.from..batch.to`, through the partitioned parent `audit_log`, committed with the seed's progress. */
export async function insertAudit(ctx: SeedContext, batch: SeedBatch): Promise<void> {
  const { from, to } = batch;
  const { users, audit, months } = ctx.plan;
  const period = auditPeriod(ctx.anchor, months);
  const stepSec = (period.to.getTime() - period.from.getTime()) / 1000 / audit;
  const events = sql.raw(`ARRAY[${EVENT_MIX.map((e) => `'${e}'`).join(', ')}]`);
  const statement = sql`
    WITH j AS (
      SELECT j, ${period.from}::timestamptz + (j - random()) * ${stepSec}::float8 * interval '1 second' AS at,
             1 + floor(random() * ${users}::int)::int AS n, (${events})[1 + floor(random() * ${EVENT_MIX.length}::int)::int] AS ev
      FROM generate_series(${from}::bigint, ${to}::bigint) AS j
    ), jh AS MATERIALIZED ( -- each entry's md5 once, not once for each place the uuid expression reads it
      SELECT j.*, ${seedMd5Sql(sql`n`)} AS h FROM j
    )
    INSERT INTO audit_log (timestamp, event_type, user_id, username, status, ip_address, device_fingerprint, user_agent, channel, mfa_method, details)
    SELECT at, ev, ${seedUuidFromMd5(sql`h`)}::text, ${SEED_USERNAME_PREFIX}::text || n, CASE ev WHEN 'FAILED_LOGIN_ATTEMPT' THEN 'FAILURE' ELSE 'SUCCESS' END,
           encode(sha256(('ip' || n % 50000)::bytea), 'hex'), 'fp-' || substr(md5('fp' || n), 1, 24), (${SEED_USER_AGENTS})[1 + n % 4],
           (ARRAY['mobile', 'mobile', 'web', 'ussd'])[1 + n % 4], CASE WHEN ev = 'MFA_VERIFIED' THEN 'totp' END,
           CASE WHEN ev IN ('USER_LOGIN', 'TOKEN_REFRESH', 'LOGOUT') THEN jsonb_build_object('session_id', gen_random_uuid()) ELSE '{}'::jsonb END
    FROM jh`;
  await ctx.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL work_mem = '64MB'`.execute(trx); // the batch's rows stay in memory between its steps
    await statement.execute(trx);
    await recordBatch(trx, 'audit', batch.index);
  });
}
