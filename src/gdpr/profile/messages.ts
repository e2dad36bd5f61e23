/**
 * The messages of a contact change, in the bank's voice and the account holder's language (`en`,
 * `pt`, `fr`; English when unset), plain text and without links (a customer reaches the bank by
 * the address they already know): the code sent to the NEW address, and the notices sent to the
 * OLD one when the change is requested and when it takes effect. A notice shows the new address
 * masked only: whoever reads the old mailbox learns nothing to reuse.
 *
 * Every text message is sent in the GSM-7 alphabet and fits one segment with the default sender
 * (see src/platform/notices/sms.ts): its accents are removed where GSM-7 lacks them.
 */
import type { MailMessage } from '../../mail/mailer.js';
import { wordsFor, type NoticeLanguage } from '../../platform/notices/language.js';
import { addressee, letterText, type Paragraph } from '../../platform/notices/letter.js';
import { fitsOneSegment, smsText } from '../../platform/notices/sms.js';

export type ContactKind = 'email' | 'phone';
export type NoticeStage = 'requested' | 'changed';

export interface ContactNotice {
  stage: NoticeStage;
  kind: ContactKind;
  /** The new address, masked. */
  newMasked: string;
}

interface Recipient {
  username: string;
  fullName: string | null;
  language: NoticeLanguage | null;
}

interface Words {
  noun: Record<ContactKind, string>;
  minutes: (n: number) => string;
  dear: (name: string) => string;
  signature: string[];
  codeSubject: string;
  codeText: (code: string, validity: string) => Paragraph[];
  codeSms: (sender: string, code: string, validity: string) => string;
  subject: (n: ContactNotice) => string;
  what: (n: ContactNotice) => string[];
  advice: string[];
  /** `to`: the masked new address, or null when it is left out (a long one). */
  noticeSms: (sender: string, n: ContactNotice, to: string | null) => string;
}

const EN: Words = {
  noun: { email: 'email address', phone: 'phone number' },
  minutes: (n) => `${n} minute${n === 1 ? '' : 's'}`,
  dear: (name) => `Dear ${name},`,
  signature: ['Information Security', 'This message was sent automatically; replies are not read.'],
  codeSubject: 'Confirm your new email address',
  codeText: (code, validity) => [
    [
      'You asked to use this email address for your account with the bank. To confirm it, enter',
      'this one-time code where you made the change:',
    ],
    `Code: ${code}`,
    [
      `It is valid for ${validity} and works only once. Until it is entered, your account keeps its`,
      'current email address.',
    ],
    [
      'Never share this code with anyone, not even someone who says they work for the bank: the bank',
      'will never ask you for it. If you did not ask for this change, ignore this message.',
    ],
  ],
  codeSms: (sender, code, validity) => `${code} is your ${sender} code to confirm this number for your account. Valid ${validity}. Never share it: the bank never asks for it.`,
  subject: (n) => (n.stage === 'requested' ? `A change of your ${EN.noun[n.kind]} was requested` : `Your ${EN.noun[n.kind]} has been changed`),
  what: (n) => (n.stage === 'requested'
    ? [`Someone signed in to your account asked to change its ${EN.noun[n.kind]} to ${n.newMasked}. The change`, 'takes effect only once the code sent to the new address is entered.']
    : [`The ${EN.noun[n.kind]} of your account has been changed to ${n.newMasked}.`, n.kind === 'email' ? 'Messages from the bank will go there from now on.' : 'Text messages from the bank will go there from now on.']),
  advice: [
    'If this was you, there is nothing to do. If it was not, someone may know your password:',
    'change it, and contact the bank through the number or address you already know.',
  ],
  noticeSms: (sender, n, to) => {
    const noun = n.kind === 'email' ? 'email' : 'phone number';
    const at = to ? ` to ${to}` : '';
    const what = n.stage === 'requested' ? `a change of your ${noun}${at} was requested` : `your ${noun} was changed${at}`;
    return `${sender}: ${what}. Not you? Call the bank on the number you know.`;
  },
};

const PT: Words = {
  noun: { email: 'endereço de email', phone: 'número de telefone' },
  minutes: (n) => `${n} minuto${n === 1 ? '' : 's'}`,
  dear: (name) => `Caro(a) ${name},`,
  signature: ['Segurança da Informação', 'Esta mensagem foi enviada automaticamente; as respostas não são lidas.'],
  codeSubject: 'Confirme o seu novo endereço de email',
  codeText: (code, validity) => [
    [
      'Pediu para utilizar este endereço de email na sua conta no banco. Para o confirmar, introduza',
      'este código único no local onde efetuou a alteração:',
    ],
    `Código: ${code}`,
    [
      `É válido durante ${validity} e só pode ser utilizado uma vez. Até ser introduzido, a sua conta`,
      'mantém o endereço de email atual.',
    ],
    [
      'Nunca partilhe este código com ninguém, nem com quem diga trabalhar para o banco: o banco',
      'nunca lho pedirá. Se não pediu esta alteração, ignore esta mensagem.',
    ],
  ],
  codeSms: (sender, code, validity) => `${code} é o seu código ${sender} para confirmar este número na sua conta. Válido ${validity}. Nunca o partilhe: o banco nunca lho pede.`,
  subject: (n) => (n.stage === 'requested' ? `Foi pedida a alteração do seu ${PT.noun[n.kind]}` : `O seu ${PT.noun[n.kind]} foi alterado`),
  what: (n) => (n.stage === 'requested'
    ? [`Alguém com sessão iniciada na sua conta pediu para alterar o seu ${PT.noun[n.kind]} para ${n.newMasked}.`, 'A alteração só tem efeito depois de introduzido o código enviado para o novo contacto.']
    : [`O ${PT.noun[n.kind]} da sua conta foi alterado para ${n.newMasked}.`, n.kind === 'email' ? 'A partir de agora, as mensagens do banco serão enviadas para esse endereço.' : 'A partir de agora, as mensagens de texto do banco serão enviadas para esse número.']),
  advice: [
    'Se foi você, não tem de fazer nada. Caso contrário, alguém poderá conhecer a sua palavra-passe:',
    'altere-a e contacte o banco pelo número ou endereço que já conhece.',
  ],
  noticeSms: (sender, n, to) => {
    const noun = n.kind === 'email' ? 'email' : 'número de telefone';
    const at = to ? ` para ${to}` : '';
    const what = n.stage === 'requested' ? `foi pedida a alteração do seu ${noun}${at}` : `o seu ${noun} foi alterado${at}`;
    return `${sender}: ${what}. Não foi você? Ligue para o banco pelo número que conhece.`;
  },
};

