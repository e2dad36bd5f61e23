/**
 * The personal-data registry (issue 28): for every table that names a user, one entry saying
 * which of its columns name one and what each holds (the person the rows are about, or an
 * operator who acted on something), and how the person's rows leave in an export: the section
 * they appear in and the columns shown (contacts decrypted; push tokens masked; never a password
 * hash, a TOTP secret, a code or answer hash, a token hash or a session key), or why they do not.
 *
 * Completeness is checked against the migrated schema (test/http/gdpr-export.test.ts): a table
 * with a foreign key to `users` or a column named `user_id`, `*_user_id`, `user_uuid` or `*_by`
 * that has no entry, or a column of it an entry does not name, fails the test by name.
 *
 * Erasure (src/gdpr/erasure): every entry also says what the erasure job does with the person's
 * rows, and why: `delete`, `erase columns` (the users row becomes a tombstone), `pseudonymise`
 * (the audit trail and the consent history, kept for the bank's legal duties) or `keep` (with the
 * legal ground). The job runs each entry's `apply` in one transaction per account; the
 * completeness test fails for an entry without a decision.
 */
import { sql } from 'kysely';
import { maskToken } from '../../devices/store.js';
import type { Clock } from '../../platform/clock.js';
import { ENCRYPTED_COLUMNS } from '../../platform/crypto/columns.js';
import type { SensitiveColumns } from '../../platform/crypto/sensitive.js';
import type { Db } from '../../platform/db/database.js';
import type { UserRow, UserStore } from '../../users/store.js';
import { ERASE, placelessIndicators, type Erasure, type ErasureContext } from '../erasure/apply.js';

/** One cell of an exported row: JSON-able. */
export type Cell = string | number | boolean | null | Record<string, unknown> | unknown[];
export type Row = Record<string, Cell>;

/** What reading a person's rows needs. */
export interface ExportContext {
  db: Db;
  user: UserRow;
  users: Pick<UserStore, 'reveal'>;
  sensitive: SensitiveColumns;
  clock: Clock;
  /** Audit events older than this are left out (the section's note says how to get them). */
  auditSince: Date;
  /** At most this many audit events (newest first). */
  auditCap: number;
}

/** The person's rows leave in `section`, with exactly the `columns` listed (in this order). */
export interface Exported {
  section: string;
  /** One sentence for the README of the CSV export and the JSON's `sections` list. */
  description: string;
  columns: readonly string[];
  read(ctx: ExportContext): Promise<Row[]>;
}

export interface RegistryEntry {
  table: string;
  /** Every column that names a user, and what it holds (`the person`, or the operator's role). */
  references: Readonly<Record<string, string>>;
  /** What the erasure job does with the person's rows, and why (src/gdpr/erasure). */
  erasure: Erasure;
  /** How the person's rows are exported; `within`: another entry's section covers them; `excluded`: why not. */
  export: Exported | { within: string } | { excluded: string };
}

export const iso = (d: Date | string | null | undefined): string | null => (d === null || d === undefined ? null : new Date(d).toISOString());

const PERSON = 'the person the rows are about';

/** Erasure deletes the person's rows (`column` names them; `before` clears rows that depend on them first). */
function deleted(why: string, column = 'user_id', before?: (c: ErasureContext) => Promise<unknown>): Erasure {
  return {
    action: 'delete', why,
    apply: async (c, table) => {
      await before?.(c);
      const out = await sql`DELETE FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${c.user.id} RETURNING 1`.execute(c.db);
      return out.rows.length;
    },
  };
}

/** Erasure leaves the rows as they are, for the reason (a legal ground, or: no row is about a person). */
const kept = (why: string): Erasure => ({ action: 'keep', why });
const CONFIG_ACTOR = 'the administrator who last changed this configuration (their own export shows it as their audit events, not this row)';

/** Maps rows to the shown columns, timestamps as ISO strings. */
function shape(columns: readonly string[], rows: readonly Record<string, unknown>[]): Row[] {
  return rows.map((r) => Object.fromEntries(columns.map((c) => {
    const v = r[c];
    return [c, v instanceof Date ? v.toISOString() : v === undefined ? null : (v as Cell)];
  })));
}

function table(section: string, description: string, columns: readonly string[], read: (ctx: ExportContext) => Promise<readonly Record<string, unknown>[]>): Exported {
  return { section, description, columns, read: async (ctx) => shape(columns, await read(ctx)) };
}

const PROFILE = ['id', 'username', 'full_name', 'email', 'phone', 'language', 'date_of_birth', 'is_active', 'is_service_account', 'must_change_password', 'last_login_at', 'created_at', 'updated_at', 'deleted_at', 'security_locked_at'] as const;

