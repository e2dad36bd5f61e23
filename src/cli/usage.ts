/** The operator CLI's usage text and exit codes (BSD sysexits.h, so scripts can tell failures apart). */

/** Where a command writes its results for people (stdout). */
export type Print = (line?: string) => void;

export const EXIT = {
  OK: 0,
  /** A domain error: password rules, user exists, unknown role, no such user. */
  FAILURE: 1,
  /** EX_USAGE: unknown command, bad or missing flags. */
  USAGE: 64,
  /** EX_UNAVAILABLE: the database cannot be reached. */
  UNAVAILABLE: 69,
  /** EX_SOFTWARE: an unexpected internal error. */
  SOFTWARE: 70,
  /** EX_TEMPFAIL: the embedded database is in use by another process (try again once it stops). */
  TEMPFAIL: 75,
  /** EX_CONFIG: the environment is invalid. */
  CONFIG: 78,
} as const;

export class UsageError extends Error {
  constructor(message: string, readonly topic: HelpTopic = 'main') {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command ran and refused or could not finish: its message says why and what to do (exit 1). */
export class CommandFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailed';
  }
}

const ENVIRONMENT = `Environment:
  DATABASE_URL          PostgreSQL connection string. Unset: the embedded PGlite database
                        under DATA_DIR. PGlite admits one process at a time: stop the
                        server (npm start) before running a command, or the command exits 75.
  DATA_DIR              Where PGlite and the generated development secrets live (default ./data).
  NODE_ENV              development (default), test or production. Production requires
                        DATABASE_URL, FIELD_ENCRYPTION_KEY, IP_HASH_KEY and TRANSPORT_PRIVATE_KEY_PATH
                        (or TRANSPORT_PRIVATE_KEY).
  FIELD_ENCRYPTION_KEY  Master key (32 bytes, base64 or hex). Must be the server's own: it wraps
                        the JWT keyring and the encrypted password copies.
  FIELD_ENCRYPTION_KEYS_PREVIOUS
                        Older master keys, comma-separated, still read during a rotation
                        (rotate-field-key).
  DB_FIELD_ENCRYPTION   1 (default): personal data and session keys are stored encrypted.
  IP_HASH_KEY           Key of the client-IP HMAC (32 bytes, base64 or hex).
  BCRYPT_COST           bcrypt cost for new passwords (default 12; lower only outside production).
  STRONGROOM_ADMIN_PASSWORD
                        create-admin: the administrator's password (or use --password-stdin).
  BREACHED_PASSWORDS_FILTER
                        passwords: the filter file written and checked by default.
  Every other variable of the server (README, "Configuration") is read and validated too.`;

const COMMANDS = `Commands:
  migrate                       Run the database migrations; prints which ran.
  create-admin --username NAME [--email EMAIL] [--password-stdin]
                                Create an administrator (role admin).
  rotate-keys                   Rotate the JWT signing keyring now.
  rotate-field-key [--batch-size N] [--check]     (alias: reencrypt)
                                Re-encrypt every encrypted column under FIELD_ENCRYPTION_KEY.
  rotate-transport-key [--revoke-previous]
                                Make a new RSA transport key pair current now.
  rotate-saml-sp-key            Make a new SAML service provider signing key current now.
  users create --username NAME --roles ROLE[,ROLE...] [--email EMAIL] [--phone +E164]
               [--full-name NAME] [--service-account]
                                Create a user with a temporary password, printed once.
  users unlock --username NAME  Clear the failed sign-in lockout of a user.
  users list [--search TEXT] [--role ROLE] [--entity CODE] [--status STATUS] [--limit N] [--cursor C]
  users show|disable|enable|delete|sessions (--username NAME | --id UUID)
  users update (--username NAME | --id UUID) [--full-name N] [--email E] [--phone P] [--language L]
               [--roles R[,R...]] [--entities CODE[,CODE...]] [--clear FIELD[,FIELD...]]
  users end-sessions (--username NAME | --id UUID) [--session ID]
                                Find, read, change, disable, enable, delete (soft) users and end
                                their sessions (strongroom help users).
  faq seed                      Load the FAQ starter set (the articles not there yet).
  roles list                    The roles: built in or not, holders, how many permissions.
  roles permissions             Every permission, what it allows, the roles that grant it.
  roles show NAME               One role and each permission it grants.
  roles create NAME --description TEXT [--permissions P[,P...]]
  roles update NAME [--description TEXT] [--permissions P[,P...] | --add P[,P...] --remove P[,P...]]
  roles delete NAME             Role administration (built-in roles keep their permissions).
  audit partitions              The audit log's monthly partitions and the retention cut-off.
  audit prune [--dry-run]       Drop the months past AUDIT_RETENTION_MONTHS now (not those held).
  audit hold --reason TEXT --from DATE --to DATE [--user UUID]
  audit holds | audit release ID
                                Legal holds: keep a period's audit entries (or one user's) past
                                the retention period; list them; release one.
  bench seed --database NAME [--users N] [--sessions N] [--active-sessions N] [--audit N] [--months N]
                                Fill a benchmark database with synthetic users, sessions and
                                audit entries (PostgreSQL; never a database people use).
  gdpr ledger export [--since DATE]
                                The erasure ledger (erased accounts' uuids and dates), as JSON
                                lines: keep it apart from the backups.
  gdpr ledger reapply --file PATH|-
                                Erase again, on a database restored from a backup, the accounts
                                the ledger lists.
  passwords import-breached --file PATH [--min-count N] [--output PATH] [--false-positive-rate R]
                                Build the breached-password filter from a Pwned Passwords file.
  passwords check-breached [--filter PATH]
                                Is the password on standard input in the filter? (0 no, 1 yes)
  help [COMMAND]                This text, or the help of one command.`;

