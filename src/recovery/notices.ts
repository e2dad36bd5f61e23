/**
 * The security notices of account recovery, in the account holder's language (`en`, `pt`,
 * `fr`; English when unset): when a workflow starts, when a recovered second factor or device
 * starts its cooling-off (`waiting`, with the time it takes effect), when it completes, and when
 * it was cancelled from a notice. Sent to every contact the account has: the email address, the
 * phone by SMS (through the SMS gateway, when one is configured), and its registered devices by
 * push (through the push outbox, when push is configured); see RecoveryNotifier in notify.ts.
 *
 * Each notice (but the cancellation's) may carry a one-click "this was not me" link: its
 * single-use cancel token is in the URL's fragment (`#`), which browsers never send to a
 * server, so it reaches no log. Otherwise plain text: no code, no recovery id, no reference.
 * The SMS is sent in GSM-7, one segment (src/platform/notices/sms.ts), so it names what was
 * recovered in a word or two and only the completed notice does so.
 */
import type { MailMessage } from '../mail/mailer.js';
import { wordsFor, type NoticeLanguage } from '../platform/notices/language.js';
import { addressee, letterText } from '../platform/notices/letter.js';
import { smsText } from '../platform/notices/sms.js';
import { utcMinute } from '../platform/notices/time.js';
import type { RecoveryKind } from './matrix.js';

/** `cancelled`: from the notice's link (recovery is then locked); `stopped`: by the person, signed in (no lock). */
export type RecoveryNotice = 'started' | 'waiting' | 'completed' | 'cancelled' | 'stopped';

export interface NoticeInput {
  notice: RecoveryNotice;
  kind: RecoveryKind;
  language: NoticeLanguage | null;
  username: string;
  fullName: string | null;
  /** `waiting`: when the recovery takes effect unless cancelled. */
  until?: Date;
  /** The "this was not me" link (fragment included), when the bank set RECOVERY_CANCEL_URL. */
  cancelLink?: string;
}

interface Words {
  lost: Record<RecoveryKind, string>;
  /** The same, short enough for a text message that also names a 64-character username. */
  smsLost: Record<RecoveryKind, string>;
  subject: Record<RecoveryNotice, string>;
  dear: (name: string) => string;
  body: (n: NoticeInput, lost: string, when: string) => Record<RecoveryNotice, string>;
  notMe: (link: string) => string;
  noLink: string;
  closing: string;
  /**
   * The SMS, and the push body. Each fits one GSM-7 segment (160 septets) once its accents are
   * removed, with a 64-character username and the `lost` of `smsLost` (src/platform/notices/every-sms.test.ts).
   */
  sms: (n: NoticeInput, lost: string, when: string) => Record<RecoveryNotice, string>;
}

const EN: Words = {
  lost: { password: 'password', pin: 'USSD PIN', mfa: 'second factors (authenticator app, one-time codes)', device: 'registered device' },
  smsLost: { password: 'password', pin: 'PIN', mfa: 'second factors', device: 'device' },
  subject: { started: 'Someone started recovering your account', waiting: 'Your account will be recovered unless you stop it', completed: 'Your account has been recovered', cancelled: 'The recovery of your account was stopped', stopped: 'The recovery of your account was stopped' },
  dear: (name) => `Dear ${name},`,
  body: (n, lost, when) => ({
    started: `Someone started recovering the ${lost} of your account (${n.username}). Nothing has changed yet: they must first prove who they are.`,
    waiting: `Someone proved who they are to recover the ${lost} of your account (${n.username}). It will take effect on ${when} (UTC): your current ${lost} will then be removed and every session signed out.`,
    completed: `The ${lost} of your account (${n.username}) has been recovered. Every session of the account has been signed out.`,
    cancelled: `The recovery of the ${lost} of your account (${n.username}) was stopped from a notice, and recovery is locked for a while. You can still sign in as usual.`,
    stopped: `The recovery of the ${lost} of your account (${n.username}) was stopped from a signed-in session. If you did not stop it, someone may be using your account: use the "this was not me" link of the email we sent when it started, which also blocks new attempts for a while, and contact the bank.`,
  }),
  notMe: (link) => `If this was not you, stop it now with one click: ${link}`,
  noLink: 'If this was not you, contact the bank at once through the number or address you already know.',
  closing: 'Never share a code the bank sends you, not even with someone who says they work for the bank.\n\nInformation Security\nThis message was sent automatically; replies are not read.',
  sms: (n, lost, when) => ({
    started: `Bank: someone started recovering account ${n.username}. Not you? Check your email to stop it.`,
    waiting: `Bank: account ${n.username} will be recovered on ${when} UTC. Not you? Check your email to stop it.`,
    completed: `Bank: account ${n.username} has been recovered (${lost}). Not you? Call the bank now.`,
    cancelled: `Bank: the recovery of account ${n.username} was stopped.`,
    stopped: `Bank: the recovery of account ${n.username} was stopped while signed in. Not you? Check your email.`,
  }),
};

