/**
 * The notice to an account holder about a sign-in that did not look like theirs, in their
 * language (`en`, `pt`, `fr`; English when unset): what happened (a session was opened; the
 * right password was given and a second factor asked for; or the right password was given and the
 * response policy refused the sign-in, so the password is known to someone else and is to be
 * changed), when (UTC), where (the city and the
 * country when the databases know them; never the address), from what device (the browser and
 * the system its User-Agent names), and what to do if it was not them: the one-click "this was
 * not me" link (its single-use token in the URL's fragment, which browsers never send to a
 * server) or, when the bank set no RISK_NOT_ME_URL, to call the bank.
 *
 * By email (the whole notice), SMS (one GSM-7 segment: what, where, when; no link, since a link in
 * a text message is what phishing looks like) and push (the SMS's words, accents kept).
 */
import type { MailMessage } from '../../mail/mailer.js';
import { wordsFor, type NoticeLanguage } from '../../platform/notices/language.js';
import { addressee, letterText } from '../../platform/notices/letter.js';
import { smsText } from '../../platform/notices/sms.js';
import { utcMinute } from '../../platform/notices/time.js';
import type { DeviceDescription } from './device.js';

/** How the sign-in ended: a session, a second factor asked for, or a right password the response policy refused. */
export type SignInNoticeKind = 'signed_in' | 'second_factor_required' | 'refused';

export interface SignInNotice {
  kind: SignInNoticeKind;
  language: NoticeLanguage | null;
  username: string;
  fullName: string | null;
  at: Date;
  /** ISO 3166-1 alpha-2; null: unknown. */
  country: string | null;
  city: string | null;
  device: DeviceDescription;
  channel: string;
  /** The "this was not me" link (fragment included), when RISK_NOT_ME_URL is set. */
  notMeLink?: string;
}

/** The longest place a text message names: past it, the country alone, then its code. */
export const SMS_PLACE_MAX = 30;

interface Words {
  subject: Record<SignInNoticeKind, string>;
  dear: (name: string) => string;
  what: (n: SignInNotice) => Record<SignInNoticeKind, string>;
  facts: { when: string; where: string; device: string; channel: string; unknownPlace: string; unknownDevice: string; on: string; described: string };
  ifYou: string;
  notMe: (link: string) => string;
  noLink: string;
  closing: string;
  /** One GSM-7 segment once accents are removed, with a place of SMS_PLACE_MAX (src/platform/notices/every-sms.test.ts). */
  sms: (place: string, when: string, link: boolean) => Record<SignInNoticeKind, string>;
}

const EN: Words = {
  subject: { signed_in: 'A new sign-in to your account', second_factor_required: 'Your password was used to sign in', refused: 'A sign-in with your password was refused' },
  dear: (name) => `Dear ${name},`,
  what: (n) => ({
    signed_in: `Someone signed in to your account (${n.username}) in a way that does not match your usual sign-ins.`,
    second_factor_required: `Someone gave the right password of your account (${n.username}) in a way that does not match your usual sign-ins, and was asked for your second factor.`,
    refused: `Someone gave the right password of your account (${n.username}) in a way that does not match your usual sign-ins, and the sign-in was refused. Unless this was you, your password is known to someone else: change it now, in the app or through the bank's account recovery.`,
  }),
  facts: { when: 'When', where: 'Where', device: 'Device', channel: 'Channel', unknownPlace: 'unknown', unknownDevice: 'not recognised', on: 'on', described: 'as the device described itself' },
  ifYou: 'If this was you, there is nothing to do.',
  notMe: (link) => `If this was not you, open this link now: ${link}\nIt signs out every session of your account and locks the account until you recover it with the bank's account recovery.`,
  noLink: 'If this was not you, call the bank at once through the number you already know: it will sign out every session and lock the account.',
  closing: 'Never share a code the bank sends you, not even with someone who says they work for the bank.\n\nInformation Security\nThis message was sent automatically; replies are not read.',
  sms: (place, when, link) => {
    const act = link ? 'Not you? Use the link in our email or call the bank.' : 'Not you? Call the bank now.';
    const change = link ? 'Not you? Change your password: see our email.' : 'Not you? Change your password or call the bank.';
    return {
      signed_in: `Bank: new sign-in to your account from ${place} on ${when} UTC. ${act}`, second_factor_required: `Bank: your password was used from ${place} on ${when} UTC. ${act}`,
      refused: `Bank: a sign-in with your password from ${place} on ${when} UTC was refused. ${change}`,
    };
  },
};

