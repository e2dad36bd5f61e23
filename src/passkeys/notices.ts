/**
 * The notice to an account holder that a passkey was added to or removed from their account, in
 * their language (`en`, `pt`, `fr`; English when unset), plain text and without links. It goes as
 * a contact change's notice does (src/gdpr/profile/delivery.ts), the closest security change the
 * service already tells: by email when mail is configured and the account has an address, else
 * by SMS (one GSM-7 segment) to its phone. The service has no notice of its own for a new factor;
 * a passkey is one that signs in with no password at all, so its holder hears of it.
 *
 * The passkey's name is never shown: whoever added it chose it, and an intruder's name ("call
 * this number to cancel") must not reach the holder in the bank's own words. The notice says
 * what happened and when (UTC), and who to call if it was not them.
 */
import type { Logger } from 'pino';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import type { OtpService } from '../mfa/otp/service.js';
import type { BackgroundWork } from '../platform/background.js';
import type { Config } from '../platform/config.js';
import { wordsFor, type NoticeLanguage } from '../platform/notices/language.js';
import { addressee, letterText } from '../platform/notices/letter.js';
import { smsText } from '../platform/notices/sms.js';
import { utcMinute } from '../platform/notices/time.js';
import type { UserRow } from '../users/store.js';

export type PasskeyNoticeKind = 'added' | 'removed';

export interface PasskeyNotice {
  kind: PasskeyNoticeKind;
  at: Date;
  /** Removed by an administrator of the bank (a lost or stolen device). */
  byAdmin?: boolean;
}

export interface NoticeRecipient {
  username: string;
  fullName: string | null;
  language: NoticeLanguage | null;
}

interface Words {
  dear: (name: string) => string;
  subject: Record<PasskeyNoticeKind, string>;
  what: (n: PasskeyNotice, username: string, when: string) => string[];
  advice: Record<PasskeyNoticeKind, string[]>;
  signature: string[];
  /** One GSM-7 segment once accents are removed, with the longest sender (src/platform/notices/every-sms.test.ts). */
  sms: (sender: string, n: PasskeyNotice, when: string) => string;
}

const EN: Words = {
  dear: (name) => `Dear ${name},`,
  subject: { added: 'A passkey was added to your account', removed: 'A passkey was removed from your account' },
  what: (n, username, when) => (n.kind === 'added'
    ? [
      `A passkey was added to your account (${username}) on ${when} (UTC). A passkey lets a phone or`,
      'computer sign in to your account with its fingerprint, face or screen lock, without your password.',
    ]
    : [`A passkey was removed from your account (${username}) on ${when} (UTC)${n.byAdmin ? ' by an administrator of the bank' : ''}.`, 'It can no longer be used to sign in.']),
  advice: {
    added: [
      'If this was you, there is nothing to do. If it was not, someone else may be able to sign in',
      'to your account: contact the bank at once through the number or address you already know.',
    ],
    removed: [
      'If this was you, or you asked the bank to do it, there is nothing to do. If it was not, contact',
      'the bank through the number or address you already know.',
    ],
  },
  signature: ['Information Security', 'This message was sent automatically; replies are not read.'],
  sms: (sender, n, when) => `${sender}: a passkey was ${n.kind === 'added' ? 'added to' : 'removed from'} your account on ${when} UTC. Not you? Call the bank on the number you know.`,
};

const PT: Words = {
  dear: (name) => `Caro(a) ${name},`,
  subject: { added: 'Foi adicionada uma chave de acesso à sua conta', removed: 'Foi removida uma chave de acesso da sua conta' },
  what: (n, username, when) => (n.kind === 'added'
    ? [
      `Foi adicionada uma chave de acesso (passkey) à sua conta (${username}) em ${when} (UTC). Uma chave de`,
      'acesso permite a um telemóvel ou computador entrar na sua conta com a impressão digital, o rosto ou',
      'o bloqueio de ecrã, sem a sua palavra-passe.',
    ]
    : [`Foi removida uma chave de acesso (passkey) da sua conta (${username}) em ${when} (UTC)${n.byAdmin ? ' por um administrador do banco' : ''}.`, 'Já não pode ser utilizada para entrar.']),
  advice: {
    added: [
      'Se foi você, não tem de fazer nada. Caso contrário, outra pessoa poderá entrar na sua conta:',
      'contacte o banco de imediato pelo número ou endereço que já conhece.',
    ],
    removed: [
      'Se foi você, ou se o pediu ao banco, não tem de fazer nada. Caso contrário, contacte o banco pelo',
      'número ou endereço que já conhece.',
    ],
  },
  signature: ['Segurança da Informação', 'Esta mensagem foi enviada automaticamente; as respostas não são lidas.'],
  sms: (sender, n, when) => `${sender}: foi ${n.kind === 'added' ? 'adicionada uma chave de acesso à' : 'removida uma chave de acesso da'} sua conta em ${when} UTC. Não foi você? Ligue para o banco.`,
};

