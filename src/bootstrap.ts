/**
 * First run: when no user exists, create the first administrator. With
 * BOOTSTRAP_ADMIN_PASSWORD the password is the operator's (policy-checked); without it, outside
 * production, a temporary password is generated and written to DATA_DIR (mode 0600), never to
 * the log, and must be changed at first sign-in.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from './app.js';
import { starterArticles } from './faq/starter.js';
import type { Config } from './platform/config.js';

export type BootstrapDeps = Pick<Registry, 'users' | 'consoleAdmin'> & { config: Pick<Config, 'bootstrapAdmin' | 'env' | 'dataDir'>; log: Logger };

export async function bootstrapAdmin(s: BootstrapDeps): Promise<void> {
  if ((await s.users.count()) > 0) return forgetSpentPassword(s);
  const { username, password, email } = s.config.bootstrapAdmin;
  if (s.config.env === 'production' && (!username || !password)) {
    s.log.warn('No user exists. Create the first administrator with `strongroom create-admin`, or set BOOTSTRAP_ADMIN_USERNAME and BOOTSTRAP_ADMIN_PASSWORD.');
    return;
  }
  const created = await s.consoleAdmin.createUser({ username: username ?? 'admin', email: email ?? null, roles: ['admin'], password }, { uuid: null, username: 'bootstrap' });
  if (created.temporaryPassword) {
    const file = passwordFile(s);
    mkdirSync(s.config.dataDir, { recursive: true });
    writeFileSync(file, `${created.temporaryPassword}\n`, { mode: 0o600 });
    s.log.warn({ username: created.user.username, password_file: file }, `Created the first administrator "${created.user.username}" with a temporary password in ${file}; it must be changed at first sign-in.`);
  } else {
    s.log.info({ username: created.user.username }, `Created the first administrator "${created.user.username}" from BOOTSTRAP_ADMIN_USERNAME/BOOTSTRAP_ADMIN_PASSWORD.`);
  }
}

const passwordFile = (s: BootstrapDeps): string => path.join(s.config.dataDir, 'bootstrap-admin-password.txt');

/**
 * Later starts: the first administrator's temporary password file is deleted once that password
 * is spent (changed at first sign-in, or the account gone); until then the log reminds.
 */
async function forgetSpentPassword(s: BootstrapDeps): Promise<void> {
  const file = passwordFile(s);
  if (!existsSync(file)) return;
  const username = s.config.bootstrapAdmin.username ?? 'admin';
  const admin = await s.users.findByLogin(username);
  if (admin?.must_change_password) {
    s.log.warn({ password_file: file }, `The first administrator "${username}" still has the temporary password in ${file}: sign in and change it; the file is deleted at the next start after that.`);
    return;
  }
  rmSync(file, { force: true });
  s.log.info({ password_file: file }, `Deleted ${file}: the temporary password in it has been changed.`);
}

/** Development, first start: an empty FAQ gets the starter set, so the help routes show something. Production: `strongroom faq seed`. */
export async function seedFaqOnFirstStart(s: Pick<Registry, 'faqStore' | 'faqAdmin'> & { config: Pick<Config, 'env'>; log: Logger }): Promise<void> {
  if (s.config.env === 'production' || (await s.faqStore.count()) > 0) return;
  const r = await s.faqAdmin.seed({ actor: { uuid: null, username: 'bootstrap' }, context: {} }, starterArticles());
  s.log.info({ faq_articles: r.created }, `Loaded the FAQ starter set: ${r.created} articles (development; in production run \`strongroom faq seed\`)`);
}
