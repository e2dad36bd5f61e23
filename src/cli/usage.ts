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
  faq seed                      Load the FAQ starter set (the articles not there yet).
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
  users: `Usage: strongroom users <create|unlock> [options]

  users create --username NAME --roles ROLE[,ROLE...] [--email EMAIL] [--phone +E164]
               [--full-name NAME] [--service-account]
      Creates a user with a temporary password, printed once; it must be changed at first
      sign-in. Roles: admin, staff, customer, operator, agent (or any role the database holds).
  users unlock --username NAME
      Clears the failed sign-in count and lockout of the user named by username (or email).
`,
  faq: `Usage: strongroom faq seed

Loads the FAQ starter set: original help articles for a retail bank, eleven in each of the ten
categories. An article whose question is already in the FAQ (in any case, active or not) is
skipped, so running it again adds nothing and never overwrites an edited article. A development
server loads the set by itself on its first start; in production run this once, then edit the
articles under /api/v1/admin/faqs.
`,
} as const;

export type HelpTopic = keyof typeof TOPICS;

export function isHelpTopic(s: string): s is HelpTopic {
  return Object.hasOwn(TOPICS, s);
}

export function usage(topic: HelpTopic = 'main'): string {
  return TOPICS[topic];
}
