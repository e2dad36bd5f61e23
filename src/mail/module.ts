/** Email over SMTP (SMTP_URL), or the disabled mailer; tests may hand in their own. */
import type { Logger } from 'pino';
import type { Config } from '../platform/config.js';
import type { Module } from '../platform/module.js';
import { createMailer, type Mailer } from './mailer.js';

export interface MailDeps {
  config: Pick<Config, 'mail'>;
  log: Logger;
  /** A mailer to use instead of the one SMTP_URL describes (tests). */
  mailerOverride?: Mailer;
}

export function mailModule(deps: MailDeps): Module<{ mailer: Mailer }> {
  const mailer = deps.mailerOverride ?? createMailer(deps.config, deps.log);
  return { name: 'mail', provides: { mailer }, close: () => mailer.close?.() };
}
