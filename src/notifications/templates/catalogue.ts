/**
 * The named push templates (SPEC "Push notifications"): their placeholders, which callers send,
 * and the text seeded in English, Portuguese and French. An administrator may reword any of
 * them (src/notifications/templates/routes.ts) but not give a named template a placeholder its
 * callers do not send, nor take away one it must show (`required`: send2FA's code).
 */

/** Languages a template, and a user's notifications, may be in; `en` is the fallback. */
export const LANGUAGES = ['en', 'pt', 'fr'] as const;
export type Language = (typeof LANGUAGES)[number];
export const FALLBACK_LANGUAGE: Language = 'en';

/** Template channels: push only, for now (SPEC: "The push template channel is push"). */
export const CHANNELS = ['push'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface NamedTemplate {
  placeholders: readonly string[];
  /** Placeholders every language must show (in its subject or message). */
  required: readonly string[];
  text: Record<Language, { subject: string; message: string }>;
}

export const NAMED_TEMPLATES: Record<string, NamedTemplate> = {
  send2FA: {
    placeholders: ['code', 'validity_minutes'],
    required: ['code'],
    text: {
      en: { subject: 'Your verification code', message: '{code} is your verification code. Valid {validity_minutes} minutes. Never share it: the bank will never ask for it.' },
      pt: { subject: 'O seu código de verificação', message: '{code} é o seu código de verificação. Válido {validity_minutes} minutos. Nunca o partilhe: o banco nunca o pedirá.' },
      fr: { subject: 'Votre code de vérification', message: '{code} est votre code de vérification. Valable {validity_minutes} minutes. Ne le communiquez jamais : la banque ne vous le demandera jamais.' },
    },
  },
  INTERNAL_TRANSFER: {
    placeholders: ['debit_name', 'credit_name', 'amount', 'currency', 'debit_account', 'credit_account', 'transaction_reference_id'],
    required: [],
    text: {
      en: { subject: 'Transfer completed', message: '{debit_name} sent {amount} {currency} from account {debit_account} to {credit_name}, account {credit_account}. Reference {transaction_reference_id}.' },
      pt: { subject: 'Transferência concluída', message: '{debit_name} transferiu {amount} {currency} da conta {debit_account} para {credit_name}, conta {credit_account}. Referência {transaction_reference_id}.' },
      fr: { subject: 'Virement effectué', message: '{debit_name} a viré {amount} {currency} du compte {debit_account} à {credit_name}, compte {credit_account}. Référence {transaction_reference_id}.' },
    },
  },
  DEPOSIT: {
    placeholders: ['amount', 'currency', 'account', 'transaction_reference_id'],
    required: [],
    text: {
      en: { subject: 'Deposit received', message: '{amount} {currency} was deposited to your account {account}. Reference {transaction_reference_id}.' },
      pt: { subject: 'Depósito recebido', message: 'Foram depositados {amount} {currency} na sua conta {account}. Referência {transaction_reference_id}.' },
      fr: { subject: 'Dépôt reçu', message: '{amount} {currency} ont été déposés sur votre compte {account}. Référence {transaction_reference_id}.' },
    },
  },
  INITIAL_DEPOSIT: {
    placeholders: ['name', 'amount', 'currency', 'account'],
    required: [],
    text: {
      en: { subject: 'Welcome to the bank', message: 'Welcome, {name}: your account {account} is open, with a first deposit of {amount} {currency}.' },
      pt: { subject: 'Bem-vindo ao banco', message: 'Bem-vindo, {name}: a sua conta {account} está aberta, com um primeiro depósito de {amount} {currency}.' },
      fr: { subject: 'Bienvenue à la banque', message: 'Bienvenue, {name} : votre compte {account} est ouvert, avec un premier dépôt de {amount} {currency}.' },
    },
  },
};

/** The named template called `name` (own keys only: `constructor` is a name like any other). */
export function namedTemplate(name: string): NamedTemplate | undefined {
  return Object.hasOwn(NAMED_TEMPLATES, name) ? NAMED_TEMPLATES[name] : undefined;
}

/** The template sending one-time codes by push (the MFA work's `push` method). */
export const SEND_2FA = 'send2FA';
