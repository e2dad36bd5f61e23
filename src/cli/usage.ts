/** The operator CLI's usage text and exit codes (BSD sysexits.h, so scripts can tell failures apart). */

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
  users create --username NAME --roles ROLE[,ROLE...] [--email EMAIL] [--phone +E164]
               [--full-name NAME] [--service-account]
                                Create a user with a temporary password, printed once.
  users unlock --username NAME  Clear the failed sign-in lockout of a user.
  help [COMMAND]                This text, or the help of one command.`;

const EXIT_CODES = `Exit codes: 0 done, 1 refused (the error code and reason are printed), 64 usage error,
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
  users: `Usage: strongroom users <create|unlock> [options]

  users create --username NAME --roles ROLE[,ROLE...] [--email EMAIL] [--phone +E164]
               [--full-name NAME] [--service-account]
      Creates a user with a temporary password, printed once; it must be changed at first
      sign-in. Roles: admin, staff, customer, operator, agent (or any role the database holds).
  users unlock --username NAME
      Clears the failed sign-in count and lockout of the user named by username (or email).
`,
} as const;

export type HelpTopic = keyof typeof TOPICS;

export function isHelpTopic(s: string): s is HelpTopic {
  return Object.hasOwn(TOPICS, s);
}

export function usage(topic: HelpTopic = 'main'): string {
  return TOPICS[topic];
}