async function readProfile(ctx: ExportContext): Promise<Record<string, unknown>[]> {
  const row = await ctx.db.selectFrom('users').selectAll().where('id', '=', ctx.user.id).executeTakeFirstOrThrow() as Record<string, unknown> & { email: string | null; phone: string | null };
  const revealed = ctx.users.reveal(row);
  const dob = typeof row.date_of_birth === 'string' ? ctx.sensitive.reveal(row.date_of_birth, ENCRYPTED_COLUMNS.usersDateOfBirth.context) : null;
  return [{ ...revealed, id: row.uuid, date_of_birth: dob }];
}

/** Rows of a table the type map may not know yet (tables of other parts of issue 28), as plain records. */
async function rawRows(ctx: ExportContext, query: ReturnType<typeof sql>): Promise<Record<string, unknown>[]> {
  return (await query.execute(ctx.db)).rows as Record<string, unknown>[];
}

const account: RegistryEntry[] = [
  {
    table: 'users', references: { id: PERSON, uuid: PERSON, deleted_by: 'the administrator who deleted the account (shown only as whether it was deleted, and when)' },
    erasure: ERASE.tombstone,
    export: table('profile', 'Your account: username, name, contacts (decrypted), language, date of birth, status and dates.', PROFILE, readProfile),
  },
  {
    table: 'credentials', references: { user_id: PERSON },
    erasure: deleted('Passwords and PINs of an account that no longer signs in: nothing to keep.'),
    export: table('credentials', 'Your passwords and PIN as records: type, sign-in name, when set, when they expire, whether temporary. Never the password or its hash.',
      ['type', 'username', 'changed_at', 'expires_at', 'is_temporary', 'expiry_warned_at'],
      (c) => c.db.selectFrom('credentials').select(['type', 'username', 'changed_at', 'expires_at', 'is_temporary', 'expiry_warned_at']).where('user_id', '=', c.user.id).orderBy('id').execute()),
  },
  {
    table: 'credential_history', references: { user_id: PERSON },
    erasure: deleted('Earlier password hashes, kept only to refuse reuse: no purpose once the account is gone.'),
    export: table('password_history', 'When each earlier password or PIN was set (kept to refuse reusing one). Never the hashes.',
      ['type', 'created_at'], (c) => c.db.selectFrom('credential_history').select(['type', 'created_at']).where('user_id', '=', c.user.id).orderBy('id').execute()),
  },
  {
    table: 'user_roles', references: { user_id: PERSON },
    erasure: deleted('An erased account holds no role; the audit trail keeps which roles it had and when.'),
    export: table('roles', 'Your roles and what each allows.', ['role', 'description'],
      (c) => c.db.selectFrom('user_roles').innerJoin('roles', 'roles.id', 'user_roles.role_id').select(['roles.name as role', 'roles.description']).where('user_roles.user_id', '=', c.user.id).orderBy('roles.name').execute()),
  },
  {
    table: 'user_entities', references: { user_id: PERSON },
    erasure: deleted('Branch membership of an account that no longer exists for the service.'),
    export: table('branches', 'The branches your account belongs to.', ['code', 'name', 'since'],
      (c) => c.db.selectFrom('user_entities').innerJoin('entities', 'entities.id', 'user_entities.entity_id').select(['entities.code', 'entities.name', 'user_entities.created_at as since']).where('user_entities.user_id', '=', c.user.id).orderBy('entities.code').execute()),
  },
  {
    table: 'user_identity_providers', references: { user_id: PERSON },
    erasure: deleted('The directory or single sign-on identity (its subject names the person) linked to the account.'),
    export: table('linked_identities', 'The directory (LDAP) or single sign-on (SAML) identities linked to your account.', ['idp_type', 'idp_subject', 'idp_issuer', 'active', 'created_at'],
      (c) => c.db.selectFrom('user_identity_providers').select(['idp_type', 'idp_subject', 'idp_issuer', 'active', 'created_at']).where('user_id', '=', c.user.id).orderBy('id').execute()),
  },
];

const SESSION_COLUMNS = ['session_id', 'channel', 'created_at', 'last_activity', 'expires_at', 'ended_at', 'end_reason', 'ip_address', 'user_agent', 'device_fingerprint', 'is_active', 'mfa_completed', 'mfa_verified_at'] as const;