const FR: Words = {
  noun: { email: 'adresse e-mail', phone: 'numéro de téléphone' },
  minutes: (n) => `${n} minute${n === 1 ? '' : 's'}`,
  dear: (name) => `Bonjour ${name},`,
  signature: ['Sécurité de l\'information', 'Ce message a été envoyé automatiquement ; les réponses ne sont pas lues.'],
  codeSubject: 'Confirmez votre nouvelle adresse e-mail',
  codeText: (code, validity) => [
    [
      'Vous avez demandé à utiliser cette adresse e-mail pour votre compte auprès de la banque. Pour la',
      'confirmer, saisissez ce code à usage unique là où vous avez effectué la modification :',
    ],
    `Code : ${code}`,
    [
      `Il est valable ${validity} et ne peut servir qu'une seule fois. Tant qu'il n'est pas saisi, votre`,
      'compte conserve son adresse e-mail actuelle.',
    ],
    [
      'Ne communiquez jamais ce code, même à quelqu\'un qui dit travailler pour la banque : la banque ne',
      'vous le demandera jamais. Si vous n\'êtes pas à l\'origine de cette demande, ignorez ce message.',
    ],
  ],
  codeSms: (sender, code, validity) => `${code} est votre code ${sender} pour confirmer ce numéro sur votre compte. Valable ${validity}. Ne le communiquez jamais : la banque ne le demande pas.`,
  subject: (n) => (n.stage === 'requested'
    ? `Une modification de votre ${FR.noun[n.kind]} a été demandée`
    : n.kind === 'email' ? 'Votre adresse e-mail a été modifiée' : 'Votre numéro de téléphone a été modifié'),
  what: (n) => (n.stage === 'requested'
    ? [`Une personne connectée à votre compte a demandé à remplacer votre ${FR.noun[n.kind]} par ${n.newMasked}.`, `La modification ne prendra effet qu'une fois saisi le code envoyé ${n.kind === 'email' ? 'à la nouvelle adresse' : 'au nouveau numéro'}.`]
    : n.kind === 'email'
      ? [`L'adresse e-mail de votre compte a été remplacée par ${n.newMasked}.`, 'Les messages de la banque y seront désormais envoyés.']
      : [`Le numéro de téléphone de votre compte a été remplacé par ${n.newMasked}.`, 'Les SMS de la banque y seront désormais envoyés.']),
  advice: [
    'Si vous êtes à l\'origine de cette opération, vous n\'avez rien à faire. Sinon, quelqu\'un connaît peut-être',
    'votre mot de passe : changez-le et contactez la banque par le numéro ou l\'adresse que vous connaissez déjà.',
  ],
  noticeSms: (sender, n, to) => {
    const at = to ? ` par ${to}` : '';
    const what = n.stage === 'requested'
      ? `le remplacement de votre ${n.kind === 'email' ? 'e-mail' : 'numéro'}${at} a été demandé`
      : n.kind === 'email' ? `votre e-mail a été remplacé${at}` : `votre numéro a été remplacé${at}`;
    return `${sender} : ${what}. Pas vous ? Appelez la banque au numéro que vous connaissez.`;
  },
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };
const wordsOf = (language: NoticeLanguage | null): Words => wordsFor(WORDS, language);

const greeting = (w: Words, r: Recipient): string => w.dear(addressee(r));

/** The email to the new address carrying its code; the code stands alone on its labelled line. */
export function contactCodeMail(to: string, r: Recipient, code: string, validityMinutes: number): MailMessage {
  const w = wordsOf(r.language);
  return { to, subject: w.codeSubject, text: letterText({ greeting: greeting(w, r), paragraphs: w.codeText(code, w.minutes(validityMinutes)), closing: w.signature }) };
}

/** The text message to the new number carrying its code (first, for autofill): one GSM-7 segment with the default sender. */
export function contactCodeSms(sender: string, code: string, validityMinutes: number, language: NoticeLanguage | null): string {
  const w = wordsOf(language);
  return smsText(w.codeSms(sender, code, w.minutes(validityMinutes)));
}

/** The email to the old address. */
export function contactNoticeMail(to: string, r: Recipient, n: ContactNotice): MailMessage {
  const w = wordsOf(r.language);
  return { to, subject: w.subject(n), text: letterText({ greeting: greeting(w, r), paragraphs: [w.what(n), w.advice], closing: w.signature }) };
}

/** The text message to the old number: one GSM-7 segment with the default sender. */
export function contactNoticeSms(sender: string, n: ContactNotice, language: NoticeLanguage | null): string {
  const w = wordsOf(language);
  const full = smsText(w.noticeSms(sender, n, n.newMasked));
  return fitsOneSegment(full) ? full : smsText(w.noticeSms(sender, n, null)); // a long email domain: the address is left out, never the warning
}