const PT: Words = {
  lost: { password: 'palavra-passe', pin: 'PIN USSD', mfa: 'segundos fatores (aplicação autenticadora, códigos únicos)', device: 'dispositivo registado' },
  smsLost: { password: 'palavra-passe', pin: 'PIN', mfa: 'segundos fatores', device: 'dispositivo' },
  subject: { started: 'Alguém iniciou a recuperação da sua conta', waiting: 'A sua conta será recuperada se não o impedir', completed: 'A sua conta foi recuperada', cancelled: 'A recuperação da sua conta foi interrompida', stopped: 'A recuperação da sua conta foi interrompida' },
  dear: (name) => `Caro(a) ${name},`,
  body: (n, lost, when) => ({
    started: `Alguém iniciou a recuperação de: ${lost}, da sua conta (${n.username}). Nada mudou ainda: primeiro tem de provar quem é.`,
    waiting: `Alguém provou a sua identidade para recuperar: ${lost}, da sua conta (${n.username}). Terá efeito em ${when} (UTC): o atual será removido e todas as sessões terminadas.`,
    completed: `Foi recuperado(a): ${lost}, da sua conta (${n.username}). Todas as sessões da conta foram terminadas.`,
    cancelled: `A recuperação de: ${lost}, da sua conta (${n.username}) foi interrompida a partir de um aviso, e a recuperação fica bloqueada durante algum tempo. Pode continuar a entrar normalmente.`,
    stopped: `A recuperação de: ${lost}, da sua conta (${n.username}) foi interrompida numa sessão iniciada. Se não foi você, alguém pode estar a usar a sua conta: use a ligação "não fui eu" do email que enviámos quando começou, que também bloqueia novas tentativas durante algum tempo, e contacte o banco.`,
  }),
  notMe: (link) => `Se não foi você, interrompa-a já com um clique: ${link}`,
  noLink: 'Se não foi você, contacte o banco de imediato pelo número ou endereço que já conhece.',
  closing: 'Nunca partilhe um código que o banco lhe envie, nem com quem diga trabalhar para o banco.\n\nSegurança da Informação\nEsta mensagem foi enviada automaticamente; as respostas não são lidas.',
  sms: (n, lost, when) => ({
    started: `Banco: alguém iniciou a recuperação da conta ${n.username}. Não foi você? Veja o email para a interromper.`,
    waiting: `Banco: a conta ${n.username} será recuperada em ${when} UTC. Não foi você? Impeça-o pelo email.`,
    completed: `Banco: a conta ${n.username} foi recuperada (${lost}). Não foi você? Ligue já para o banco.`,
    cancelled: `Banco: a recuperação da conta ${n.username} foi interrompida.`,
    stopped: `Banco: a recuperação da conta ${n.username} foi interrompida numa sessão. Não foi você? Veja o email.`,
  }),
};

