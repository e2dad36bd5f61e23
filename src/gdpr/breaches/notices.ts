/**
 * The notice a person affected by a personal-data breach receives, in their language (`en`,
 * `pt`, `fr`; English when unset), by email and by SMS. It says what happened in plain words:
 * when, which categories of their data may have been exposed, what they can do, and whom to ask
 * (the breach's contact point). The operator's own description is written for the regulator in
 * one language and is not copied into notices. No link, no code: a notice asks nothing of the
 * reader but care, so it cannot be mistaken for the phishing that may follow a breach.
 */
import type { MailMessage } from '../../mail/mailer.js';
import { wordsFor, type NoticeLanguage } from '../../platform/notices/language.js';
import { addressee, letterText } from '../../platform/notices/letter.js';
import { smsText } from '../../platform/notices/sms.js';
import { utcMinute } from '../../platform/notices/time.js';
import type { BreachCategory } from './categories.js';

export interface BreachNoticeInput {
  language: NoticeLanguage | null;
  username: string;
  fullName: string | null;
  occurredFrom: Date;
  occurredTo: Date;
  categories: readonly BreachCategory[];
  contactPoint: string;
}

interface Words {
  subject: string;
  dear: (name: string) => string;
  what: (username: string, from: string, to: string) => string;
  exposed: string;
  category: Record<BreachCategory, string>;
  advice: string;
  credentialAdvice: string;
  contact: (who: string) => string;
  closing: string;
  /** Fits one GSM-7 segment (160 septets) once its accents are removed (src/platform/notices/every-sms.test.ts). */
  sms: string;
}

const EN: Words = {
  subject: 'Important: a security incident may have affected your account',
  dear: (name) => `Dear ${name},`,
  what: (username, from, to) => `We are writing to tell you about a security incident that may have affected your account (${username}). It concerns activity between ${from} and ${to} (UTC).`,
  exposed: 'The information that may have been exposed:',
  category: {
    credentials: 'your password or PIN (stored in protected form)',
    contact_details: 'your email address and phone number',
    identity_data: 'your name and username',
    session_tokens: 'the keys of your signed-in sessions',
    device_tokens: 'the registration of your devices',
    second_factor_secrets: 'your second-factor settings (authenticator, backup codes)',
    security_answers: 'your answers to security questions (stored in protected form)',
    audit_data: 'your sign-in history (addresses, browsers, devices)',
    location_data: 'locations your devices reported',
  },
  advice: 'Be wary of messages or calls that ask for your codes or passwords: the bank never asks for them.',
  credentialAdvice: 'Change your password or PIN the next time you sign in, and anywhere else you use it.',
  contact: (who) => `If you have questions, contact: ${who}`,
  closing: 'Data Protection Office\nThis message was sent automatically; replies are not read.',
  sms: 'Bank: a security incident may have affected your account. We sent details to your email. The bank never asks for your codes or PIN.',
};

const PT: Words = {
  subject: 'Importante: um incidente de segurança pode ter afetado a sua conta',
  dear: (name) => `Caro(a) ${name},`,
  what: (username, from, to) => `Informamos que ocorreu um incidente de segurança que pode ter afetado a sua conta (${username}). Diz respeito a atividade entre ${from} e ${to} (UTC).`,
  exposed: 'A informação que pode ter sido exposta:',
  category: {
    credentials: 'a sua palavra-passe ou PIN (guardados de forma protegida)',
    contact_details: 'o seu endereço de email e número de telefone',
    identity_data: 'o seu nome e nome de utilizador',
    session_tokens: 'as chaves das suas sessões iniciadas',
    device_tokens: 'o registo dos seus dispositivos',
    second_factor_secrets: 'as definições do seu segundo fator (autenticador, códigos de reserva)',
    security_answers: 'as suas respostas às perguntas de segurança (guardadas de forma protegida)',
    audit_data: 'o seu histórico de acessos (endereços, navegadores, dispositivos)',
    location_data: 'localizações comunicadas pelos seus dispositivos',
  },
  advice: 'Desconfie de mensagens ou chamadas que peçam os seus códigos ou palavras-passe: o banco nunca os pede.',
  credentialAdvice: 'Altere a sua palavra-passe ou PIN na próxima vez que entrar, e em qualquer outro sítio onde a use.',
  contact: (who) => `Se tiver dúvidas, contacte: ${who}`,
  closing: 'Gabinete de Proteção de Dados\nEsta mensagem foi enviada automaticamente; as respostas não são lidas.',
  sms: 'Banco: um incidente de segurança pode ter afetado a sua conta. Enviámos detalhes para o seu email. O banco nunca pede os seus códigos ou PIN.',
};

const FR: Words = {
  subject: 'Important : un incident de sécurité a pu toucher votre compte',
  dear: (name) => `Bonjour ${name},`,
  what: (username, from, to) => `Nous vous informons d'un incident de sécurité qui a pu toucher votre compte (${username}). Il concerne l'activité entre le ${from} et le ${to} (UTC).`,
  exposed: 'Les informations qui ont pu être exposées :',
  category: {
    credentials: 'votre mot de passe ou code PIN (conservés sous forme protégée)',
    contact_details: 'votre adresse e-mail et votre numéro de téléphone',
    identity_data: 'votre nom et votre identifiant',
    session_tokens: 'les clés de vos sessions ouvertes',
    device_tokens: "l'enregistrement de vos appareils",
    second_factor_secrets: 'les réglages de votre second facteur (authentificateur, codes de secours)',
    security_answers: 'vos réponses aux questions de sécurité (conservées sous forme protégée)',
    audit_data: 'votre historique de connexion (adresses, navigateurs, appareils)',
    location_data: 'les positions signalées par vos appareils',
  },
  advice: "Méfiez-vous des messages ou appels qui demandent vos codes ou mots de passe : la banque ne les demande jamais.",
  credentialAdvice: 'Changez votre mot de passe ou code PIN à votre prochaine connexion, et partout où vous l\'utilisez.',
  contact: (who) => `Pour toute question, contactez : ${who}`,
  closing: 'Délégué à la protection des données\nCe message a été envoyé automatiquement ; les réponses ne sont pas lues.',
  sms: 'Banque : un incident de sécurité a pu toucher votre compte. Détails envoyés par e-mail. La banque ne demande jamais vos codes ni votre PIN.',
};

const WORDS: Record<NoticeLanguage, Words> = { en: EN, pt: PT, fr: FR };
const wordsOf = (n: { language: NoticeLanguage | null }): Words => wordsFor(WORDS, n.language);

/** The email of a breach notice. */
export function breachMail(to: string, n: BreachNoticeInput): MailMessage {
  const w = wordsOf(n);
  const secrets = n.categories.includes('credentials') || n.categories.includes('security_answers') || n.categories.includes('second_factor_secrets');
  return {
    to,
    subject: w.subject,
    text: letterText({
      greeting: w.dear(addressee(n)),
      paragraphs: [
        w.what(n.username, utcMinute(n.occurredFrom), utcMinute(n.occurredTo)),
        [w.exposed, ...n.categories.map((c) => `- ${w.category[c]}`)],
        [...(secrets ? [w.credentialAdvice] : []), w.advice],
        w.contact(n.contactPoint),
      ],
      closing: w.closing,
    }),
  };
}

/** The text message of a breach notice: one GSM-7 segment, no link, no name. */
export function breachSms(n: { language: NoticeLanguage | null }): string {
  return smsText(wordsOf(n).sms);
}
