/**
 * The users of `strongroom bench seed`, a batch per statement: each batch is one INSERT ... SELECT
 * over a JSON array of what only this process can compute (ciphertexts and blind indexes), with
 * everything that is the users' in the same statement, committed with the seed's progress.
 *
 * Every synthetic user is real to the service: the email, the phone number and the push tokens
 * are encrypted and blind-indexed with the server's own keys, so sign-in by email, the USSD
 * lookup by phone and an administrator's listing work as for anyone.
 */
import { randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { phoneIndexValue } from '../platform/crypto/blind-index.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import { days, seedMd5Sql, seedUuidFromMd5, type SeedContext } from './bench-seed-context.js';
import { SEED_SHAPE, SEED_USERNAME_PREFIX, seedIdentity } from './bench-seed-identity.js';
import { recordBatch, type SeedBatch } from './bench-seed-marker.js';
import { sessionCtes } from './bench-seed-sessions.js';

interface UserValues {
  n: number;
  email: string;
  email_bidx: string;
  phone: string | null;
  phone_bidx: string | null;
}

interface DeviceValues {
  n: number;
  token: string;
  bidx: string;
  platform: 'mobile' | 'web';
}

/** What only this process can make for users `from..to`: ciphertexts and blind indexes. */
function userValues(ctx: SeedContext, from: number, to: number): { users: UserValues[]; devices: DeviceValues[] } {
  const { sensitive, blindIndex } = ctx;
  const users: UserValues[] = [];
  const devices: DeviceValues[] = [];
  const device = (n: number, platform: DeviceValues['platform']): void => {
    const token = `seed${n}${platform}:${randomBytes(96).toString('base64url')}`; // about the length of an FCM registration token
    devices.push({ n, token: sensitive.protect(token, ENCRYPTED_COLUMNS.devicePushToken.context), bidx: blindIndex.ofExact(token), platform });
  };
  for (let n = from; n <= to; n++) {
    const id = seedIdentity(n);
    users.push({
      n, email: sensitive.protect(id.email, ENCRYPTED_COLUMNS.usersEmail.context), email_bidx: blindIndex.of(id.email),
      phone: id.phone === null ? null : sensitive.protect(id.phone, ENCRYPTED_COLUMNS.usersPhone.context),
      phone_bidx: id.phone === null ? null : blindIndex.of(phoneIndexValue(id.phone)),
    });
    if (n % SEED_SHAPE.deviceEvery === 0) device(n, 'mobile');
    if (n % SEED_SHAPE.webDeviceEvery === 0) device(n, 'web');
  }
  return { users, devices };
}

/** `src` (this process's values) and `nu`: the users inserted from them, with their number `n`. */
function usersCtes(ctx: SeedContext, users: UserValues[]): RawBuilder<unknown> {
  const at = ctx.anchor;
  return sql`
    src AS MATERIALIZED (
      SELECT s.*, ${seedMd5Sql(sql`s.n`)} AS h
      FROM json_to_recordset(${JSON.stringify(users)}::json) AS s(n int, email text, email_bidx text, phone text, phone_bidx text)
    ), u AS (
      INSERT INTO users (uuid, username, email, email_bidx, phone, phone_bidx, full_name, language, is_active, last_login_at, created_at, updated_at)
      SELECT ${seedUuidFromMd5(sql`h`)}, ${SEED_USERNAME_PREFIX}::text || n, email, email_bidx, phone, phone_bidx, 'Seed Customer ' || n,
             (ARRAY['en', 'pt', 'fr', NULL])[1 + n % 4], n % 100 <> ${SEED_SHAPE.disabledRemainder},
             ${at}::timestamptz - ${days(sql`n % 30`)} - make_interval(secs => n % 86400),
             ${at}::timestamptz - ${days(sql`30 + n % 700`)}, ${at}::timestamptz - ${days(sql`n % 30`)}
      FROM src ORDER BY n
      RETURNING id, username
    ), nu AS (
      SELECT id, username, substr(username, ${SEED_USERNAME_PREFIX.length + 1})::int AS n FROM u
    )`;
}

/** What every user has (password, its history, the role customer) and what some have (second factors). */
function ownedCtes(ctx: SeedContext): RawBuilder<unknown> {
  const at = ctx.anchor;
  return sql`
    c AS (
      INSERT INTO credentials (user_id, type, username, password_hash, password_enc, changed_at, expires_at, is_temporary)
      SELECT id, 'password', username, ${ctx.passwordHash}, ${ctx.passwordCopy}, ${at}::timestamptz - ${days(sql`n % 60`)},
             ${at}::timestamptz + ${days(sql`180 + n % 180`)}, false
      FROM nu RETURNING user_id, changed_at
    ), h AS (
      INSERT INTO credential_history (user_id, type, password_hash, created_at) SELECT user_id, 'password', ${ctx.passwordHash}, changed_at FROM c
    ), r AS (
      INSERT INTO user_roles (user_id, role_id) SELECT id, ${ctx.customerRoleId}::int FROM nu
    ), f AS (
      INSERT INTO mfa_factors (user_id, method, status, secret_enc, algorithm, created_at, confirmed_at)
      SELECT id, 'totp', 'active', ${ctx.totpSecret}, 'SHA1', ${at}::timestamptz - ${days(sql`n % 300`)}, ${at}::timestamptz - ${days(sql`n % 300`)}
      FROM nu WHERE n % 10 = ${SEED_SHAPE.totpRemainder}
      UNION ALL
      SELECT id, 'sms', 'active', NULL, NULL, ${at}::timestamptz - ${days(sql`n % 300`)}, ${at}::timestamptz - ${days(sql`n % 300`)}
      FROM nu WHERE n % 20 = ${SEED_SHAPE.smsRemainder}
    )`;
}

function devicesCte(ctx: SeedContext, devices: DeviceValues[]): RawBuilder<unknown> {
  const at = ctx.anchor;
  return sql`
    d AS (
      INSERT INTO device_tokens (user_id, push_token, push_token_bidx, platform, device_name, last_used_at, created_on, updated_on)
      SELECT nu.id, d.token, d.bidx, d.platform, CASE d.platform WHEN 'web' THEN 'Browser' ELSE 'Phone' END,
             ${at}::timestamptz - ${days(sql`nu.n % 20`)}, ${at}::timestamptz - ${days(sql`100 + nu.n % 300`)}, ${at}::timestamptz - ${days(sql`nu.n % 20`)}
      FROM json_to_recordset(${JSON.stringify(devices)}::json) AS d(n int, token text, bidx text, platform text) JOIN nu ON nu.n = d.n
    )`;
}

/**
 * Users `batch.from..batch.to` with everything that is theirs, in one statement: the user, the password
 * (credential and history), the role customer, second factors and push tokens for some, and
 * their sessions (`sessionCtes`).
 */
export async function insertUsers(ctx: SeedContext, batch: SeedBatch): Promise<void> {
  const { users, devices } = userValues(ctx, batch.from, batch.to);
  const statement = sql`
    WITH ${usersCtes(ctx, users)}, ${ownedCtes(ctx)}, ${devicesCte(ctx, devices)}, ${sessionCtes(ctx)}
    SELECT count(*) FROM nu`;
  await ctx.db.transaction().execute(async (trx) => {
    await statement.execute(trx);
    await recordBatch(trx, 'users', batch.index);
  });
}