const FR: Words = {
  lost: { password: 'mot de passe', pin: 'code PIN USSD', mfa: 'seconds facteurs (application d\'authentification, codes à usage unique)', device: 'appareil enregistré' },
  smsLost: { password: 'mot de passe', pin: 'PIN', mfa: 'seconds facteurs', device: 'appareil' },
  subject: { started: 'Quelqu\'un a commencé à récupérer votre compte', waiting: 'Votre compte sera récupéré si vous ne l\'arrêtez pas', completed: 'Votre compte a été récupéré', cancelled: 'La récupération de votre compte a été arrêtée', stopped: 'La récupération de votre compte a été arrêtée' },
  dear: (name) => `Bonjour ${name},`,
  body: (n, lost, when) => ({
    started: `Quelqu'un a commencé à récupérer : ${lost}, de votre compte (${n.username}). Rien n'a encore changé : il doit d'abord prouver son identité.`,
    waiting: `Quelqu'un a prouvé son identité pour récupérer : ${lost}, de votre compte (${n.username}). Cela prendra effet le ${when} (UTC) : l'actuel sera alors supprimé et toutes les sessions fermées.`,
    completed: `Récupération effectuée : ${lost}, de votre compte (${n.username}). Toutes les sessions du compte ont été fermées.`,
    cancelled: `La récupération de : ${lost}, de votre compte (${n.username}) a été arrêtée depuis un avis, et la récupération est bloquée pour un temps. Vous pouvez toujours vous connecter normalement.`,
    stopped: `La récupération de : ${lost}, de votre compte (${n.username}) a été arrêtée depuis une session connectée. Si ce n'était pas vous, quelqu'un utilise peut-être votre compte : utilisez le lien « ce n'était pas moi » de l'e-mail envoyé au début, qui bloque aussi les nouvelles tentatives pour un temps, et contactez la banque.`,
  }),
  notMe: (link) => `Si ce n'était pas vous, arrêtez-la tout de suite en un clic : ${link}`,
  noLink: 'Si ce n\'était pas vous, contactez la banque immédiatement par le numéro ou l\'adresse que vous connaissez déjà.',
  closing: 'Ne communiquez jamais un code envoyé par la banque, même à quelqu\'un qui dit y travailler.\n\nSécurité de l\'information\nCe message a été envoyé automatiquement ; les réponses ne sont pas lues.',
  sms: (n, lost, when) => ({
    started: `Banque : récupération du compte ${n.username} lancée. Pas vous ? Consultez vos e-mails pour l'arrêter.`,
    waiting: `Banque : le compte ${n.username} sera récupéré le ${when} UTC. Pas vous ? Annulez depuis l'e-mail.`,
    completed: `Banque : le compte ${n.username} a été récupéré (${lost}). Pas vous ? Appelez la banque.`,
    cancelled: `Banque : la récupération du compte ${n.username} a été arrêtée.`,
    stopped: `Banque : la récupération du compte ${n.username} a été arrêtée en session. Pas vous ? Voir e-mail.`,
  }),
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };

const wordsOf = (n: NoticeInput): Words => wordsFor(WORDS, n.language);
const whenOf = (n: NoticeInput): string => (n.until ? utcMinute(n.until) : '');
/** The short text of a notice, as written (the push body; the SMS is its GSM-7 form). */
const shortText = (n: NoticeInput): string => {
  const w = wordsOf(n);
  return w.sms(n, w.smsLost[n.kind], whenOf(n))[n.notice];
};

/** The email of a notice. */
export function noticeMail(to: string, n: NoticeInput): MailMessage {
  const w = wordsOf(n);
  const action = n.notice === 'cancelled' || n.notice === 'stopped' ? [] : [n.cancelLink ? w.notMe(n.cancelLink) : w.noLink];
  return {
    to,
    subject: w.subject[n.notice],
    text: letterText({ greeting: w.dear(addressee(n)), paragraphs: [w.body(n, w.lost[n.kind], whenOf(n))[n.notice], ...action], closing: w.closing }),
  };
}

/** The text message of a notice: one GSM-7 segment, no link (a link in an SMS is what phishing looks like). */
export function noticeSms(n: NoticeInput): string {
  return smsText(shortText(n));
}

/** The push notification of a notice (push carries any character, so its accents stay). */
export function noticePush(n: NoticeInput): { title: string; body: string } {
  return { title: wordsOf(n).subject[n.notice], body: shortText(n) };
}
