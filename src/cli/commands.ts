/**
 * What each operator command does, on the runtime the server would open. Output is for people,
 * on stdout. Loaded by src/cli.ts only once a command needs the database, so `help` and usage
 * errors answer at once.
 */
import os from 'node:os';
import pino from 'pino';
import { AdminErrors } from '../admin/errors.js';
import type { Registry } from '../app.js';
import type { Config } from '../platform/config.js';
import { createLogger } from '../platform/observability/logger.js';
import { starterArticles } from '../faq/starter.js';
import { openRuntime } from '../runtime.js';
import type { UserRow } from '../users/store.js';
import type { Command } from './args.js';
import { benchSeed } from './bench-seed.js';
import { rotateFieldKey } from './field-key.js';
import { runAudit } from './audit-commands.js';
import { readLedger, runGdpr } from './gdpr-commands.js';
import { runRoles } from './roles-commands.js';
import { describe as describeUser, runUserLifecycle } from './users-commands.js';
import type { Print } from './usage.js';

/** Who acted, for the audit trail: the CLI and the operating-system account that ran it. */
function actor(): { uuid: null; username: string } {
  let who = 'unknown';
  try {
    who = os.userInfo().username;
  } catch {
    // no passwd entry for the uid (some containers)
  }
  return { uuid: null, username: `cli:${who}` };
}


function printTemporaryPassword(print: Print, user: UserRow, password: string): void {
  print();
  print(`Temporary password for "${user.username}", shown only this once (it is not stored in clear anywhere):`);
  print();
  print(`    ${password}`);
  print();
  print('Hand it over through a safe channel. It must be changed at the first sign-in: signing in answers');
  print('403 PASSWORD_CHANGE_REQUIRED with a reset_token for POST /api/v1/auth/reset/password.');
}

export function migrate(s: Registry, migrated: string[], print: Print): void {
  if (migrated.length === 0) {
    print(`${s.database.location}: up to date, no migrations to run.`);
    return;
  }
  print(`${s.database.location}: applied ${migrated.length} migration${migrated.length === 1 ? '' : 's'}:`);
  for (const name of migrated) print(`  ${name}`);
}

export async function createAdmin(s: Registry, cmd: Extract<Command, { name: 'create-admin' }>, password: string | undefined, print: Print): Promise<void> {
  const created = await s.consoleAdmin.createUser({ username: cmd.username, email: cmd.email, roles: ['admin'], password }, actor());
  print(`Created administrator ${describeUser(created.user)} with role admin.`);
  if (created.temporaryPassword) {
    printTemporaryPassword(print, created.user, created.temporaryPassword);
    return;
  }
  const { expiryDays } = await s.policy.restrictions('admin');
  print(`The password you supplied is set; "${created.user.username}" can sign in now.${expiryDays ? ` It expires in ${expiryDays} days.` : ''}`);
}

export async function createUser(s: Registry, cmd: Extract<Command, { name: 'users create' }>, print: Print): Promise<void> {
  const created = await s.consoleAdmin.createUser(
    { username: cmd.username, email: cmd.email, phone: cmd.phone, fullName: cmd.fullName, roles: cmd.roles, isServiceAccount: cmd.serviceAccount },
    actor(),
  );
  print(`Created ${cmd.serviceAccount ? 'service account' : 'user'} ${describeUser(created.user)} with role${created.roles.length === 1 ? '' : 's'} ${created.roles.join(', ')}.`);
  printTemporaryPassword(print, created.user, created.temporaryPassword!);
}

export async function unlockUser(s: Registry, cmd: Extract<Command, { name: 'users unlock' }>, print: Print): Promise<void> {
  const user = await s.users.findByLogin(cmd.username);
  if (!user) throw AdminErrors.USER_NOT_FOUND({ username: cmd.username });
  const lockedUntil = await s.attempts.lockedUntil(s.attempts.userKey(user.id));
  await s.consoleAdmin.unlock(user.uuid, actor());
  print(lockedUntil === null
    ? `${describeUser(user)} was not locked; its failed sign-in count is cleared.`
    : `Unlocked ${describeUser(user)}: it was locked until ${new Date(lockedUntil).toISOString()}. Its failed sign-in count is cleared.`);
  if (!user.is_active) print('Note: the account is deactivated, so it still cannot sign in.');
}

export async function rotateKeys(s: Registry, print: Print): Promise<void> {
  const previous = s.keyring.signingKey('access').kid;
  const kid = await s.keyring.rotate();
  print('Rotated the JWT signing keyring.');
  print(`  new signing key:  kid ${kid} (signs every token from now on)`);
  print(`  previous key:     kid ${previous} (still verifies the tokens it signed until they expire)`);
  print('  older keys no longer verify: tokens they signed are refused with 401.');
  if (s.database.kind === 'postgres') print('Servers on this database load the new key at once.');
}

