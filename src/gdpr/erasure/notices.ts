/**
 * The notices of an erasure, in the account's language (`en`, `pt`, `fr`; English when unset),
 * by email and by SMS: `requested` (when it will happen, how to cancel: the one-click link when
 * GDPR_ERASURE_CANCEL_URL is set, or signing the cancel with the username and password) and
 * `cancelled`. They name the account by its username only, never a contact.
 */
import type { MailMessage } from '../../mail/mailer.js';
import { wordsFor, type NoticeLanguage } from '../../platform/notices/language.js';
import { addressee, letterText } from '../../platform/notices/letter.js';
import { smsText } from '../../platform/notices/sms.js';
import { utcMinute } from '../../platform/notices/time.js';

export type ErasureNotice = 'requested' | 'cancelled';

export interface ErasureNoticeInput {
  notice: ErasureNotice;
  language: NoticeLanguage | null;
  username: string;
  fullName: string | null;
  eraseAfter: Date;
  /** The one-click cancel link (its token in the fragment); absent when no cancel page is configured. */
  cancelLink?: string;
}

interface Words {
  subject: Record<ErasureNotice, string>;
  dear: (name: string) => string;
  requested: (username: string, at: string) => string;
  cancelByLink: (link: string) => string;
  cancelBySignIn: string;
  notYou: string;
  cancelled: (username: string) => string;
  closing: string;
  /** Each fits one GSM-7 segment (160 septets) once its accents are removed (src/platform/notices/every-sms.test.ts). */
  sms: Record<ErasureNotice, (at: string) => string>;
}

const EN: Words = {
  subject: { requested: 'Your account will be erased', cancelled: 'The erasure of your account is cancelled' },
  dear: (name) => `Dear ${name},`,
  requested: (username, at) => `You asked us to erase your account (${username}). It can no longer be used, and it will be erased on ${at} (UTC). The records the law requires the bank to keep are kept without your name or contacts.`,
  cancelByLink: (link) => `To keep your account, open this link before then: ${link}`,
  cancelBySignIn: 'To keep your account, cancel the erasure in the app with your username and password before then.',
  notYou: 'If you did not ask for this, cancel it now and change your password.',
  cancelled: (username) => `The erasure of your account (${username}) is cancelled: you can sign in again as usual.`,
  closing: 'Data Protection Office\nThis message was sent automatically; replies are not read.',
  sms: {
    requested: (at) => `Bank: your account will be erased on ${at} UTC as you asked. Not you? Cancel it from the email we sent, or in the app.`,
    cancelled: () => 'Bank: the erasure of your account is cancelled; you can sign in again.',
  },
};

const PT: Words = {
  subject: { requested: 'A sua conta vai ser apagada', cancelled: 'O apagamento da sua conta foi cancelado' },
  dear: (name) => `Caro(a) ${name},`,
  requested: (username, at) => `Pediu-nos para apagar a sua conta (${username}). Já não pode ser usada e será apagada em ${at} (UTC). Os registos que a lei obriga o banco a conservar são guardados sem o seu nome nem contactos.`,
  cancelByLink: (link) => `Para manter a sua conta, abra esta ligação antes dessa data: ${link}`,
  cancelBySignIn: 'Para manter a sua conta, cancele o apagamento na aplicação com o seu nome de utilizador e palavra-passe antes dessa data.',
  notYou: 'Se não foi você que o pediu, cancele-o já e altere a sua palavra-passe.',
  cancelled: (username) => `O apagamento da sua conta (${username}) foi cancelado: pode voltar a entrar como habitualmente.`,
  closing: 'Gabinete de Proteção de Dados\nEsta mensagem foi enviada automaticamente; as respostas não são lidas.',
  sms: {
    requested: (at) => `Banco: a sua conta será apagada em ${at} UTC, como pediu. Não foi você? Cancele pelo email que enviámos, ou na aplicação.`,
    cancelled: () => 'Banco: o apagamento da sua conta foi cancelado; pode voltar a entrar.',
  },
};

const FR: Words = {
  subject: { requested: 'Votre compte va être effacé', cancelled: "L'effacement de votre compte est annulé" },
  dear: (name) => `Bonjour ${name},`,
  requested: (username, at) => `Vous nous avez demandé d'effacer votre compte (${username}). Il ne peut plus être utilisé et sera effacé le ${at} (UTC). Les enregistrements que la loi oblige la banque à conserver le sont sans votre nom ni vos coordonnées.`,
  cancelByLink: (link) => `Pour garder votre compte, ouvrez ce lien avant cette date : ${link}`,
  cancelBySignIn: "Pour garder votre compte, annulez l'effacement dans l'application avec votre identifiant et votre mot de passe avant cette date.",
  notYou: "Si vous n'êtes pas à l'origine de cette demande, annulez-la tout de suite et changez votre mot de passe.",
  cancelled: (username) => `L'effacement de votre compte (${username}) est annulé : vous pouvez vous connecter comme d'habitude.`,
  closing: 'Délégué à la protection des données\nCe message a été envoyé automatiquement ; les réponses ne sont pas lues.',
  sms: {
    requested: (at) => `Banque : votre compte sera effacé le ${at} UTC, comme demandé. Pas vous ? Annulez depuis l'e-mail envoyé, ou dans l'application.`,
    cancelled: () => "Banque : l'effacement de votre compte est annulé ; vous pouvez vous reconnecter.",
  },
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };
const wordsOf = (n: { language: NoticeLanguage | null }): Words => wordsFor(WORDS, n.language);

/** The email of an erasure notice. */
export function erasureMail(to: string, n: ErasureNoticeInput): MailMessage {
  const w = wordsOf(n);
  const paragraphs = n.notice === 'requested'
    ? [w.requested(n.username, utcMinute(n.eraseAfter)), n.cancelLink ? w.cancelByLink(n.cancelLink) : w.cancelBySignIn, w.notYou]
    : [w.cancelled(n.username)];
  return { to, subject: w.subject[n.notice], text: letterText({ greeting: w.dear(addressee(n)), paragraphs, closing: w.closing }) };
}

/** The text message of an erasure notice: one GSM-7 segment, no link. */
export function erasureSms(n: ErasureNoticeInput): string {
  return smsText(wordsOf(n).sms[n.notice](utcMinute(n.eraseAfter)));
}
