#!/usr/bin/env node
/**
 * `strongroom <command>` (from a checkout: `npm run cli -- <command>`): the operator commands
 * `migrate`, `create-admin`, `rotate-keys`, `rotate-field-key`, `rotate-transport-key`, `rotate-saml-sp-key`,
 * `users ...` (create, unlock, list, show, update, disable, enable, delete, sessions, end-sessions), `faq seed`, `roles ...`, `audit ...`,
 * `gdpr ledger ...` (the erasure ledger) and `bench seed` (synthetic data for the scale bench), against the database the server uses; and
 * `passwords ...` (the breached-password filter), on files only. Results go to stdout for people; errors to stderr; the exit code
 * follows sysexits.h (see src/cli/usage.ts) so scripts can tell a refusal from a usage error.
 */
import { ConfigError, loadConfig, type Config } from './platform/config.js';
import { AppError } from './platform/errors.js';
import { parseCommand, type Command } from './cli/args.js';
import { CancelledError, readPasswordFromStdin } from './cli/password.js';
import { CommandFailed, EXIT, usage, UsageError, type Print } from './cli/usage.js';

const print: Print = (line = '') => console.log(line);

/** `error_code: message`, then each detail: every violated password rule on its own line. */
function printAppError(err: AppError): void {
  console.error(`${err.code}: ${err.message}`);
  for (const [key, value] of Object.entries(err.details)) {
    if (key === 'violations' && Array.isArray(value)) {
      for (const v of value as { rule: string; message: string }[]) console.error(`  - ${v.rule}: ${v.message}`);
    } else if (Array.isArray(value)) {
      console.error(`  ${key}: ${value.join(', ')}`);
    } else {
      console.error(`  ${key}: ${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}`);
    }
  }
}

// Network and server-side errors of pg that mean "cannot reach or enter the database".
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', '28000', '28P01', '3D000', '57P03']);

function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
  return err instanceof AggregateError && err.errors.some(isUnreachable);
}

/**
 * The administrator's password for create-admin: stdin when asked, else the environment
 * (an operator's one-off secret, deliberately not part of the server's Config), else none.
 */
async function adminPassword(cmd: Extract<Command, { name: 'create-admin' }>): Promise<string | undefined> {
  const fromEnv = process.env.STRONGROOM_ADMIN_PASSWORD || undefined;
  if (cmd.passwordStdin && fromEnv !== undefined) {
    throw new UsageError('Both --password-stdin and STRONGROOM_ADMIN_PASSWORD are set: give the password one way only.', 'create-admin');
  }
  return cmd.passwordStdin ? readPasswordFromStdin() : fromEnv;
}

async function run(argv: string[]): Promise<number> {
  const cmd = parseCommand(argv);
  if (cmd.name === 'help') {
    process.stdout.write(usage(cmd.topic));
    return EXIT.OK;
  }
  // Files only, no database: they run wherever the Pwned Passwords download is, with no other setting.
  if (cmd.name === 'passwords import-breached' || cmd.name === 'passwords check-breached') {
    const { runPasswords } = await import('./cli/passwords-commands.js');
    return runPasswords(cmd, process.env.BREACHED_PASSWORDS_FILTER || undefined, print);
  }

  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`strongroom: ${err.message}\nSee README.md, "Configuration", or run: strongroom help`);
    return EXIT.CONFIG;
  }

  // Read before opening the database, so PGlite is not held while the operator types.
  const password = cmd.name === 'create-admin' ? await adminPassword(cmd) : undefined;

  const { execute } = await import('./cli/commands.js'); // the server's modules: load only when needed
  await execute(cmd, config, password, print);
  return EXIT.OK;
}

async function main(): Promise<number> {
  try {
    return await run(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`strongroom: ${err.message}\n`);
      console.error(usage(err.topic).trimEnd());
      return EXIT.USAGE;
    }
    if (err instanceof AppError) {
      printAppError(err);
      return EXIT.FAILURE;
    }
    if (err instanceof CommandFailed) {
      console.error(`strongroom: ${err.message}`);
      return EXIT.FAILURE;
    }
    if (err instanceof CancelledError) {
      console.error('strongroom: cancelled.');
      return 130;
    }
    // Already loaded when it can have been thrown (by opening the database).
    const { DatabaseLockedError } = await import('./platform/db/database.js');
    if (err instanceof DatabaseLockedError) {
      console.error(`strongroom: ${err.message}\nThe embedded PGlite database admits one process at a time: stop the server, run the command, then start the server again.`);
      return EXIT.TEMPFAIL;
    }
    const fsErr = (err ?? {}) as { syscall?: string; path?: string; code?: string };
    if (typeof fsErr.syscall === 'string' && typeof fsErr.path === 'string') {
      // DATA_DIR not writable, TRANSPORT_PRIVATE_KEY_PATH missing, ...: the environment is wrong.
      console.error(`strongroom: cannot ${fsErr.syscall} ${fsErr.path} (${fsErr.code}). Check DATA_DIR and the key paths in the environment.`);
      return EXIT.CONFIG;
    }
    if (isUnreachable(err)) {
      console.error(`strongroom: cannot reach the database (${(err as Error).message || (err as { code: string }).code}). Check DATABASE_URL and that PostgreSQL is running.`);
      return EXIT.UNAVAILABLE;
    }
    console.error('strongroom: internal error:', err);
    return EXIT.SOFTWARE;
  }
}

process.exitCode = await main();
