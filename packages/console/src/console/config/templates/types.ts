/** The notification templates as GET /api/v1/admin/notification-templates answers them, and the sample values a preview fills in. */
import { StrongroomError } from '../../../../../client/src/index.js';

export const TEMPLATES_PATH = '/api/v1/admin/notification-templates';
export const TEMPLATE_LANGUAGES = ['en', 'pt', 'fr'] as const;
export type TemplateLanguage = (typeof TEMPLATE_LANGUAGES)[number];

export interface Template {
  id: string;
  channel: 'push';
  language: TemplateLanguage;
  name: string;
  subject: string;
  message: string;
  placeholders: string[];
  allowed_placeholders: string[];
  named: boolean;
  created_at: string;
  updated_at: string;
}

/** A placeholder as the server reads one: a name in braces. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;

/** The placeholders of some texts, each once, in order of first use. */
export function placeholdersOf(...texts: string[]): string[] {
  return [...new Set(texts.flatMap((text) => [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!)))];
}

/** Ordinary values for the named templates' placeholders; any other placeholder shows its own name. */
const SAMPLES: Readonly<Record<string, string>> = {
  amount: '1,500.00', currency: 'KES', account: '****4471', debit_account: '****4471', credit_account: '****9012',
  debit_name: 'Amina Otieno', credit_name: 'Kofi Mensah', name: 'Amina Otieno', transaction_reference_id: 'TRX-20261126-0042',
  code: '048213', validity_minutes: '5',
};

export function sampleOf(placeholder: string): string {
  return Object.hasOwn(SAMPLES, placeholder) ? SAMPLES[placeholder]! : placeholder;
}

/** What a refusal says of each field (`422 TEMPLATE_INVALID`'s `details.fields`), in the server's words. */
export function fieldProblems(err: unknown): Partial<Record<'subject' | 'message', string>> {
  if (!(err instanceof StrongroomError) || err.errorCode !== 'TEMPLATE_INVALID' || !Array.isArray(err.details.fields)) return {};
  const out: Partial<Record<'subject' | 'message', string>> = {};
  for (const f of err.details.fields as { field?: string; message?: string }[]) {
    if ((f.field === 'subject' || f.field === 'message') && typeof f.message === 'string') out[f.field] = out[f.field] ? `${out[f.field]}; ${f.message}` : f.message;
  }
  return out;
}
