/** Email over SMTP (SMTP_URL), or the disabled mailer; tests may hand in their own. */
import type { Logger } from 'pino';
import type { Config } from '../platform/config.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { createMailer, SmtpMailer, type Mailer } from './mailer.js';

export interface MailDeps {
  config: Pick<Config, 'mail'>;
  log: Logger;
  metrics: Metrics;
  /** A mailer to use instead of the one SMTP_URL describes (tests). */
  mailerOverride?: Mailer;
}

/** `inner`, counting what the relay accepted and what failed (`strongroom_mail_sent_total`, `_failed_total`). */
function counted(inner: Mailer, metrics: Metrics): Mailer {
  const sent = metrics.counter('strongroom_mail_sent_total', 'Emails the SMTP relay accepted (one-time codes, temporary passwords, expiry warnings, MFA reset notices)');
  const failed = metrics.counter('strongroom_mail_failed_total', 'Emails the SMTP relay refused or that could not be handed to it (the log says why)');
  return {
    get configured() {
      return inner.configured;
    },
    async send(msg) {
      try {
        const result = await inner.send(msg);
        sent.inc();
        return result;
      } catch (err) {
        failed.inc();
        throw err;
      }
    },
    close: () => inner.close?.(),
  };
}

export function mailModule(deps: MailDeps): Module<{ mailer: Mailer }> {
  const inner = deps.mailerOverride ?? createMailer(deps.config, deps.log);
  const mailer = counted(inner, deps.metrics);
  return {
    name: 'mail', provides: { mailer },
    // SMTP_URL set: nodemailer is loaded at start, not on the first email.
    init: async () => {
      if (inner instanceof SmtpMailer) await inner.load();
    },
    close: () => mailer.close?.(),
  };
}
