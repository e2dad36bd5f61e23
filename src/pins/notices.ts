/**
 * The notice to a customer that the bank reset their USSD PIN (`POST /api/v1/admin/users/{id}/reset-pin`),
 * sent at once to every contact the account has, as account recovery tells its notices
 * (src/recovery/notify.ts): the email address when mail is configured, and the phone by SMS
 * through the SMS gateway. A PIN reset is done by an operator, and its reset token sits in the
 * operator's browser until the new PIN is set: the customer hearing of it at once, in their own
 * language and on their own contacts, is what turns an insider's or an impostor's reset into a
 * phone call to the bank. Plain text, no link, no code; the time in UTC; "if this wasn't you,
 * call us" on the number the customer already knows.
 *
 * Deliveries run in the background: the branch's reset never waits for a mail server, nor
 * fails because one is down. A contact that cannot be reached is logged at warn and handed to
 * the caller's `undelivered` (the reset route audits it PIN_RESET_NOTICE_FAILED), so a customer
 * who was never told can be found and called.
 */
import type { Logger } from 'pino';
import { MailDeliveryError, type Mailer, type MailMessage } from '../mail/mailer.js';
import { OtpDelivery } from '../mfa/otp/delivery.js';
import { SmsDeliveryError } from '../mfa/otp/sms-gateway.js';
import type { BackgroundWork } from '../platform/background.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { wordsFor, type NoticeLanguage } from '../platform/notices/language.js';
import { addressee, letterText } from '../platform/notices/letter.js';
import { smsText } from '../platform/notices/sms.js';
import { utcMinute } from '../platform/notices/time.js';
import type { UserRow } from '../users/store.js';

export interface PinResetRecipient {
  username: string;
  fullName: string | null;
  language: NoticeLanguage | null;
}

interface Words {
  dear: (name: string) => string;
  subject: string;
  what: (username: string, when: string) => string[];
  advice: string[];
  signature: string[];
  /** One GSM-7 segment once accents are removed, with the longest sender (notices.test.ts). */
  sms: (sender: string, when: string) => string;
}

const EN: Words = {
  dear: (name) => `Dear ${name},`,
  subject: 'Your USSD PIN was reset by the bank',
  what: (username, when) => [
    `The USSD PIN of your account (${username}) was reset by a member of the bank's staff on ${when} (UTC).`,
    'Your previous PIN no longer works. A new PIN is chosen with the bank: you type it yourself, and',
    'nobody at the bank should ever ask you to tell them your PIN.',
  ],
  advice: [
    'If this wasn\'t you, or you did not ask the bank for it, call us at once on the number you already',
    'know: someone may be trying to take over your account.',
  ],
  signature: ['Information Security', 'This message was sent automatically; replies are not read.'],
  sms: (sender, when) => `${sender}: your USSD PIN was reset by the bank on ${when} UTC. If this wasn't you, call us now on the number you know.`,
};

const PT: Words = {
  dear: (name) => `Caro(a) ${name},`,
  subject: 'O seu PIN USSD foi reposto pelo banco',
  what: (username, when) => [
    `O PIN USSD da sua conta (${username}) foi reposto por um funcionário do banco em ${when} (UTC).`,
    'O PIN anterior deixou de funcionar. Um novo PIN é escolhido com o banco: é você que o digita, e',
    'ninguém do banco lhe deve pedir que diga o seu PIN.',
  ],
  advice: [
    'Se não foi você, ou se não o pediu ao banco, ligue-nos de imediato para o número que já conhece:',
    'alguém poderá estar a tentar apoderar-se da sua conta.',
  ],
  signature: ['Segurança da Informação', 'Esta mensagem foi enviada automaticamente; as respostas não são lidas.'],
  sms: (sender, when) => `${sender}: o seu PIN USSD foi reposto pelo banco em ${when} UTC. Não foi você? Ligue-nos já para o número que conhece.`,
};