const EXIT_CODES = `Exit codes: 0 done, 1 refused or unfinished (the reason is printed), 64 usage error,
  69 database unreachable, 70 internal error, 75 embedded database in use, 78 invalid configuration.`;

const TOPICS = {
  main: `Usage: strongroom <command> [options]      (from a checkout: npm run cli -- <command> [options])

Operator commands of Strongroom, the authentication service. Each runs against the database the
server uses, chosen by the same environment variables.

${COMMANDS}

${ENVIRONMENT}

${EXIT_CODES}
`,
  migrate: `Usage: strongroom migrate

Runs every pending database migration and prints which ran, or that the database is up to date.
Safe to run again and on every deployment; the server also runs them at start.
`,
  'create-admin': `Usage: strongroom create-admin --username NAME [--email EMAIL] [--password-stdin]

Creates an administrator (role admin). The password comes from, in this order:
  --password-stdin              read from standard input (one line; hidden prompt on a terminal)
  STRONGROOM_ADMIN_PASSWORD     the environment variable
  neither                       a temporary password is generated and printed once; it must be
                                changed at first sign-in.
Passwords are never accepted as arguments: those end up in process lists and shell history.
The password must meet the password rules (12+ characters, upper, lower, digit, symbol, no
keyboard patterns, dictionary words or parts of the username or email).

Example:
  printf '%s\\n' "$PW" | strongroom create-admin --username amina.otieno --email amina@bank.example --password-stdin
`,
  'rotate-keys': `Usage: strongroom rotate-keys

Adds a new JWT signing key now. New tokens are signed with it; the previous key still verifies
the tokens it signed; keys older than that stop verifying, so their tokens are refused. Servers
on the same PostgreSQL load the new key at once. Keys also rotate by themselves every
JWT_KEY_ROTATION_DAYS (default 90).
`,
  'rotate-field-key': `Usage: strongroom rotate-field-key [--batch-size N] [--check]      (alias: reencrypt)

Re-encrypts every encrypted column (users.email, users.phone, credentials.password_enc,
sessions.aes_key, jwt_signing_keys.secret_enc, transport_keys.private_pem_enc, mfa_factors.secret_enc,
ldap_config.bind_password_enc, saml_sp_keys.private_key_enc, device_tokens.push_token) under the
current FIELD_ENCRYPTION_KEY, and recomputes the blind indexes (users.email_bidx, users.phone_bidx,
device_tokens.push_token_bidx). With DB_FIELD_ENCRYPTION=1 it also encrypts personal data, session
keys and push tokens still stored in clear.

Rotating the key (docs/operations.md, "Rotating the field-encryption key"):
  1. Give every server the new FIELD_ENCRYPTION_KEY and move the old one to
     FIELD_ENCRYPTION_KEYS_PREVIOUS; restart them (they read both, write the new one).
  2. Run this command with the same environment. It works in batches of --batch-size rows
     (default 200), each batch committed on its own: stopped at any point, run it again and it
     does only what is left.
  3. When it reports that nothing remains under an old key, remove
     FIELD_ENCRYPTION_KEYS_PREVIOUS from every server and restart them.

  --check          Change nothing: report what remains under an old key or in clear, and exit
                   1 if anything remains under an old key (0 when the old key can go).
  --batch-size N   Rows per batch and transaction, 1 to 10000 (default 200).
`,
  'rotate-transport-key': `Usage: strongroom rotate-transport-key [--revoke-previous]

Generates a new RSA-2048 transport key pair and makes it current now: GET /api/v1/auth/public_key
publishes it and new pre-auth requests use it. The previous key stays accepted until its
expires_at (TRANSPORT_KEY_ROTATION_DAYS + TRANSPORT_KEY_GRACE_DAYS after it was made), so clients
holding it keep working. Servers on the same PostgreSQL load the new key at once. Keys also rotate
by themselves every TRANSPORT_KEY_ROTATION_DAYS (default 90).

  --revoke-previous  Stop accepting every previous key now (a suspected key compromise): clients
                     still using one get 400 DECRYPTION_FAILED until they fetch the new key.
`,
  'rotate-saml-sp-key': `Usage: strongroom rotate-saml-sp-key

Generates a new RSA-2048 signing key for the SAML service provider (with a self-signed certificate
naming the SP entity id's host) and makes it current now: the LogoutRequests and LogoutResponses
this service sends are signed with it. The SP metadata (GET /api/v1/auth/saml/metadata) publishes
the new certificate and the previous one until the next rotation, so an IdP that reloads the
metadata later keeps verifying; keys older than the previous one are retired. Reload the metadata
in the IdP after rotating. Servers on the same PostgreSQL load the new key at once.
`,
  users: `Usage: strongroom users <create|unlock|list|show|update|disable|enable|delete|sessions|end-sessions> [options]

  users create --username NAME --roles ROLE[,ROLE...] [--email EMAIL] [--phone +E164]
               [--full-name NAME] [--service-account]
      Creates a user with a temporary password, printed once; it must be changed at first
      sign-in. Roles: admin, staff, customer, operator, agent (or any role the database holds).
  users unlock --username NAME
      Clears the failed sign-in count and lockout of the user named by username (or email).

A user is named by --username NAME (a username or an email address) or --id UUID (the uuid: the
id the API takes and these commands print). Every change is audited, as the API's are, with the
CLI and your operating-system account as the actor.

  users list [--search TEXT] [--role ROLE] [--entity CODE] [--status active|disabled|locked|deleted]
             [--limit N] [--cursor C]
      Users in username order, N per page (default 50, at most 200). --search matches the username
      or full name by substring, or the whole email address or phone number. Deleted users are
      listed only with --status deleted. When there are more, it prints the --cursor for the next page.
  users show (--username NAME | --id UUID)
      One user: state, contacts, roles, branches.
  users update (--username NAME | --id UUID) [--full-name N] [--email E] [--phone +E164]
               [--language en|pt|fr] [--roles R[,R...]] [--entities CODE[,CODE...]]
               [--clear full-name,email,phone,language,entities]
      Changes what is given. --roles and --entities replace the whole set. A change of roles
      ends the user's sessions at once: they sign in again under the new roles.
  users disable | enable (--username NAME | --id UUID)
      Disabling ends every session of the user at once; enabling lets them sign in again.
  users delete (--username NAME | --id UUID)
      Soft deletion: disabled for good, marked deleted, sessions ended; kept for the audit trail.
  users sessions (--username NAME | --id UUID)
      The user's active sessions (ids, channel, times); never a token.
  users end-sessions (--username NAME | --id UUID) [--session ID]
      Ends one session (--session) or all of them; the user can sign in again.

Nobody disables or deletes the last active account with the admin role (LAST_ADMIN).
`,
  roles: `Usage: strongroom roles <list|permissions|show|create|update|delete> [NAME] [options]

  roles list
      Every role: built in or not, how many users hold it, how many permissions it grants.
  roles permissions
      Every permission, what it allows and the roles that grant it.
  roles show NAME
      One role: its description, holders and each permission with what it allows.
  roles create NAME --description TEXT [--permissions P[,P...]]
      Creates a role granting existing permissions. NAME: 2 to 64 characters, lower-case
      letters, digits, ".", "_" or "-", starting with a letter; it never changes.
  roles update NAME [--description TEXT] [--permissions P[,P...] | --add P[,P...] --remove P[,P...]]
      Changes the description, and the permissions: --permissions sets the whole set, --add and
      --remove change the set as it stands. A built-in role (admin, staff, customer, operator,
      agent) keeps its permissions; its description may change. A holder who loses a permission
      (holding it through no other role) is signed out at once; a permission gained reaches the
      holders at their next token refresh or sign-in.
  roles delete NAME
      Deletes a role no user holds and no access policy, channel rule or LDAP group mapping names.
      Built-in roles cannot be deleted.
Every change is audited (ROLE_CREATED, ROLE_UPDATED, ROLE_DELETED) as made by cli:<your OS account>.

Example:
  strongroom roles create teller.supervisor --description "Teller supervisor" --permissions users.read,users.update
`,
  faq: `Usage: strongroom faq seed

Loads the FAQ starter set: original help articles for a retail bank, eleven in each of the ten
categories. An article whose question is already in the FAQ (in any case, active or not) is
skipped, so running it again adds nothing and never overwrites an edited article. A development
server loads the set by itself on its first start; in production run this once, then edit the
articles under /api/v1/admin/faqs.
`,
  audit: `Usage: strongroom audit <partitions|prune|holds|hold|release> [options]

The audit log is partitioned by calendar month (UTC). Entries are kept at least
AUDIT_RETENTION_MONTHS months (default 84); every hour the server drops the months wholly older
than that, except what a legal hold keeps. Every drop, hold and release is itself audited.

  audit partitions              Each month's partition, its entries, and the retention cut-off.
  audit prune [--dry-run]       Drop the months due now (the hourly job does it anyway);
                                --dry-run only lists them.
  audit hold --reason TEXT --from DATE --to DATE [--user UUID]
                                Keep every audit entry of the period [from, to), or with --user
                                only that user's (copied aside before their month is dropped and
                                still answered by GET /api/v1/admin/audit). DATE: 2025-03-01
                                (UTC midnight) or an instant with its offset, 2025-03-01T10:00:00Z.
                                --reason: the matter (a case or request reference).
  audit holds                   The holds in force.
  audit release ID              End a hold: its entries follow the retention period again.

Example:
  strongroom audit hold --reason "dispute 2026-0415" --from 2025-10-01 --to 2026-01-01 \
    --user 0f8fad5b-d9cb-469f-a165-70867728950e
`,
  gdpr: `Usage: strongroom gdpr ledger export [--since DATE]
       strongroom gdpr ledger reapply --file PATH|-

The erasure ledger: every account the erasure job has erased, by uuid, with when the erasure was
requested and when it was applied; no username, no contact, nothing else. A database backup taken
before an erasure brings the person back when it is restored: re-applying the ledger to the
restored database erases them again.

  gdpr ledger export [--since DATE]
      Writes the ledger on stdout, one JSON object per line, in the order the erasures were
      applied: {"user_id":"<uuid>","requested_at":"<instant>","erased_at":"<instant>"}.
      --since DATE: only the erasures applied at or after DATE (2026-03-01, UTC midnight, or an
      instant with its offset, 2026-03-01T10:00:00Z). Run it every day (the erasure job runs
      hourly) and keep the file where the backups are not.
  gdpr ledger reapply --file PATH|-
      On a database restored from a backup (the one DATABASE_URL names), before it serves:
      erases now every account of the ledger that exists there and is not erased yet, as the
      erasure job does (no grace period; audited GDPR_ERASED with "via": "ledger"), even when
      the restored database shows its request under a legal hold (the ledger proves the hold was
      released before the erasure). Accounts already erased are left alone; uuids the database
      does not have (accounts created after the backup) are counted and listed. Prints the
      counts and exits 0; running it again changes nothing. The whole ledger is checked first:
      a malformed line is refused naming its number (exit 1) and nothing is changed.
      --file - reads the ledger from standard input.

Examples:
  strongroom gdpr ledger export > /srv/ledger/erasures.jsonl.new && mv /srv/ledger/erasures.jsonl.new /srv/ledger/erasures.jsonl
  DATABASE_URL=postgres://strongroom@db-restore/strongroom strongroom gdpr ledger reapply --file /srv/ledger/erasures.jsonl
`,
  bench: `Usage: strongroom bench seed --database NAME [--users N] [--sessions N] [--active-sessions N]
                                [--audit N] [--months N]

Fills a PostgreSQL database with synthetic data for measuring the service at scale (npm run
bench:scale): by default 1,000,000 users (each with a password, the role customer, an email; 60%
with a phone number, 15% with a second factor, 20% with push tokens, 1% disabled), 1,000,000
sessions of which 100,000 active (with their refresh tokens), and 10,000,000 audit entries over
the 13 months before now. Rows are written in batches, one per core at a time, each committed
with its record (tables bench_seed, bench_seed_batches): stopped at any point, run the same
command again and it continues. Run on a finished seed, it changes nothing. At the end it runs
VACUUM ANALYZE on the tables it filled.

Synthetic user <n> is seed.u<n> (seed.u1, seed.u2, ...), email u<n>@seed.bench.example, phone
+2547 and <n> on 8 digits (when n mod 10 < 6), and every password is "Seed-Bench#2026-synthetic".
Emails, phone numbers and push tokens are encrypted and blind-indexed with the field key of the
environment (FIELD_ENCRYPTION_KEY, DB_FIELD_ENCRYPTION): give the command the environment the
server of that database uses, or the server will not find the users.

It refuses, whatever the other options say:
  - without DATABASE_URL (the embedded PGlite database is a developer's own), or with
    NODE_ENV=production;
  - unless --database NAME is the name of the database DATABASE_URL opens: you name what you fill;
  - when that database holds a user the seed did not make (an account of a person, an
    administrator): seed an empty database, then create its administrator (create-admin);
  - when it holds a seed of other sizes, or one written under another field key.

  --database NAME        The name of the database DATABASE_URL opens (a confirmation). Required.
  --users N              Synthetic users (default 1,000,000; at most 10,000,000).
  --sessions N           Sessions, spread over the users (default 1,000,000).
  --active-sessions N    How many of them are active (default 100,000).
  --audit N              Audit entries (default 10,000,000), through the monthly partitions.
  --months N             Months before now the audit entries are spread over (default 13).
Counts may be grouped: 1_000_000 or 1,000,000.

Example:
  DATABASE_URL=postgres://bench@127.0.0.1/strongroom_scale strongroom bench seed --database strongroom_scale
`,
  passwords: `Usage: strongroom passwords import-breached --file PATH [--min-count N] [--output PATH]
                                           [--false-positive-rate R]
       strongroom passwords check-breached [--filter PATH]

The breach corpus: passwords known from data breaches, which the password rules refuse (rule
"breached") wherever a password is set, and which sign-in reports as a risk signal. Both commands
work on files only: no database, and no setting but BREACHED_PASSWORDS_FILTER (the default path).

  passwords import-breached --file PATH
      Reads a Pwned Passwords file in the SHA-1 format (lines SHA1HEX:COUNT, as the official
      haveibeenpwned-downloader writes it; any size, read as a stream, twice) and writes a filter
      file: about 2 bytes per entry at the default rate, so about 2 GB for the whole set. Progress
      goes to stderr, the summary (entries, filter size, false-positive rate) to stdout. A
      malformed line stops the import naming its line number; nothing is written then. The
      filter is written under a temporary name and renamed into place, so a server reloading it
      never sees half of it.
      --output PATH               Where to write it (default: BREACHED_PASSWORDS_FILTER).
      --min-count N               Leave out passwords seen fewer than N times (default 1: all).
      --false-positive-rate R     How often a password not in the corpus is refused all the same,
                                  0.0001 to 0.05 (default 0.001, 1 in 1,000); lower costs memory.
  passwords check-breached [--filter PATH]
      Reads one password from standard input (piped, or typed at a hidden prompt; never an
      argument) and says whether the filter (default: BREACHED_PASSWORDS_FILTER) holds it. Exit 0:
      not in the corpus; 1: in it (or the filter cannot be read, said on stderr).

Examples:
  haveibeenpwned-downloader pwnedpasswords        # writes pwnedpasswords.txt (tens of GB)
  strongroom passwords import-breached --file pwnedpasswords.txt --output /srv/strongroom/breached.filter
  printf '%s\\n' 'P@ssw0rd' | strongroom passwords check-breached --filter /srv/strongroom/breached.filter
`,
} as const;

export type HelpTopic = keyof typeof TOPICS;

export function isHelpTopic(s: string): s is HelpTopic {
  return Object.hasOwn(TOPICS, s);
}

export function usage(topic: HelpTopic = 'main'): string {
  return TOPICS[topic];
}