const sessions: RegistryEntry[] = [
  {
    table: 'sessions', references: { user_id: PERSON },
    erasure: deleted('Sessions (ended at the request) with their addresses and devices: the audit trail keeps the sign-ins, pseudonymised.'),
    export: table('sessions', 'Your sessions: channel, when opened, last active and ended, from which address, user agent and device. Never the session\'s transport key.', SESSION_COLUMNS,
      (c) => c.db.selectFrom('sessions').select(SESSION_COLUMNS).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'session_history', references: { user_id: PERSON },
    erasure: deleted('What happened to each session: the audit trail keeps the security events, pseudonymised.'),
    export: table('session_history', 'What happened to each session (opened, refreshed, ended and why).', ['session_id', 'event', 'reason', 'at'],
      (c) => c.db.selectFrom('session_history').select(['session_id', 'event', 'reason', 'at']).where('user_id', '=', c.user.id).orderBy('id').execute()),
  },
  {
    table: 'refresh_families', references: { user_id: PERSON },
    erasure: deleted('Refresh-token chains (revoked at the request), with their tokens.', 'user_id', (c) => sql`DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM refresh_families WHERE user_id = ${c.user.id})`.execute(c.db)),
    export: table('refresh_tokens', 'The refresh-token chains of your sessions: when started, when and why revoked. Never the tokens.', ['session_id', 'created_at', 'revoked_at', 'revoke_reason'],
      (c) => c.db.selectFrom('refresh_families').select(['session_id', 'created_at', 'revoked_at', 'revoke_reason']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'device_bindings', references: { user_id: PERSON, decided_by: 'the administrator who approved or revoked the binding (not shown: another person\'s identifier)' },
    erasure: deleted('Devices bound to the account (fingerprint hashes): nothing to keep.'),
    export: table('device_bindings', 'The devices bound to your account on a channel, and their approval. Never the device fingerprint\'s hash.', ['id', 'label', 'channel', 'status', 'requested_at', 'decided_at'],
      (c) => c.db.selectFrom('device_bindings').select(['uuid as id', 'label', 'channel', 'status', 'requested_at', 'decided_at']).where('user_id', '=', c.user.id).orderBy('id').execute()),
  },
  {
    table: 'saml_sessions', references: { user_id: PERSON },
    erasure: deleted('Identity-provider sessions (the name id names the person), for single logout of sessions that no longer exist.'),
    export: table('single_sign_on_sessions', 'The identity-provider sessions your sessions came from (for single logout).', ['session_id', 'issuer', 'name_id', 'created_at'],
      (c) => c.db.selectFrom('saml_sessions').select(['session_id', 'issuer', 'name_id', 'created_at']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'saml_codes', references: { user_id: PERSON },
    erasure: deleted('Single-use codes of the single sign-on flow.'),
    export: { excluded: 'Single-use codes of the single sign-on browser flow, stored only as SHA-256 hashes and deleted within minutes: nothing readable about the person.' },
  },
  {
    table: 'risk_profiles', references: { user_id: PERSON },
    erasure: deleted('The sign-in history each new sign-in is compared with for its risk score (device hashes, countries, networks, hours, the last located sign-in): the audit trail keeps the sign-ins, pseudonymised.'),
    export: table('sign_in_profile', 'What each of your sign-ins is compared with for its risk score: how many there were, the countries and networks (ASNs) they came from with their counts, how many at each hour of the day (UTC), the last one from a known place, and how many devices are remembered (as keyed hashes, never the fingerprints).',
      ['sign_ins', 'countries', 'networks', 'hours_utc', 'devices_remembered', 'last_sign_in_at', 'last_located_at', 'last_country', 'last_latitude', 'last_longitude'],
      (c) => rawRows(c, sql`SELECT success_count AS sign_ins, countries, array_to_json(asns) AS networks, hours AS hours_utc, cardinality(devices) AS devices_remembered, last_at AS last_sign_in_at,
        located_at AS last_located_at, located_country AS last_country, located_latitude AS last_latitude, located_longitude AS last_longitude FROM risk_profiles WHERE user_id = ${c.user.id}`)),
  },
  {
    table: 'risk_notices', references: { user_id: PERSON },
    erasure: deleted('Notices of sign-ins that did not look like the holder\'s, with their "this was not me" links: the audit trail keeps the sign-ins and any report, pseudonymised.'),
    export: table('sign_in_notices', 'The notices sent to you about sign-ins that did not look like yours (deleted once their "this was not me" link expires): when the sign-in was, whether it opened a session, waited for your second factor or was refused, the city and country, the browser and system the device named, the channel, the risk score, and whether you answered "this was not me".',
      ['occurred_at', 'outcome', 'country', 'city', 'browser', 'system', 'channel', 'score', 'sent_at', 'used_at', 'expires_at'],
      (c) => c.db.selectFrom('risk_notices').select(['occurred_at', 'outcome', 'country', 'city', 'browser', 'system', 'channel', 'score', 'sent_at', 'used_at', 'expires_at'])
        .where('user_id', '=', c.user.id).orderBy('occurred_at').execute()),
  },
];

const factors: RegistryEntry[] = [
  {
    table: 'mfa_factors', references: { user_id: PERSON },
    erasure: deleted('Second factors and their secrets.'),
    export: table('factors', 'The second factors you enrolled: method, state, since when. Never the authenticator secret.', ['method', 'status', 'since', 'confirmed_at'],
      (c) => c.db.selectFrom('mfa_factors').select(['method', 'status', 'created_at as since', 'confirmed_at']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'passkeys', references: { user_id: PERSON },
    erasure: deleted('Passkeys of an account that no longer signs in (their public keys with them).'),
    // Never the public key or the credential id: neither says anything about the person that the
    // rest does not, and a credential id names the passkey on the device, a way to tell the
    // person's devices apart if the export leaks.
    export: table('passkeys', 'The passkeys you registered: the name you gave each, when it was added and last used, whether it is synced across devices and backed up, and when it was suspended (a copy of it was detected). Never its public key or credential id: they describe the key on your device, not you.',
      ['name', 'created_at', 'last_used_at', 'device_type', 'backed_up', 'suspended_at'],
      (c) => c.db.selectFrom('passkeys').select(['name', 'created_at', 'last_used_at', 'device_type', 'backed_up', 'suspended_at']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'webauthn_challenges', references: { user_id: PERSON },
    erasure: deleted('Passkey challenges (random values, 5 minutes each) asked for the account.'),
    export: { excluded: 'Random values the service asked a device to sign, each valid 5 minutes and deleted soon after: nothing about the person.' },
  },
  {
    table: 'push_approval_keys', references: { user_id: PERSON },
    erasure: deleted('The push-approval key of an account that no longer signs in.'),
    // Never the public key nor the attestation's details (an App Attest key id): they describe the
    // key in the phone's hardware, not the person; only how the key was proved.
    export: table('push_approval', 'The phone you enrolled to approve sign-ins: when it was set up and confirmed, and how its key was proved to be in the phone\'s secure hardware (tee, strongbox, app_attest, or none). Never its key.', ['created_at', 'confirmed_at', 'attestation'],
      (c) => c.db.selectFrom('push_approval_keys').select(['created_at', 'confirmed_at', sql<string>`coalesce(attestation->>'security_level', 'none')`.as('attestation')]).where('user_id', '=', c.user.id).execute()),
  },
  {
    table: 'push_approval_requests', references: { user_id: PERSON },
    erasure: deleted('Sign-in approval requests sent to the account\'s phone (deleted a day after they expire).'),
    export: table('push_approval_requests', 'Sign-ins sent to your phone for approval: when, from where and what, and your answer. Never the numbers.',
      ['requested_at', 'expires_at', 'state', 'deny_reason', 'country', 'city', 'browser', 'system', 'channel', 'answered_at'],
      (c) => c.db.selectFrom('push_approval_requests').select(['requested_at', 'expires_at', 'state', 'deny_reason', 'country', 'city', 'browser', 'system', 'channel', 'answered_at']).where('user_id', '=', c.user.id).orderBy('requested_at').execute()),
  },
  {
    table: 'mfa_backup_codes', references: { user_id: PERSON },
    erasure: deleted('Backup code hashes of an account that no longer signs in.'),
    export: table('backup_codes', 'Your backup codes as records: when issued, when used. Never the codes or their hashes.', ['created_at', 'used_at'],
      (c) => c.db.selectFrom('mfa_backup_codes').select(['created_at', 'used_at']).where('user_id', '=', c.user.id).orderBy('id').execute()),
  },
  {
    table: 'mfa_attempts', references: { user_id: PERSON },
    erasure: deleted('Failed second-factor counters and locks of the account.'),
    export: table('factor_lockouts', 'Failed second-factor attempts counted against you, and any lockout.', ['factor', 'failed_count', 'window_started_at', 'locked_until'],
      (c) => c.db.selectFrom('mfa_attempts').select(['factor', 'failed_count', 'window_started_at', 'locked_until']).where('user_id', '=', c.user.id).orderBy('factor').execute()),
  },
  {
    table: 'mfa_otp_codes', references: { user_id: PERSON },
    erasure: deleted('One-time codes sent, with the masked addresses they went to.'),
    export: table('one_time_codes', 'The one-time codes sent to you: why, how, to which (masked) address, and what became of them. Never the codes or their hashes.',
      ['purpose', 'method', 'destination_masked', 'created_at', 'expires_at', 'consumed_at', 'delivery_status', 'delivered_at'],
      (c) => c.db.selectFrom('mfa_otp_codes').select(['purpose', 'method', 'destination_masked', 'created_at', 'expires_at', 'consumed_at', 'delivery_status', 'delivered_at']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'user_security_answers', references: { user_id: PERSON },
    erasure: deleted('Security answer hashes: no purpose once the account is gone.'),
    export: table('security_questions', 'The security questions you answered (the questions only: answers are kept as hashes and never shown).', ['question', 'created_at'],
      (c) => c.db.selectFrom('user_security_answers').innerJoin('security_questions', 'security_questions.id', 'user_security_answers.question_id').select(['security_questions.text as question', 'user_security_answers.created_at']).where('user_security_answers.user_id', '=', c.user.id).orderBy('security_questions.id').execute()),
  },
  {
    table: 'security_question_challenges', references: { user_id: PERSON },
    erasure: deleted('Security-question challenges asked of the account.'),
    export: table('security_question_challenges', 'When you were asked your security questions, and whether the challenge was used.', ['created_at', 'expires_at', 'consumed_at'],
      (c) => c.db.selectFrom('security_question_challenges').select(['created_at', 'expires_at', 'consumed_at']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
  {
    table: 'security_questions', references: { created_by: CONFIG_ACTOR },
    erasure: kept('The catalogue of questions the bank offers: no row is about the person (created_by names an administrator).'),
    export: { excluded: 'The catalogue of questions the bank offers: no row is about a person (the questions a person answered are in `security_questions` through `user_security_answers`).' },
  },
  {
    table: 'mfa_reset_requests', references: { user_id: PERSON, decided_by: 'the administrator who decided the request (not shown: another person\'s identifier)' },
    erasure: deleted('Factor-reset requests and the proof the person gave; the audit trail keeps the decisions, pseudonymised.'),
    export: table('factor_reset_requests', 'Your requests to reset your second factors, what you gave as proof, and the decision.',
      ['id', 'status', 'reason', 'proof', 'requested_at', 'expires_at', 'decided_at', 'decision_note', 'completed_at'],
      (c) => c.db.selectFrom('mfa_reset_requests').select(['id', 'status', 'reason', 'proof', 'requested_at', 'expires_at', 'decided_at', 'decision_note', 'completed_at']).where('user_id', '=', c.user.id).orderBy('requested_at').execute()),
  },
];

const RECOVERY_COLUMNS = ['reference', 'kind', 'state', 'started_at_branch', 'created_at', 'expires_at', 'verified_at', 'waiting_until', 'completed_at', 'ended_at'] as const;

const recovery: RegistryEntry[] = [
  {
    table: 'recovery_workflows',
    references: { user_id: PERSON, initiated_by: 'the branch operator who started the workflow for the customer (the customer sees `started_at_branch`; the operator\'s own export has it as their audit events)' },
    erasure: deleted('Account-recovery workflows (masked contacts, keyed hashes), with their proofs and cancel tokens; the audit trail keeps the events, pseudonymised.', 'user_id', async (c) => { await sql`DELETE FROM recovery_proofs WHERE workflow_id IN (SELECT id FROM recovery_workflows WHERE user_id = ${c.user.id})`.execute(c.db); await sql`DELETE FROM recovery_cancel_tokens WHERE workflow_id IN (SELECT id FROM recovery_workflows WHERE user_id = ${c.user.id})`.execute(c.db); }),
    export: table('recovery_workflows', 'Your account-recovery workflows: what was lost, the state, whether a branch started it, and the dates. Never the handles or keyed hashes.', RECOVERY_COLUMNS,
      async (c) => (await c.db.selectFrom('recovery_workflows').select(['reference', 'kind', 'state', 'initiated_by', 'created_at', 'expires_at', 'verified_at', 'waiting_until', 'completed_at', 'ended_at'])
        .where('user_id', '=', c.user.id).orderBy('created_at').execute()).map(({ initiated_by, ...r }) => ({ ...r, started_at_branch: initiated_by !== null }))),
  },
  {
    table: 'recovery_locks', references: { user_id: PERSON },
    erasure: deleted('A recovery lock of an account that can no longer be recovered.'),
    export: table('recovery_locks', 'Whether recovery is locked for your account after you reported a recovery as not yours, and until when.', ['locked_until'],
      (c) => c.db.selectFrom('recovery_locks').select(['locked_until']).where('user_id', '=', c.user.id).execute()),
  },
];

const DEVICE_COLUMNS = ['id', 'push_token', 'platform', 'device_name', 'is_active', 'receives_codes', 'last_used_at', 'created_on', 'updated_on'] as const;

const notifications: RegistryEntry[] = [
  {
    table: 'device_tokens', references: { user_id: PERSON },
    erasure: deleted('Devices, their names and push tokens (encrypted).'),
    export: table('devices', 'Your devices\' push tokens (masked: the first 6 and last 4 characters), platform, name and use.', DEVICE_COLUMNS,
      async (c) => (await c.db.selectFrom('device_tokens').selectAll().where('user_id', '=', c.user.id).orderBy('id').execute())
        .map((d) => ({ ...d, id: d.uuid, push_token: maskToken(c.sensitive.reveal(d.push_token, ENCRYPTED_COLUMNS.devicePushToken.context)) }))),
  },
  {
    table: 'push_messages', references: { user_id: PERSON },
    erasure: deleted('Push notifications sent to the person (their text may name them).'),
    export: table('notifications', 'The push notifications sent (or to be sent) to you: title, text, state and dates.', ['title', 'body', 'status', 'attempts', 'failure_reason', 'created_at', 'sent_at'],
      (c) => c.db.selectFrom('push_messages').select(['title', 'body', 'status', 'attempts', 'failure_reason', 'created_at', 'sent_at']).where('user_id', '=', c.user.id).orderBy('created_at').execute()),
  },
];

/** A signed-in reader's FAQ votes name them as `user:<uuid>` (an anonymous site's, a keyed hash of the network). */
const faq: RegistryEntry[] = [
  {
    table: 'faq_votes', references: { voter: `${PERSON}, as \`user:<uuid>\` (a signed-in reader's vote)` },
    erasure: {
      action: 'delete', why: 'Which help articles the person found helpful: nothing the bank must keep (the articles\' counters keep the vote, anonymous).',
      apply: async (c) => (await sql`DELETE FROM faq_votes WHERE voter = ${`user:${c.user.uuid}`} RETURNING 1`.execute(c.db)).rows.length,
    },
    export: table('faq_votes', 'Your votes on help articles: which article, helpful or not, when.', ['faq_id', 'question', 'vote', 'created_at', 'updated_at'],
      (c) => c.db.selectFrom('faq_votes as v').innerJoin('faqs as f', 'f.id', 'v.faq_id').select(['f.uuid as faq_id', 'f.question', 'v.vote', 'v.created_at', 'v.updated_at'])
        .where('v.voter', '=', `user:${c.user.uuid}`).orderBy('v.created_at').execute()),
  },
];

const AUDIT_COLUMNS = ['audit_id', 'timestamp', 'event_type', 'status', 'channel', 'ip_address', 'user_agent', 'device_fingerprint', 'mfa_method', 'location', 'risk_score', 'suspicious_indicators', 'details'] as const;

/** Keys of `details` that name the operator who acted (another person): not the person's data. */
const OPERATOR_DETAIL_KEYS: ReadonlySet<string> = new Set(['operator_username', 'operator_id', 'changed_by', 'changed_by_id', 'by_id', 'created_by', 'released_by', 'decided_by']);

/** The entry's details without the operator's identity (an operator's act shows as `by: "operator"`). */
function ownDetails(details: unknown): unknown {
  if (details === null || typeof details !== 'object' || Array.isArray(details)) return details;
  const d = details as Record<string, unknown>;
  const operator = Object.keys(d).some((k) => OPERATOR_DETAIL_KEYS.has(k));
  const out = Object.fromEntries(Object.entries(d).filter(([k]) => !OPERATOR_DETAIL_KEYS.has(k)));
  return operator && 'by_id' in d ? { ...out, by: 'operator' } : out;
}

async function readAudit(c: ExportContext): Promise<Record<string, unknown>[]> {
  // UNION, not UNION ALL: an entry a legal hold copied while its month is still live is one event.
  const both = c.db.selectFrom((d) => d.selectFrom('audit_log').selectAll().union(d.selectFrom('audit_log_held').selectAll()).as('a'));
  const rows = await both.select(AUDIT_COLUMNS).where('user_id', '=', c.user.uuid).where('timestamp', '>=', c.auditSince)
    .orderBy('timestamp', 'desc').orderBy('audit_id').limit(c.auditCap).execute();
  return rows.map((r) => ({ ...r, details: ownDetails(r.details) }));
}

const audit: RegistryEntry[] = [
  {
    table: 'audit_log', references: { user_id: PERSON },
    erasure: ERASE.audit,
    export: table('audit_events', 'The security events recorded about you (sign-ins, changes, notifications), newest first, within the export\'s window (see `notes`).', AUDIT_COLUMNS, readAudit),
  },
  { table: 'audit_log_held', references: { user_id: PERSON }, erasure: ERASE.audit,
    export: { within: 'audit_events' } },
  {
    table: 'audit_legal_holds', references: { user_id: PERSON, created_by: 'the administrator who placed the hold', released_by: 'the administrator who released it' },
    erasure: kept('A hold names only the account\'s uuid and exists for an investigation or a court (GDPR article 17(3)(e), legal claims); the entries it keeps are pseudonymised like the rest of the trail.'),
    export: { excluded: 'A legal hold keeps audit entries past their retention for an investigation or a court; telling the person of it may prejudice that (GDPR article 23). The data-protection officer answers for it case by case; the entries it keeps are in `audit_events`.' },
  },
];

const configuration: RegistryEntry[] = ['ldap_config', 'saml_config', 'channel_access', 'risk_policy'].map((t) => ({
  table: t, references: { updated_by: CONFIG_ACTOR }, erasure: kept('Service configuration: no row is about a person; it names only the administrator who last changed it.'), export: { excluded: 'Service configuration: no row is about a person; it names only the administrator who last changed it.' },
}));

const requests: RegistryEntry[] = [
  {
    table: 'gdpr_requests', references: { user_id: PERSON, user_uuid: PERSON },
    erasure: kept('The request log is the bank\'s proof that it answered the person\'s requests (GDPR article 5(2), accountability); it holds the account\'s uuid, kinds, formats and row counts, never the data.'),
    export: table('data_requests', 'Your earlier requests for your data (exports, portability documents): when, in what format, and what was sent.', ['kind', 'format', 'channel', 'encrypted', 'sections', 'requested_at'],
      (c) => c.db.selectFrom('gdpr_requests').select(['kind', 'format', 'channel', 'encrypted', 'sections', 'requested_at']).where('user_uuid', '=', c.user.uuid).orderBy('requested_at').execute()),
  },
];

const consent: RegistryEntry[] = [
  {
    table: 'user_consents', references: { user_id: PERSON },
    erasure: deleted('The current state of each consent: no processing relies on it once the account is gone.'),
    export: table('consents', 'Your current answer for each purpose the bank asks consent for: given or not, the version of the text, since when.', ['purpose', 'title', 'given', 'version', 'changed_at'],
      (c) => rawRows(c, sql`SELECT p.key AS purpose, p.title, u.given, u.version, u.changed_at FROM user_consents u JOIN consent_purposes p ON p.id = u.purpose_id WHERE u.user_id = ${c.user.id} ORDER BY p.key`)),
  },
  {
    table: 'consent_history', references: { user_id: PERSON },
    erasure: ERASE.consentHistory,
    export: table('consent_history', 'Every consent you gave or withdrew: purpose, version and language of the text, its SHA-256, when, on which channel, from which address.',
      ['purpose', 'version', 'language', 'text_hash', 'given', 'at', 'channel', 'client_address', 'user_agent'],
      (c) => rawRows(c, sql`SELECT p.key AS purpose, h.version, h.language, h.text_hash, h.given, h.at, h.channel, h.client_address, h.user_agent FROM consent_history h JOIN consent_purposes p ON p.id = h.purpose_id WHERE h.user_id = ${c.user.id} ORDER BY h.id`)),
  },
  {
    table: 'consent_texts', references: { published_by: 'the administrator who published this version of a consent text' },
    erasure: kept('The texts the bank asks consent with: no row is about a person.'),
    export: { excluded: 'The texts the bank asks consent with: no row is about a person (each consent the person gave names its text\'s version and hash in `consent_history`).' },
  },
];

const profileChanges: RegistryEntry[] = [
  {
    table: 'profile_contact_changes', references: { user_id: PERSON },
    erasure: deleted('Pending and past contact changes: new addresses (encrypted) and masked destinations.'),
    export: table('contact_changes', 'The new email addresses and phone numbers you asked for (decrypted), the masked address the code went to, and what became of each. Never the codes or their hashes.',
      ['kind', 'new_value', 'destination_masked', 'attempts', 'created_at', 'expires_at', 'consumed_at', 'superseded_at', 'delivery_status'],
      async (c) => (await rawRows(c, sql`SELECT kind, new_value, destination_masked, attempts, created_at, expires_at, consumed_at, superseded_at, delivery_status FROM profile_contact_changes WHERE user_id = ${c.user.id} ORDER BY created_at`))
        .map((r) => ({ ...r, new_value: c.sensitive.reveal(String(r.new_value), ENCRYPTED_COLUMNS.contactChangeValue.context) }))),
  },
];

const breaches: RegistryEntry[] = [
  {
    table: 'breach_affected', references: { user_id: PERSON },
    erasure: kept('The breach record must list the accounts affected (GDPR article 33(5), documentation of breaches): the row holds the account id (a tombstone) and a count, nothing else.'),
    export: table('breaches', 'The personal-data breaches the bank found you affected by: when, what was exposed, the likely consequences and the measures taken.',
      ['breach_id', 'occurred_from', 'occurred_to', 'categories', 'description', 'consequences', 'measures', 'contact_point', 'events'],
      (c) => rawRows(c, sql`SELECT b.id AS breach_id, b.occurred_from, b.occurred_to, b.categories, b.description, b.consequences, b.measures, b.contact_point, a.events FROM breach_affected a JOIN breaches b ON b.id = a.breach_id WHERE a.user_id = ${c.user.id} ORDER BY b.occurred_from`)),
  },
  {
    table: 'breach_notices', references: { user_id: PERSON },
    erasure: kept('Proof that the person was notified of a breach (GDPR article 34): channel, state and dates, never the address.'),
    export: table('breach_notices', 'The breach notices sent to you: by which channel, their state and when.', ['breach_id', 'channel', 'state', 'attempts', 'not_before', 'done_at'],
      (c) => rawRows(c, sql`SELECT breach_id, channel, state, attempts, not_before, done_at FROM breach_notices WHERE user_id = ${c.user.id} ORDER BY not_before`)),
  },
  {
    table: 'breaches', references: { recorded_by: 'the operator who recorded the breach', reported_by: 'the operator who recorded its report to the authority', closed_by: 'the operator who closed it' },
    erasure: kept('An incident record naming operators, not the person.'),
    export: { excluded: 'The breach record itself is about an incident, not a person: the breaches that affected the person are in `breaches` (through `breach_affected`).' },
  },
];

const erasures: RegistryEntry[] = [
  {
    table: 'gdpr_erasures',
    references: { user_id: PERSON, user_uuid: PERSON, held_by: 'the operator who placed the legal hold on the request (their uuid)' },
    erasure: kept('The record that the person asked to be forgotten and when it was done (GDPR article 5(2), accountability; the regulator asks for it): ids, dates and row counts, nothing else.'),
    export: table('erasure_requests', 'Your requests to erase your account: when asked, when due, and what became of each.', ['state', 'requested_at', 'erase_after', 'ended_at', 'ended_via'],
      (c) => c.db.selectFrom('gdpr_erasures').select(['state', 'requested_at', 'erase_after', 'ended_at', 'ended_via']).where('user_id', '=', c.user.id).orderBy('requested_at').execute()),
  },
];

const securityAlerts: RegistryEntry[] = [
  {
    table: 'security_alerts',
    references: { user_uuid: PERSON, acknowledged_by: 'the administrator who acknowledged the alert', resolved_by: 'the administrator who resolved it' },
    erasure: {
      action: 'pseudonymise',
      why: 'Security records of the account (fraud and attack detection) the bank keeps with its audit trail and for as long (GDPR article 17(3)(b), a legal obligation; (e), legal claims): kept by uuid, the place (country, city, coordinates, network, distances) removed from it and from its indicators as from the audit trail; the client address was only ever a keyed hash. Resolved alerts are deleted after AUDIT_RETENTION_MONTHS.',
      apply: async (c) => (await sql`UPDATE security_alerts SET location = NULL, indicators = ${placelessIndicators(sql.ref('indicators'))} WHERE user_uuid = ${c.user.uuid}::uuid RETURNING 1`.execute(c.db)).rows.length,
    },
    export: table('security_alerts', 'The security alerts raised about your account: the rule, its severity, when, on which channel, where, the risk score and what made it, and whether the bank has closed it.',
      ['rule', 'severity', 'state', 'created_at', 'channel', 'location', 'score', 'indicators', 'resolved_at'],
      (c) => c.db.selectFrom('security_alerts').select(['rule', 'severity', 'state', 'created_at', 'channel', 'location', 'score', 'indicators', 'resolved_at'])
        .where('user_uuid', '=', c.user.uuid).orderBy('created_at').execute()),
  },
];

const realtime: RegistryEntry[] = [
  {
    table: 'realtime_events', references: { user_id: PERSON },
    erasure: deleted('Notifications already sent to the person\'s open pages and apps (kept REALTIME_RESUME_MINUTES, 10 by default, for a page that reconnects): what they told of is in the sessions, security alerts and recoveries.'),
    export: { excluded: 'Short-lived copies of notifications sent to your open pages and apps, deleted within minutes (REALTIME_RESUME_MINUTES): what they told of (sessions, security alerts, recoveries) is in its own section.' },
  },
];

/** Every table holding a user reference; the completeness test keeps it in step with the schema. */
export const PERSONAL_DATA_REGISTRY: readonly RegistryEntry[] = [...account, ...sessions, ...factors, ...recovery, ...notifications, ...faq, ...audit, ...configuration, ...requests, ...consent, ...profileChanges, ...breaches, ...erasures, ...securityAlerts, ...realtime];

export const isExported = (e: RegistryEntry['export']): e is Exported => 'read' in e;

/** The exported sections, in registry order. */
export const EXPORT_SECTIONS: readonly Exported[] = PERSONAL_DATA_REGISTRY.map((e) => e.export).filter(isExported);