export async function rotateTransportKey(s: Registry, cmd: Extract<Command, { name: 'rotate-transport-key' }>, print: Print): Promise<void> {
  const previous = s.transportKeys.live();
  const keyId = await s.transportKeys.rotate({ revokePrevious: cmd.revokePrevious });
  const current = s.transportKeys.current();
  const at = (ms: number): string => new Date(ms).toISOString();
  print('Rotated the transport key pair (RSA-2048).');
  print(`  new key:       key_id ${keyId} (published by GET /api/v1/auth/public_key from now on; expires ${at(current.expiresAt)})`);
  for (const k of previous.filter((p) => p.keyId !== keyId)) {
    print(cmd.revokePrevious
      ? `  revoked:       key_id ${k.keyId} is no longer accepted: clients still using it get 400 DECRYPTION_FAILED until they fetch the new public key.`
      : `  previous key:  key_id ${k.keyId} stays accepted until its expires_at, ${at(k.expiresAt)}, so clients holding it keep working.`);
  }
  if (s.database.kind === 'postgres') print('Servers on this database load the new key at once.');
}

export async function rotateSamlSpKey(s: Registry, print: Print): Promise<void> {
  const { keyId, retired } = await s.samlSpKeys.rotate();
  const published = await s.samlSpKeys.published();
  print(`Made a new SAML SP signing key current: key_id ${keyId}.`);
  for (const k of published.filter((p) => p.keyId !== keyId)) print(`  previous key:  key_id ${k.keyId} stays in the SP metadata until the next rotation.`);
  for (const id of retired) print(`  retired:       key_id ${id} is no longer published.`);
  print('Reload the SP metadata (GET /api/v1/auth/saml/metadata) in the IdP so it checks the new key.');
}

export async function seedFaq(s: Registry, print: Print): Promise<void> {
  const r = await s.faqAdmin.seed({ actor: { uuid: null, username: 'cli' }, context: {} }, starterArticles());
  print(r.created === 0 ? `The FAQ already has every starter article (${r.skipped}); nothing added.` : `Added ${r.created} starter FAQ articles${r.skipped > 0 ? ` (${r.skipped} already there)` : ''}.`);
}

/** Opens the runtime, runs one command, always closes the database (PGlite releases its lock). */
export async function execute(cmd: Exclude<Command, { name: 'help' } | { name: `passwords ${string}` }>, config: Config, password: string | undefined, print: Print): Promise<void> {
  // Quiet: warnings and errors only, on stderr, so stdout holds nothing but the results.
  const log = createLogger('warn', pino.destination({ fd: 2, sync: true }));
  if (cmd.name === 'rotate-field-key') return rotateFieldKey(config, cmd, log, print);
  if (cmd.name === 'bench seed') return benchSeed(config, cmd, log, print);
  // Read and checked whole before the database opens: a malformed ledger changes nothing.
  const ledger = cmd.name === 'gdpr ledger reapply' ? await readLedger(cmd.file) : undefined;
  const { strongroom, generated, migrated } = await openRuntime(config, log);
  const services = strongroom.registry;
  try {
    if (generated.length > 0) {
      process.stderr.write(`Note: generated development secrets in ${config.dataDir}/secrets (${generated.join(', ')}); the server started with the same DATA_DIR uses them.\n`);
    }
    switch (cmd.name) {
      case 'migrate':
        return migrate(services, migrated, print);
      case 'create-admin':
        return await createAdmin(services, cmd, password, print);
      case 'rotate-keys':
        return await rotateKeys(services, print);
      case 'rotate-transport-key':
        return await rotateTransportKey(services, cmd, print);
      case 'rotate-saml-sp-key':
        return await rotateSamlSpKey(services, print);
      case 'users create':
        return await createUser(services, cmd, print);
      case 'users unlock':
        return await unlockUser(services, cmd, print);
      case 'faq seed':
        return await seedFaq(services, print);
      case 'users list':
      case 'users show':
      case 'users update':
      case 'users disable':
      case 'users enable':
      case 'users delete':
      case 'users sessions':
      case 'users end-sessions':
        return await runUserLifecycle(services, cmd, print, { actor: actor(), context: {} });
      case 'audit partitions':
      case 'audit prune':
      case 'audit holds':
      case 'audit hold':
      case 'audit release':
        return await runAudit(services, cmd, print, actor().username);
      case 'gdpr ledger export':
      case 'gdpr ledger reapply':
        return await runGdpr(services, cmd, print, actor().username, ledger);
      default:
        return await runRoles(services, cmd, print, { actor: actor(), context: {} });
    }
  } finally {
    await strongroom.close();
    await services.database.close();
  }
}