const PT: Words = {
  subject: { signed_in: 'Um novo acesso à sua conta', second_factor_required: 'A sua palavra-passe foi usada para entrar', refused: 'Foi recusado um acesso com a sua palavra-passe' },
  dear: (name) => `Caro(a) ${name},`,
  what: (n) => ({
    signed_in: `Alguém entrou na sua conta (${n.username}) de uma forma que não corresponde aos seus acessos habituais.`,
    second_factor_required: `Alguém indicou a palavra-passe certa da sua conta (${n.username}) de uma forma que não corresponde aos seus acessos habituais, e foi-lhe pedido o seu segundo fator.`,
    refused: `Alguém indicou a palavra-passe certa da sua conta (${n.username}) de uma forma que não corresponde aos seus acessos habituais, e o acesso foi recusado. A não ser que tenha sido você, a sua palavra-passe é conhecida por outra pessoa: altere-a já, na aplicação ou através da recuperação de conta do banco.`,
  }),
  facts: { when: 'Quando', where: 'Onde', device: 'Dispositivo', channel: 'Canal', unknownPlace: 'desconhecido', unknownDevice: 'não reconhecido', on: 'em', described: 'como o dispositivo se identificou' },
  ifYou: 'Se foi você, não tem nada a fazer.',
  notMe: (link) => `Se não foi você, abra já esta ligação: ${link}\nTermina todas as sessões da sua conta e bloqueia a conta até a recuperar com a recuperação de conta do banco.`,
  noLink: 'Se não foi você, ligue de imediato para o banco pelo número que já conhece: todas as sessões serão terminadas e a conta bloqueada.',
  closing: 'Nunca partilhe um código que o banco lhe envie, nem com quem diga trabalhar para o banco.\n\nSegurança da Informação\nEsta mensagem foi enviada automaticamente; as respostas não são lidas.',
  sms: (place, when, link) => {
    const act = link ? 'Não foi você? Use o link do email ou ligue ao banco.' : 'Não foi você? Ligue já ao banco.';
    const change = link ? 'Não foi você? Altere-a: veja o email.' : 'Não foi você? Altere-a ou ligue ao banco.';
    return {
      signed_in: `Banco: novo acesso à sua conta de ${place} em ${when} UTC. ${act}`, second_factor_required: `Banco: a sua palavra-passe foi usada de ${place} em ${when} UTC. ${act}`,
      refused: `Banco: acesso recusado com a sua palavra-passe, de ${place} em ${when} UTC. ${change}`,
    };
  },
};

const FR: Words = {
  subject: { signed_in: 'Une nouvelle connexion à votre compte', second_factor_required: 'Votre mot de passe a été utilisé pour vous connecter', refused: 'Une connexion avec votre mot de passe a été refusée' },
  dear: (name) => `Bonjour ${name},`,
  what: (n) => ({
    signed_in: `Quelqu'un s'est connecté à votre compte (${n.username}) d'une manière qui ne correspond pas à vos connexions habituelles.`,
    second_factor_required: `Quelqu'un a donné le bon mot de passe de votre compte (${n.username}) d'une manière qui ne correspond pas à vos connexions habituelles, et votre second facteur lui a été demandé.`,
    refused: `Quelqu'un a donné le bon mot de passe de votre compte (${n.username}) d'une manière qui ne correspond pas à vos connexions habituelles, et la connexion a été refusée. Sauf si c'était vous, votre mot de passe est connu de quelqu'un d'autre : changez-le dès maintenant, dans l'application ou par la récupération de compte de la banque.`,
  }),
  facts: { when: 'Quand', where: 'Où', device: 'Appareil', channel: 'Canal', unknownPlace: 'inconnu', unknownDevice: 'non reconnu', on: 'sous', described: 'tel que l\'appareil s\'est présenté' },
  ifYou: 'Si c\'était vous, vous n\'avez rien à faire.',
  notMe: (link) => `Si ce n'était pas vous, ouvrez ce lien maintenant : ${link}\nIl ferme toutes les sessions de votre compte et bloque le compte jusqu'à ce que vous le récupériez par la récupération de compte de la banque.`,
  noLink: 'Si ce n\'était pas vous, appelez immédiatement la banque au numéro que vous connaissez déjà : toutes les sessions seront fermées et le compte bloqué.',
  closing: 'Ne communiquez jamais un code envoyé par la banque, même à quelqu\'un qui dit y travailler.\n\nSécurité de l\'information\nCe message a été envoyé automatiquement ; les réponses ne sont pas lues.',
  sms: (place, when, link) => {
    const act = link ? 'Pas vous ? Voir l\'e-mail ou appelez la banque.' : 'Pas vous ? Appelez la banque.';
    const change = link ? 'Pas vous ? Changez-le : voir l\'e-mail.' : 'Pas vous ? Changez-le ou appelez la banque.';
    return {
      signed_in: `Banque : nouvelle connexion à votre compte depuis ${place} le ${when} UTC. ${act}`, second_factor_required: `Banque : votre mot de passe a été utilisé depuis ${place} le ${when} UTC. ${act}`,
      refused: `Banque : connexion refusée avec votre mot de passe depuis ${place} le ${when} UTC. ${change}`,
    };
  },
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };

