/** Kysely table types. Keep in step with `migrations/`. */
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface UsersTable {
  id: Generated<number>;
  uuid: Generated<string>;
  username: string;
  /** Plaintext or `fe1:` ciphertext (DB_FIELD_ENCRYPTION); read through UserStore, which reveals it. */
  email: string | null;
  /** HMAC blind index of the email, `<key id>:<hex>`; unique. Null only for rows older than migration 003. */
  email_bidx: string | null;
  /** HMAC blind index of the phone number (migration 009), `<key id>:<hex>`; unique. Null for no phone, or rows not yet indexed. */
  phone_bidx: string | null;
  phone: string | null;
  full_name: string | null;
  /** The language of the user's notifications (migration 022); null: en. */
  language: 'en' | 'pt' | 'fr' | null;
  is_active: Generated<boolean>;
  is_service_account: Generated<boolean>;
  must_change_password: Generated<boolean>;
  last_login_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** When an administrator soft-deleted the account (migration 026); it is then inactive too. */
  deleted_at: Timestamp | null;
  /** The uuid of the administrator who deleted it (null: the CLI, or not deleted). */
  deleted_by: string | null;
  /** ISO date `YYYY-MM-DD` (migration 035), plaintext or `fe1:` ciphertext like `email`; read through src/gdpr/profile. */
  date_of_birth: string | null;
  /** When the erasure job made this row a tombstone (migration 038); null: not erased. */
  erased_at: Generated<Timestamp | null>;
  /** When the holder answered "this was not me" to a sign-in notice (migration 042): no sign-in until a recovery or an administrator lifts it. */
  security_locked_at: Timestamp | null;
}