const FR: Words = {
  dear: (name) => `Bonjour ${name},`,
  subject: 'Votre code PIN USSD a été réinitialisé par la banque',
  what: (username, when) => [
    `Le code PIN USSD de votre compte (${username}) a été réinitialisé par un employé de la banque le ${when} (UTC).`,
    'Votre ancien code PIN ne fonctionne plus. Un nouveau code PIN se choisit avec la banque : c\'est vous',
    'qui le saisissez, et personne à la banque ne doit vous demander de le lui dire.',
  ],
  advice: [
    'Si ce n\'était pas vous, ou si vous ne l\'avez pas demandé à la banque, appelez-nous immédiatement au',
    'numéro que vous connaissez déjà : quelqu\'un pourrait essayer de prendre le contrôle de votre compte.',
  ],
  signature: ['Sécurité de l\'information', 'Ce message a été envoyé automatiquement ; les réponses ne sont pas lues.'],
  sms: (sender, when) => `${sender} : votre code PIN USSD a été réinitialisé par la banque le ${when} UTC. Pas vous ? Appelez-nous au numéro connu.`,
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };

/** The email to the account's address. */
export function pinResetMail(to: string, r: PinResetRecipient, at: Date): MailMessage {
  const w = wordsFor(WORDS, r.language);
  return { to, subject: w.subject, text: letterText({ greeting: w.dear(addressee(r)), paragraphs: [w.what(r.username, utcMinute(at)), w.advice], closing: w.signature }) };
}

/** The text message to the account's phone: one GSM-7 segment. */
export function pinResetSms(sender: string, at: Date, language: NoticeLanguage | null): string {
  return smsText(wordsFor(WORDS, language).sms(sender, utcMinute(at)));
}

/** The contacts a notice goes to. */
export type PinNoticeChannel = 'email' | 'sms';

/** Why a delivery failed, for the audit trail: the mailer's or gateway's `reason` (safe to audit: no contact, no content), else 'internal error'. */
export function failureReason(err: unknown): string {
  return err instanceof MailDeliveryError || err instanceof SmsDeliveryError ? err.reason : 'internal error';
}

/** Called once per contact a notice could not be delivered to (after the warn log line). */
export type Undelivered = (via: PinNoticeChannel, err: unknown) => Promise<void>;

export interface PinResetNotifierDeps {
  config: Pick<Config, 'mfa' | 'sms'>;
  mailer: Mailer;
  log: Logger;
  clock: Clock;
  background: BackgroundWork;
}

export class PinResetNotifier {
  private readonly texts: OtpDelivery;

  constructor(private readonly deps: PinResetNotifierDeps) {
    this.texts = new OtpDelivery(deps);
  }

  /** The contacts of `user` a notice can reach now (a transport configured and an address on the account). */
  channels(user: Pick<UserRow, 'email' | 'phone'>): PinNoticeChannel[] {
    return [...(this.deps.mailer.configured && user.email ? ['email' as const] : []), ...(this.deps.config.sms.url !== undefined && user.phone ? ['sms' as const] : [])];
  }

  /**
   * Tells every reachable contact; returns at once with the channels it is sending by (being
   * sent, not yet delivered). A delivery that fails is logged at warn, then given to
   * `undelivered` (its own failure logged at error). Never throws, never rejects.
   */
  tell(user: UserRow, at: Date, reference: string, undelivered?: Undelivered): PinNoticeChannel[] {
    const { config, mailer, log, background } = this.deps;
    const channels = this.channels(user);
    const r: PinResetRecipient = { username: user.username, fullName: user.full_name, language: user.language };
    const failed = (via: PinNoticeChannel) => async (err: unknown): Promise<void> => {
      log.warn({ err, user_id: user.uuid, via }, 'PIN reset notice not delivered');
      await undelivered?.(via, err).catch((e: unknown) => log.error({ err: e, user_id: user.uuid, via }, 'PIN reset notice not delivered, and that could not be recorded'));
    };
    if (channels.includes('email')) background.track(mailer.send(pinResetMail(user.email!, r, at)).catch(failed('email')));
    if (channels.includes('sms')) background.track(this.texts.sendText(user.phone!, pinResetSms(config.sms.sender, at, user.language), reference).catch(failed('sms')));
    return channels;
  }

  /** Resolves once the notices sent so far have gone (or failed): for closing, and tests. */
  settled(): Promise<void> {
    return this.deps.background.settled();
  }
}