/** The country's name in the notice's language (its code when the runtime knows no name). */
export function countryName(code: string, language: NoticeLanguage | null): string {
  try {
    // A typographic apostrophe (fr "Côte d’Ivoire") is outside GSM-7: the straight one reads the same.
    return (new Intl.DisplayNames([language ?? 'en'], { type: 'region', fallback: 'code' }).of(code) ?? code).replace(/[‘’]/g, '\'');
  } catch {
    return code;
  }
}

/** "Lisbon, Portugal", "Portugal", or null when the country is unknown. */
export function placeOf(n: Pick<SignInNotice, 'city' | 'country' | 'language'>): string | null {
  if (n.country === null) return null;
  const country = countryName(n.country, n.language);
  return n.city ? `${n.city}, ${country}` : country;
}

/** The place as a text message names it: at most SMS_PLACE_MAX characters. */
function smsPlace(n: SignInNotice, w: Words): string {
  if (n.country === null) return w.facts.unknownPlace;
  const whole = placeOf(n)!;
  if (whole.length <= SMS_PLACE_MAX) return whole;
  const country = countryName(n.country, n.language);
  return country.length <= SMS_PLACE_MAX ? country : n.country;
}

function deviceText(n: SignInNotice, w: Words): string {
  const { browser, system } = n.device;
  const named = browser && system ? `${browser} ${w.facts.on} ${system}` : browser ?? system;
  return named === null ? w.facts.unknownDevice : `${named} (${w.facts.described})`;
}

/** The email of a notice. */
export function signInNoticeMail(to: string, n: SignInNotice): MailMessage {
  const w = wordsFor(WORDS, n.language);
  const f = w.facts;
  const facts = [
    `${f.when}: ${utcMinute(n.at)} (UTC)`, `${f.where}: ${placeOf(n) ?? f.unknownPlace}`, `${f.device}: ${deviceText(n, w)}`, `${f.channel}: ${n.channel}`,
  ];
  return {
    to,
    subject: w.subject[n.kind],
    text: letterText({ greeting: w.dear(addressee(n)), paragraphs: [w.what(n)[n.kind], facts, w.ifYou, n.notMeLink ? w.notMe(n.notMeLink) : w.noLink], closing: w.closing }),
  };
}

const shortText = (n: SignInNotice): string => {
  const w = wordsFor(WORDS, n.language);
  return w.sms(smsPlace(n, w), utcMinute(n.at), n.notMeLink !== undefined)[n.kind];
};

/** The text message of a notice: one GSM-7 segment. */
export function signInNoticeSms(n: SignInNotice): string {
  return smsText(shortText(n));
}

/** The push notification of a notice (accents kept). */
export function signInNoticePush(n: SignInNotice): { title: string; body: string } {
  return { title: wordsFor(WORDS, n.language).subject[n.kind], body: shortText(n) };
}