export interface CredentialsTable {
  id: Generated<number>;
  user_id: number;
  type: string;
  username: string;
  password_hash: string | null;
  password_enc: string | null;
  changed_at: Timestamp;
  expires_at: Timestamp | null;
  is_temporary: Generated<boolean>;
  /** When the expiry warning for this password was claimed (migration 004); cleared by a new password. */
  expiry_warned_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface CredentialHistoryTable {
  id: Generated<number>;
  user_id: number;
  type: string;
  password_hash: string;
  created_at: Timestamp;
}

export interface RolesTable {
  id: Generated<number>;
  name: string;
  description: string;
  /** The roles the service ships with (migration 027): never deleted, their permissions the migrations'. */
  built_in: Generated<boolean>;
}

export interface PermissionsTable {
  id: Generated<number>;
  name: string;
  description: string;
}

export interface RolePermissionsTable {
  role_id: number;
  permission_id: number;
}

export interface UserRolesTable {
  user_id: number;
  role_id: number;
}

export interface SessionsTable {
  session_id: string;
  user_id: number;
  created_at: Timestamp;
  last_activity: Timestamp;
  expires_at: Timestamp;
  device_fingerprint: string;
  ip_address: string;
  user_agent: string;
  is_active: boolean;
  mfa_completed: boolean;
  channel: string;
  /** The channel policy's inactivity timeout when the session was opened; null: SESSION_INACTIVITY_MINUTES. */
  idle_timeout_sec: number | null;
  aes_key: string | null;
  aes_key_expires_at: Timestamp | null;
  ended_at: Timestamp | null;
  end_reason: string | null;
  /** Last second-factor verification on this session (sign-in or step-up), migration 005. */
  mfa_verified_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface SessionHistoryTable {
  id: Generated<number>;
  session_id: string;
  user_id: number;
  event: string;
  reason: string | null;
  at: Timestamp;
}

export interface TokenDenylistTable {
  jti: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  reason: string;
}

export interface RefreshFamiliesTable {
  family_id: string;
  session_id: string;
  user_id: number;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  revoke_reason: string | null;
}

export interface RefreshTokensTable {
  jti: string;
  family_id: string;
  issued_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface LoginAttemptsTable {
  subject_key: string;
  failed_count: number;
  window_started_at: Timestamp;
  last_failed_at: Timestamp;
  locked_until: Timestamp | null;
  /** The failure window this counter counts in (a channel's lockout length); null: ACCOUNT_LOCKOUT_MINUTES. */
  window_minutes: number | null;
  /** Reserved attempts still comparing (counted in failed_count until they end). */
  pending: number;
}

export interface RateLimitsTable {
  key: string;
  window_start: Timestamp;
  /** When the window ends: rows past it are dropped (windows differ in length per route group). */
  window_end: Timestamp;
  count: number;
}

export interface PasswordRestrictionsTable {
  account_class: string;
  min_length: number;
  max_bytes: number;
  require_upper: boolean;
  require_lower: boolean;
  require_digit: boolean;
  require_symbol: boolean;
  history_count: number;
  reuse_months: number;
  expiry_days: number | null;
  warn_days: number;
  /** PIN rules (migration 009; class `pin`): null or false on the password classes. */
  max_length: number | null;
  digits_only: Generated<boolean>;
  no_repeated_digits: Generated<boolean>;
  no_sequential_digits: Generated<boolean>;
  /** A run of this many digits of the user's phone number is refused; null: off. */
  phone_digits_run: number | null;
}

export interface AuditLogTable {
  audit_id: Generated<string>;
  timestamp: Timestamp;
  event_type: string;
  user_id: string | null;
  username: string | null;
  status: string;
  ip_address: string | null;
  device_fingerprint: string | null;
  user_agent: string | null;
  channel: string | null;
  mfa_method: string | null;
  location: Json<Record<string, unknown>> | null;
  security_events: Json<unknown[]>;
  risk_score: number | null;
  suspicious_indicators: Json<unknown[]>;
  details: Json<Record<string, unknown>>;
}

/** A legal hold (migration 029): the audit entries of a period, or of one user in it, outlive the retention period until released. */
export interface AuditLegalHoldsTable {
  id: Generated<string>;
  reason: string;
  period_from: Timestamp;
  period_to: Timestamp;
  /** Null: the whole period is held (its months are not dropped); else only this user's entries are kept. */
  user_id: string | null;
  created_by: string;
  created_at: Timestamp;
  released_at: Timestamp | null;
  released_by: string | null;
}

export interface JwtSigningKeysTable {
  version: Generated<number>;
  kid: string;
  secret_enc: string;
  created_at: Timestamp;
}

export interface AccessPoliciesTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  name: string;
  channel: string;
  role: string | null;
  enabled: Generated<boolean>;
  /** jsonb: written as a JSON string, read back parsed (PostgreSQL) or as text (see PolicyStore). */
  rules: Json<unknown>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Who may use a channel, where an administrator set it (migration 025; src/access/channels.ts). */
export interface ChannelAccessTable {
  channel: string;
  /** jsonb array of role names; null: anyone. */
  allowed_roles: Json<string[] | null> | null;
  updated_at: Timestamp;
  updated_by: string | null;
}

export interface DeviceBindingsTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  user_id: number;
  fingerprint_hash: string;
  label: string;
  channel: string;
  status: 'pending' | 'approved' | 'revoked';
  requested_at: Timestamp;
  decided_at: Timestamp | null;
  decided_by: string | null;
}

export interface TransportReplayTable {
  digest: Buffer;
  seen_at: Timestamp;
}

export interface TransportKeysTable {
  version: Generated<number>;
  key_id: string;
  private_pem_enc: string;
  public_pem: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export type MfaMethod = 'totp' | 'email' | 'sms' | 'push' | 'passkey' | 'push_approval';
export type OtpMethod = 'email' | 'sms' | 'push';

export interface MfaFactorsTable {
  user_id: number;
  method: MfaMethod;
  status: 'pending' | 'active';
  /** TOTP: the base32 secret, always encrypted (ENCRYPTED_COLUMNS.totpSecret). */
  secret_enc: string | null;
  algorithm: string | null;
  /** TOTP: the last time step accepted (RFC 6238 5.2: a code is accepted once). */
  last_used_step: ColumnType<string | null, number | string | null | undefined, number | string | null>;
  created_at: Timestamp;
  confirmed_at: Timestamp | null;
}

export interface MfaBackupCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  created_at: Timestamp;
  used_at: Timestamp | null;
}

export interface MfaAttemptsTable {
  user_id: number;
  factor: string;
  failed_count: number;
  window_started_at: Timestamp;
  locked_until: Timestamp | null;
}

export interface MfaOtpCodesTable {
  id: Generated<string>;
  /** Null: a decoy's account recovery code (migration 033), for no account; it matches nothing and is never delivered. */
  user_id: number | null;
  /** `signin:<2fa jti>`, `stepup:<session id>` or `enroll:<user id>:<method>`. */
  challenge: string;
  purpose: 'signin' | 'stepup' | 'enroll' | 'recovery';
  method: OtpMethod;
  code_hash: string;
  destination_masked: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  attempts: Generated<number>;
  consumed_at: Timestamp | null;
  superseded_at: Timestamp | null;
  delivery_status: 'queued' | 'sent' | 'failed';
  delivery_ref: string | null;
  delivery_error: string | null;
  delivered_at: Timestamp | null;
  /** Push enrolment: the device the code went to, bound when the code is entered (migration 023). */
  device_token_id: number | null;
}

export interface SecurityQuestionsTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  text: string;
  is_active: Generated<boolean>;
  created_at: Timestamp;
  created_by: string | null;
}

export interface UserSecurityAnswersTable {
  user_id: number;
  question_id: number;
  answer_hash: string;
  created_at: Timestamp;
}

export interface SecurityQuestionChallengesTable {
  id: Generated<string>;
  user_id: number;
  question_ids: Json<number[]>;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
}

export type MfaResetStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'completed';

export interface MfaResetRequestsTable {
  id: Generated<string>;
  user_id: number;
  status: MfaResetStatus;
  reason: string;
  proof: string;
  requested_at: Timestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
  /** uuid of the administrator who approved or rejected. */
  decided_by: string | null;
  decision_note: string | null;
  completed_at: Timestamp | null;
}

export type RecoveryState = 'initiated' | 'verifying' | 'verified' | 'waiting' | 'completed' | 'cancelled' | 'expired' | 'rejected';

/** Account recovery workflows (migration 031); found by the keyed hash of the `recovery_id`. */
export interface RecoveryWorkflowsTable {
  id: Generated<string>;
  handle_hash: string;
  kind: 'password' | 'pin' | 'mfa' | 'device';
  state: RecoveryState;
  /** Null: a decoy for an identifier that names no account. */
  user_id: number | null;
  /** Never completes (unknown, disabled or unusable account, or a second initiate). */
  decoy: boolean;
  /** Keyed hash of the account (or the unknown identifier): one active workflow per account and kind. */
  account_hash: string;
  /** Whether this workflow is the account's one active workflow of its kind (the unique index). */
  holds_slot: boolean;
  /** The sign-in lockout's counter key of the account or identifier (`u:<id>` or `n:<hash>`). */
  login_key: string;
  /** The identifier as given, masked (the audit trail of a decoy). */
  subject_masked: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  verified_at: Timestamp | null;
  completed_at: Timestamp | null;
  ended_at: Timestamp | null;
  /** What the person reads to a branch operator (migration 032); null for workflows started before it. */
  reference: string | null;
  /** The operator who started it for a customer at the desk (migration 032): never its approver. */
  initiated_by: number | null;
  /** A verified `mfa` or `device` workflow takes effect then, unless cancelled (migration 032). */
  waiting_until: Timestamp | null;
  /** The cooling-off chosen for the account (customers' or staff's setting). */
  cooling_off_hours: number | null;
  /** The alternatives of its kind when it started, as the setting writes them (migration 033); null: older, judged by the configuration. */
  alternatives: string | null;
}

/** A new email or phone waiting for the code sent to it (migration 035); `new_value` encrypted like `users.email`. */
export interface ProfileContactChangesTable {
  id: string;
  user_id: number;
  kind: 'email' | 'phone';
  new_value: string;
  destination_masked: string;
  /** Keyed hash of `code:id`; the code itself is never stored. */
  code_hash: string;
  attempts: Generated<number>;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
  superseded_at: Timestamp | null;
  delivery_status: 'queued' | 'sent' | 'failed';
}

/** A "this was not me" token of a recovery notice (migration 032): only its keyed hash; single use. */
export interface RecoveryCancelTokensTable {
  token_hash: string;
  workflow_id: string;
  created_at: Timestamp;
  used_at: Timestamp | null;
}

/** Recovery locked for an account after its owner reported a workflow as not theirs (migration 032). */
export interface RecoveryLocksTable {
  user_id: number;
  locked_until: Timestamp;
}

/** One proof of a recovery workflow (migration 031). */
export interface RecoveryProofsTable {
  workflow_id: string;
  proof: string;
  attempts: Generated<number>;
  passed_at: Timestamp | null;
  sends: Generated<number>;
  last_sent_at: Timestamp | null;
  code_expires_at: Timestamp | null;
  destination_masked: string | null;
  /** Security questions: the internal ids of the questions asked, comma-separated. */
  question_ids: string | null;
}

/** The LDAP configuration singleton (migration 013). */
export interface LdapConfigTable {
  singleton_key: 'SINGLETON';
  uri: string;
  bind_dn: string;
  /** Always encrypted (ENCRYPTED_COLUMNS.ldapBindPassword); never returned. */
  bind_password_enc: string;
  base_dn: string;
  user_filter: string;
  attr_mail: string;
  attr_name: string;
  group_member_attr: string;
  start_tls: boolean;
  ca_cert: string | null;
  /** Directory group (DN or CN) -> role names. */
  group_roles: ColumnType<Record<string, string[]>, string, string>;
  /** Where groups named by their short name live (migration 025); null: short names map nothing. */
  groups_base_dn: string | null;
  updated_at: Timestamp;
  updated_by: string | null;
}

/** The SAML configuration singleton (migration 014; fields in src/platform/config-saml.ts). */
export interface SamlConfigTable {
  singleton_key: 'SINGLETON';
  saml_enabled: boolean;
  sp_entity_id: string;
  acs_url: string;
  slo_url: string | null;
  idp_entity_id: string;
  idp_sso_url: string;
  idp_slo_url: string | null;
  /** The IdP's signing certificates, base64 DER, one per line. */
  idp_x509cert: string;
  nameid_format: string;
  allowed_relay_origins: ColumnType<string[], string, string>;
  allow_idp_initiated: boolean;
  clock_skew_sec: number;
  attribute_map: ColumnType<Record<string, string[]>, string, string>;
  group_roles: ColumnType<Record<string, string[]>, string, string>;
  updated_at: Timestamp;
  updated_by: string | null;
}

/** The AuthnRequests sent (migration 016), until answered or expired. */
export interface SamlRequestsTable {
  id: string;
  relay_url: string | null;
  channel: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** SHA-256 of the browser-binding cookie's nonce (migration 019); null for a request answered as JSON. */
  browser_binding: Buffer | null;
}

/** Accepted SAML assertions, until they expire (migration 017): the replay cache. */
export interface SamlAssertionsTable {
  issuer: string;
  assertion_id: string;
  expires_at: Timestamp;
}

/** One-time codes of the SAML browser flow, by SHA-256 (migration 017). */
export interface SamlCodesTable {
  code_hash: Buffer;
  user_id: number;
  channel: string;
  issuer: string;
  name_id: string;
  session_index: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** The IdP session a session came from (migration 017), for single logout. */
export interface SamlSessionsTable {
  session_id: string;
  user_id: number;
  issuer: string;
  name_id: string;
  session_index: string | null;
  created_at: Timestamp;
}

/** The SAML SP's signing keys (migration 017); `private_key_enc` encrypted (ENCRYPTED_COLUMNS.samlSpKey). */
export interface SamlSpKeysTable {
  key_id: string;
  /** Order of making (newest signs): clocks may tie. */
  seq: Generated<number>;
  private_key_enc: string;
  certificate: string;
  created_at: Timestamp;
  retired_at: Timestamp | null;
}

/** Bank branches (migration 015); `code` unique without regard to case. */
export interface EntitiesTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  code: string;
  name: string;
  is_active: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A user's branches (migration 015). */
export interface UserEntitiesTable {
  user_id: number;
  entity_id: number;
  created_at: Timestamp;
}

/** SPEC UserIdentityProvider (migration 013). */
export interface UserIdentityProvidersTable {
  id: Generated<number>;
  user_id: number;
  idp_type: 'LDAP' | 'SAML';
  idp_subject: string;
  idp_issuer: Generated<string>;
  active: Generated<boolean>;
  created_at: Timestamp;
}

/** SPEC FAQ (migration 018); `search` is generated from the question, keywords and answer. */
export interface FaqsTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  question: string;
  answer: string;
  category: string;
  keywords: string;
  order: number;
  is_active: Generated<boolean>;
  helpful_count: Generated<number>;
  unhelpful_count: Generated<number>;
  created_on: Timestamp;
  updated_on: Timestamp;
}

/** One vote per voter per article (migration 018). */
export interface FaqVotesTable {
  faq_id: number;
  voter: string;
  vote: 'helpful' | 'unhelpful';
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** SPEC Device token (migration 020); `push_token` encrypted (ENCRYPTED_COLUMNS.devicePushToken), unique by `push_token_bidx`. */
export interface DeviceTokensTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  user_id: number;
  push_token: string;
  push_token_bidx: string;
  platform: 'mobile' | 'web';
  device_name: string | null;
  is_active: Generated<boolean>;
  /** The device one-time codes by push go to (at most one per user; migration 023). */
  receives_codes: Generated<boolean>;
  last_used_at: Timestamp | null;
  created_on: Timestamp;
  updated_on: Timestamp;
}

/** The push outbox (migration 021). */
export interface PushMessagesTable {
  id: Generated<string>;
  user_id: number;
  device_token_id: number | null;
  title: string;
  body: string;
  data: Record<string, string> | null;
  image_url: string | null;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  lease_until: Timestamp | null;
  provider_message_id: string | null;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  sent_at: Timestamp | null;
}

export interface NotificationTemplatesTable {
  id: Generated<number>;
  /** The public id (routes and answers); `id` is internal. */
  uuid: Generated<string>;
  channel: 'push';
  language: 'en' | 'pt' | 'fr';
  name: string;
  subject: string;
  message: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Consent purposes (migration 034): what the bank asks consent for; `key` is their name in the API. */
export interface ConsentPurposesTable {
  id: Generated<number>;
  key: string;
  title: string;
  /** Needed to use the service (terms of service): it cannot be withdrawn, only agreed to. */
  required: boolean;
  /** The version people are asked to agree to now. */
  current_version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One version of a purpose's text in one language (migration 034); never changed once published. */
export interface ConsentTextsTable {
  purpose_id: number;
  version: number;
  language: 'en' | 'pt' | 'fr';
  body: string;
  /** SHA-256 (hex) of `body`'s UTF-8 bytes. */
  sha256: string;
  published_at: Timestamp;
  /** The administrator's uuid; null for the migration's seeded texts. */
  published_by: string | null;
}

/** Every consent given or withdrawn (migration 034): appended, never changed. */
export interface ConsentHistoryTable {
  id: Generated<number>;
  user_id: number;
  purpose_id: number;
  version: number;
  language: 'en' | 'pt' | 'fr';
  /** The SHA-256 of the text agreed to (or withdrawn from). */
  text_hash: string;
  given: boolean;
  at: Timestamp;
  channel: string | null;
  /** The client's address, kept as the audit trail keeps it. */
  client_address: string | null;
  user_agent: string | null;
}

/** A person's current answer per purpose (migration 034): a copy of the history row `history_id`, their last. */
export interface UserConsentsTable {
  user_id: number;
  purpose_id: number;
  history_id: number;
  given: boolean;
  version: number;
  changed_at: Timestamp;
}

/** Data-subject rights (issue 28): the request log (migration 036); what was sent, never the data. */
export interface GdprRequestsTable {
  id: Generated<string>;
  /** Null once the account is gone; `user_uuid` stays. */
  user_id: number | null;
  user_uuid: string;
  kind: 'export' | 'portability' | 'erasure';
  /** `json`, `csv` or `scim`. */
  format: string;
  channel: string | null;
  /** Whether the answer left under the session's transport key. */
  encrypted: boolean;
  /** `{section: row count}`. */
  sections: Json<Record<string, number>>;
  bytes: number;
  requested_at: Timestamp;
}

/** A personal-data breach (migration 037): the record a supervisory authority asks for. */
export interface BreachesTable {
  id: Generated<string>;
  occurred_from: Timestamp;
  occurred_to: Timestamp;
  /** When the bank became aware of it: the 72-hour deadline runs from here. */
  aware_at: Timestamp;
  deadline_at: Timestamp;
  /** The categories of personal data exposed (src/gdpr/breaches/categories.ts). */
  categories: Json<string[]>;
  /** How the affected accounts were found in the audit trail (src/gdpr/breaches/scope.ts). */
  scope: Json<Record<string, unknown>>;
  description: string;
  consequences: string;
  measures: string;
  contact_point: string;
  notify_subjects: boolean;
  affected_count: number;
  /** The audit entries that matched (approximate number of records concerned); bigint, read as text. */
  records_count: ColumnType<string, number | bigint | string, number | bigint | string>;
  /** The administrator's uuid. */
  recorded_by: string;
  recorded_at: Timestamp;
  reported_at: Timestamp | null;
  reported_by: string | null;
  authority_reference: string | null;
  closed_at: Timestamp | null;
  closed_by: string | null;
  closing_note: string | null;
}

/** An account a breach affected (migration 037), with how many of its audit entries matched. */
export interface BreachAffectedTable {
  breach_id: string;
  user_id: number;
  events: number;
}

/** One breach notice to one affected account by one channel (migration 037). */
export interface BreachNoticesTable {
  id: Generated<string>;
  breach_id: string;
  user_id: number;
  channel: 'email' | 'sms';
  state: 'pending' | 'sending' | 'sent' | 'failed' | 'no_contact';
  attempts: Generated<number>;
  not_before: Timestamp;
  claimed_at: Timestamp | null;
  done_at: Timestamp | null;
  reason: string | null;
}

/** A request to erase an account (migration 038): pending through its grace period, then cancelled or erased. */
export interface GdprErasuresTable {
  id: Generated<string>;
  user_id: number;
  user_uuid: string;
  state: 'pending' | 'cancelled' | 'erased';
  requested_at: Timestamp;
  erase_after: Timestamp;
  /** Keyed hash of the notices' one-click cancel token (null once the request ended). */
  cancel_token_hash: string | null;
  /** A legal hold: the job leaves the request until released. */
  held_at: Timestamp | null;
  held_by: string | null;
  hold_reason: string | null;
  ended_at: Timestamp | null;
  /** How it ended: `token`, `credentials` (cancelled), `job` (erased) or `ledger` (erased again after a restore: `strongroom gdpr ledger reapply`). */
  ended_via: string | null;
  /** Rows erased per table (the job's), no data. */
  counts: Json<Record<string, number>> | null;
}

/** A security alert (migration 041): recorded once per dedupe key, then acknowledged and resolved. */
export interface SecurityAlertsTable {
  id: string;
  dedupe_key: string;
  rule: string;
  severity: 'low' | 'medium' | 'high' | 'critical';
  /** The account's public uuid, as the audit trail names it. */
  user_uuid: string | null;
  audit_id: string | null;
  channel: string | null;
  ip_hash: string | null;
  location: Json<Record<string, unknown>> | null;
  score: number | null;
  indicators: Json<unknown[]>;
  state: 'open' | 'acknowledged' | 'resolved';
  acknowledged_at: Timestamp | null;
  acknowledged_by: string | null;
  acknowledgement_note: string | null;
  resolved_at: Timestamp | null;
  resolved_by: string | null;
  resolution_note: string | null;
  created_at: Timestamp;
}

/** One delivery of an alert to the security team by one channel (migration 041): the outbox. */
export interface SecurityAlertDeliveriesTable {
  id: Generated<string>;
  alert_id: string;
  channel: 'email' | 'webhook';
  state: 'pending' | 'sent' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  /** The claim of the node sending it now (null: unclaimed); only that claim may settle it. */
  claim_token: string | null;
  lease_until: Timestamp | null;
  last_error: string | null;
  sent_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A notice to an account holder about a suspicious sign-in (migration 042), with its "this was not me" token's keyed hash. */
/** A WebAuthn credential (src/passkeys, migration 045): the public key and what the authenticator last reported. */
export interface PasskeysTable {
  id: Generated<string>;
  user_id: number;
  /** The credential id, base64url. */
  credential_id: string;
  /** The COSE public key, base64url: public, never exported or shown. */
  public_key: string;
  sign_count: ColumnType<string, number | string, number | string>;
  transports: string[];
  device_type: 'singleDevice' | 'multiDevice';
  backed_up: boolean;
  aaguid: string;
  /** What the owner calls it (1 to 64 characters). */
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  /** When its signature counter went back (a cloned authenticator): refused from then on; null: usable. */
  suspended_at: Timestamp | null;
}

export type WebAuthnPurpose = 'register' | 'signin' | 'second_factor' | 'step_up';

/** A WebAuthn challenge (migration 045): single use (`used_at`), expiring; `user_id` null for a passwordless sign-in. */
export interface WebAuthnChallengesTable {
  id: Generated<string>;
  user_id: number | null;
  purpose: WebAuthnPurpose;
  /** base64url, as the options carried it. */
  challenge: string;
  /** `second_factor`: the jti of the 2FA token it was asked for. */
  two_factor_jti: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** A user's push-approval key (src/push-approval, migration 046): one per user, bound to one mobile device token. */
export interface PushApprovalKeysTable {
  id: Generated<number>;
  user_id: number;
  device_token_id: number;
  /** The P-256 public key, SPKI DER in base64url: public. Null only before a first enrolment (started without a key) is confirmed. */
  public_key: string | null;
  /** A new key (and its device) waiting for its enrolment to be confirmed; the working key stays until then. */
  pending_public_key: string | null;
  pending_device_token_id: number | null;
  /** The enrolment challenge the phone signs (base64url); null once confirmed. */
  enrol_challenge: string | null;
  enrol_expires_at: Timestamp | null;
  /** When the phone proved the key; null: not enrolled yet. */
  confirmed_at: Timestamp | null;
  /** Until when a fraud report paused push approval for the account; null: not paused. */
  paused_until: Timestamp | null;
  created_at: Timestamp;
  /** jsonb: what the key attestation proved of the working key at enrolment (src/push-approval/attestation; never Apple's receipt); null: none was given. */
  attestation: Json<Record<string, unknown>> | null;
}

/** `expired`: not answered within its 5 minutes (set by the expiry job, migration 047). */
export type PushApprovalState = 'pending' | 'approved' | 'denied' | 'expired';
export type PushApprovalDenyReason = 'denied' | 'wrong_number' | 'fraud_reported' | 'superseded' | 'factor_removed';
/** What a request asks the phone to approve: a sign-in, or a signed-in session's step-up (migration 047). */
export type PushApprovalPurpose = 'sign_in' | 'step_up';

/** A sign-in or step-up waiting for the phone's answer (migrations 046, 047): answered at most once. */
export interface PushApprovalRequestsTable {
  id: Generated<string>;
  user_id: number;
  purpose: Generated<PushApprovalPurpose>;
  /** `sign_in`: the jti of the 2FA token it was asked for; null for a step-up. */
  two_factor_jti: string | null;
  /** `step_up`: the session that asked (only it may complete the request); null for a sign-in. */
  session_id: string | null;
  /** When the approval was used (the sign-in finished, or the step-up recorded): once. */
  completed_at: Timestamp | null;
  /** The number the sign-in page shows (10-99). */
  number: number;
  /** The number and two other two-digit numbers, shuffled: what the phone offers. */
  choices: number[];
  state: PushApprovalState;
  deny_reason: PushApprovalDenyReason | null;
  country: string | null;
  city: string | null;
  browser: string | null;
  system: string | null;
  channel: string;
  requested_at: Timestamp;
  expires_at: Timestamp;
  answered_at: Timestamp | null;
}

/** A client network blocked for credential stuffing (src/risk/decisions): its keyed hash, never an address. */
export interface RiskAddressBlocksTable {
  network_hash: string;
  blocked_until: Timestamp;
  created_at: Timestamp;
}

/** The risk response policy as administrators saved it (src/risk/decisions): one row, or none (the RISK_* settings). */
export interface RiskPolicyTable {
  singleton_key: 'SINGLETON';
  /** A RiskPolicy (src/risk/decisions/policy.ts) as JSON. */
  policy: Json<unknown>;
  updated_at: Timestamp;
  updated_by: string | null;
}

export interface RiskNoticesTable {
  id: string;
  dedupe_key: string;
  user_id: number;
  /** How the sign-in ended (migration 043 added 'refused': a right password the response policy refused). */
  outcome: 'signed_in' | 'second_factor_required' | 'refused';
  occurred_at: Timestamp;
  country: string | null;
  city: string | null;
  /** What the User-Agent named (src/risk/responses/device.ts), never the User-Agent itself. */
  browser: string | null;
  system: string | null;
  channel: string;
  audit_id: string | null;
  score: number;
  /** Null when RISK_NOT_ME_URL is unset (the notice carries no link). */
  token_hash: string | null;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** When a node claimed it for sending (null: not yet). */
  sent_at: Timestamp | null;
  created_at: Timestamp;
}

/** An event of the real-time channel (migration 044), kept REALTIME_RESUME_MINUTES for resumes. */
export interface RealtimeEventsTable {
  /** bigint: a string from the driver. */
  id: ColumnType<string, never, never>;
  user_id: number;
  /** Only this session's sockets receive it; null: every socket of the user. */
  session_id: string | null;
  type: string;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface Database {
  users: UsersTable;
  credentials: CredentialsTable;
  credential_history: CredentialHistoryTable;
  roles: RolesTable;
  permissions: PermissionsTable;
  role_permissions: RolePermissionsTable;
  user_roles: UserRolesTable;
  sessions: SessionsTable;
  session_history: SessionHistoryTable;
  token_denylist: TokenDenylistTable;
  refresh_families: RefreshFamiliesTable;
  refresh_tokens: RefreshTokensTable;
  login_attempts: LoginAttemptsTable;
  rate_limits: RateLimitsTable;
  password_restrictions: PasswordRestrictionsTable;
  audit_log: AuditLogTable;
  /** Entries of a dropped month kept under a legal hold (migration 029). */
  audit_log_held: AuditLogTable;
  audit_legal_holds: AuditLegalHoldsTable;
  jwt_signing_keys: JwtSigningKeysTable;
  transport_keys: TransportKeysTable;
  transport_replay: TransportReplayTable;
  access_policies: AccessPoliciesTable;
  channel_access: ChannelAccessTable;
  device_bindings: DeviceBindingsTable;
  mfa_factors: MfaFactorsTable;
  mfa_backup_codes: MfaBackupCodesTable;
  mfa_attempts: MfaAttemptsTable;
  mfa_otp_codes: MfaOtpCodesTable;
  notification_templates: NotificationTemplatesTable;
  security_questions: SecurityQuestionsTable;
  user_security_answers: UserSecurityAnswersTable;
  security_question_challenges: SecurityQuestionChallengesTable;
  mfa_reset_requests: MfaResetRequestsTable;
  recovery_workflows: RecoveryWorkflowsTable;
  recovery_proofs: RecoveryProofsTable;
  recovery_cancel_tokens: RecoveryCancelTokensTable;
  recovery_locks: RecoveryLocksTable;
  profile_contact_changes: ProfileContactChangesTable;
  ldap_config: LdapConfigTable;
  saml_config: SamlConfigTable;
  entities: EntitiesTable;
  saml_requests: SamlRequestsTable;
  saml_assertions: SamlAssertionsTable;
  saml_codes: SamlCodesTable;
  saml_sessions: SamlSessionsTable;
  saml_sp_keys: SamlSpKeysTable;
  user_entities: UserEntitiesTable;
  user_identity_providers: UserIdentityProvidersTable;
  faqs: FaqsTable;
  faq_votes: FaqVotesTable;
  device_tokens: DeviceTokensTable;
  push_messages: PushMessagesTable;
  gdpr_requests: GdprRequestsTable;
  consent_purposes: ConsentPurposesTable;
  consent_texts: ConsentTextsTable;
  consent_history: ConsentHistoryTable;
  user_consents: UserConsentsTable;
  breaches: BreachesTable;
  breach_affected: BreachAffectedTable;
  breach_notices: BreachNoticesTable;
  gdpr_erasures: GdprErasuresTable;
  security_alerts: SecurityAlertsTable;
  security_alert_deliveries: SecurityAlertDeliveriesTable;
  risk_notices: RiskNoticesTable;
  risk_policy: RiskPolicyTable;
  risk_address_blocks: RiskAddressBlocksTable;
  realtime_events: RealtimeEventsTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebAuthnChallengesTable;
  push_approval_keys: PushApprovalKeysTable;
  push_approval_requests: PushApprovalRequestsTable;
}
