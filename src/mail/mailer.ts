/**
 * Outgoing email (ARCHITECTURE.md section 2: nodemailer over SMTP). One `Mailer` interface with
 * two implementations: SMTP when SMTP_URL is set, and `disabled` when it is not, so callers ask
 * `configured` instead of reading the environment. SMTP credentials may sit in SMTP_URL: the URL
 * is never logged, only `host:port` (`describeSmtp`). nodemailer itself is imported only where
 * SMTP_URL is set (`SmtpMailer.load`), so a node without email never holds its code.
 */
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Logger } from 'pino';
import type { Config } from '../platform/config.js';
import { inSpan } from '../platform/observability/tracing.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** False when no SMTP server is configured: callers fall back (e.g. return the password in the response). */
  readonly configured: boolean;
  /** Resolves once the SMTP server accepted the message; rejects with a `MailDeliveryError` otherwise. */
  send(msg: MailMessage): Promise<{ messageId: string }>;
  /** Releases connections; optional so tests can inject a plain object. */
  close?(): void;
}

/** Delivery failed. `reason` is safe to log and to audit: no credentials, no message content. */
export class MailDeliveryError extends Error {
  constructor(readonly reason: string, options?: { cause?: unknown }) {
    super(`Email delivery failed: ${reason}`, options);
    this.name = 'MailDeliveryError';
  }
}

/** Timeouts (ms) so a silent or slow SMTP server cannot hold a request (and its transaction) long. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000, dnsTimeout: 10_000 } as const;

/**
 * `SMTP at host:port`, plus `(TLS)` for smtps:// or `(STARTTLS required)` for smtp:// when TLS
 * is required; never the credentials.
 */
export function describeSmtp(url: string, requireTls = false): string {
  const u = new URL(url);
  const tls = u.protocol === 'smtps:';
  const port = u.port || (tls ? '465' : '587');
  const suffix = tls ? ' (TLS)' : requireTls ? ' (STARTTLS required)' : '';
  return `SMTP at ${u.hostname}:${port}${suffix}`;
}

/** Whether messages may travel in clear: smtp:// without SMTP_REQUIRE_TLS. */
export function smtpMayBeClear(url: string, requireTls: boolean): boolean {
  return new URL(url).protocol === 'smtp:' && !requireTls;
}

/** The mailer when SMTP_URL is unset: nothing is sent, and nobody should try. */
export const disabledMailer: Mailer = {
  configured: false,
  send: () => Promise.reject(new MailDeliveryError('email delivery is not configured (SMTP_URL is unset)')),
};

/** A reason safe to log: the error code and the SMTP reply code, never the server's full text. */
function reasonOf(err: unknown): string {
  const e = err as { code?: unknown; originalCode?: unknown; responseCode?: unknown; command?: unknown };
  const parts = [typeof e.code === 'string' ? e.code : 'ERROR'];
  if (typeof e.originalCode === 'string') parts.push(e.originalCode); // e.g. ECONNREFUSED under ESOCKET
  if (typeof e.responseCode === 'number') parts.push(`SMTP ${e.responseCode}`);
  if (typeof e.command === 'string') parts.push(`during ${e.command.split(' ')[0]}`); // "AUTH PLAIN <base64>" must not leak
  return parts.join(' ');
}

export class SmtpMailer implements Mailer {
  readonly configured = true;
  private readonly options: SMTPTransport.Options;
  private readonly from: string;
  private transport: Promise<Transporter<SMTPTransport.SentMessageInfo>> | undefined;
  private readonly where: string;
  /** The relay's address for spans: never a recipient, a subject or a body. */
  private readonly server: { 'server.address': string; 'server.port': number };

  /**
   * `requireTls` with smtp://: STARTTLS or nothing. nodemailer then issues STARTTLS whether or
   * not the server offers it, and a refusal (ETLS) or a certificate that does not verify
   * (ESOCKET CERT_…) fails the send before any credential or message is written. Certificates
   * are verified either way (Node's default; a private CA: NODE_EXTRA_CA_CERTS).
   */
  constructor(mail: { url: string; from: string; requireTls: boolean }, private readonly log: Logger) {
    const u = new URL(mail.url);
    const secure = u.protocol === 'smtps:';
    this.where = describeSmtp(mail.url, mail.requireTls);
    this.from = mail.from;
    this.server = { 'server.address': u.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': Number(u.port || (secure ? 465 : 587)) };
    this.options = {
      host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: u.port ? Number(u.port) : undefined,
      secure,
      requireTLS: mail.requireTls && !secure,
      tls: { minVersion: 'TLSv1.2' },
      auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
      ...SMTP_TIMEOUTS,
      logger: false,
      debug: false,
    };
  }

  /** Imports nodemailer and makes the transport, once (the mail module does it at start). */
  load(): Promise<Transporter<SMTPTransport.SentMessageInfo>> {
    this.transport ??= import('nodemailer').then(({ createTransport }) => createTransport(this.options, { from: this.from }));
    return this.transport;
  }

  async send(msg: MailMessage): Promise<{ messageId: string }> {
    try {
      return await inSpan('SMTP send', this.server, async () => {
        const transport = await this.load();
        const info = await transport.sendMail({ to: msg.to, subject: msg.subject, text: msg.text });
        if (info.rejected.length > 0) throw Object.assign(new Error('recipient rejected'), { code: 'EENVELOPE' });
        return { messageId: info.messageId };
      });
    } catch (err) {
      const reason = reasonOf(err);
      this.log.warn({ smtp: this.where, reason }, `Email delivery through ${this.where} failed: ${reason}`);
      throw new MailDeliveryError(reason);
    }
  }

  close(): void {
    void this.transport?.then((t) => t.close());
  }
}

/** The mailer the configuration asks for. */
export function createMailer(config: Pick<Config, 'mail'>, log: Logger): Mailer {
  return config.mail.url === undefined ? disabledMailer : new SmtpMailer({ ...config.mail, url: config.mail.url }, log);
}