const FR: Words = {
  dear: (name) => `Bonjour ${name},`,
  subject: { added: 'Une clé d\'accès a été ajoutée à votre compte', removed: 'Une clé d\'accès a été supprimée de votre compte' },
  what: (n, username, when) => (n.kind === 'added'
    ? [
      `Une clé d'accès (passkey) a été ajoutée à votre compte (${username}) le ${when} (UTC). Une clé d'accès`,
      'permet à un téléphone ou à un ordinateur de se connecter à votre compte avec l\'empreinte digitale, le',
      'visage ou le verrouillage de l\'écran, sans votre mot de passe.',
    ]
    : [`Une clé d'accès (passkey) a été supprimée de votre compte (${username}) le ${when} (UTC)${n.byAdmin ? ' par un administrateur de la banque' : ''}.`, 'Elle ne permet plus de se connecter.']),
  advice: {
    added: [
      'Si vous êtes à l\'origine de cet ajout, vous n\'avez rien à faire. Sinon, quelqu\'un d\'autre pourrait se',
      'connecter à votre compte : contactez la banque sans attendre par le numéro ou l\'adresse que vous connaissez déjà.',
    ],
    removed: [
      'Si vous en êtes à l\'origine, ou l\'avez demandé à la banque, vous n\'avez rien à faire. Sinon, contactez',
      'la banque par le numéro ou l\'adresse que vous connaissez déjà.',
    ],
  },
  signature: ['Sécurité de l\'information', 'Ce message a été envoyé automatiquement ; les réponses ne sont pas lues.'],
  sms: (sender, n, when) => `${sender} : une clé d'accès a été ${n.kind === 'added' ? 'ajoutée à' : 'supprimée de'} votre compte le ${when} UTC. Pas vous ? Appelez la banque.`,
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };

/** The email to the account's address. */
export function passkeyNoticeMail(to: string, r: NoticeRecipient, n: PasskeyNotice): MailMessage {
  const w = wordsFor(WORDS, r.language);
  return {
    to, subject: w.subject[n.kind],
    text: letterText({ greeting: w.dear(addressee(r)), paragraphs: [w.what(n, r.username, utcMinute(n.at)), w.advice[n.kind]], closing: w.signature }),
  };
}

/** The text message to the account's phone: one GSM-7 segment. */
export function passkeyNoticeSms(sender: string, n: PasskeyNotice, language: NoticeLanguage | null): string {
  return smsText(wordsFor(WORDS, language).sms(sender, n, utcMinute(n.at)));
}

export interface PasskeyNotifierDeps {
  config: Pick<Config, 'sms'>;
  mailer: Pick<Mailer, 'configured' | 'send'>;
  otp: Pick<OtpService, 'sendRecoveryNotice'>;
  log: Pick<Logger, 'warn'>;
  background: BackgroundWork;
}

/** Sends the notices in the background (a registration's answer never waits for a mail server); `settled` waits for them. */
export class PasskeyNotifier {
  constructor(private readonly deps: PasskeyNotifierDeps) {}

  /** Tells the holder by email, else SMS. Never rejects: a notice that cannot go is logged at warn. */
  tell(user: UserRow, n: PasskeyNotice, reference: string): void {
    const { config, mailer, otp, log, background } = this.deps;
    const r: NoticeRecipient = { username: user.username, fullName: user.full_name, language: user.language };
    background.track((async () => {
      if (mailer.configured && user.email) await mailer.send(passkeyNoticeMail(user.email, r, n));
      else if (user.phone) await otp.sendRecoveryNotice(user, passkeyNoticeSms(config.sms.sender, n, user.language), reference);
    })().catch((err: unknown) => log.warn({ err, user_id: user.uuid, kind: n.kind }, 'passkey notice not delivered')));
  }

  settled(): Promise<void> {
    return this.deps.background.settled();
  }
}
