/** SPEC's ten FAQ categories, in the order a help page lists them, with the label it shows. */
export const FAQ_CATEGORIES = ['general', 'accounts', 'transactions', 'security', 'disputes', 'fees', 'transfers', 'wallets', 'loans', 'technical'] as const;
export type FaqCategory = (typeof FAQ_CATEGORIES)[number];

export const CATEGORY_LABELS: Readonly<Record<FaqCategory, string>> = {
  general: 'General',
  accounts: 'Accounts',
  transactions: 'Transactions',
  security: 'Security',
  disputes: 'Disputes',
  fees: 'Fees and charges',
  transfers: 'Transfers',
  wallets: 'Mobile wallets',
  loans: 'Loans',
  technical: 'Technical help',
};

export function isFaqCategory(v: unknown): v is FaqCategory {
  return typeof v === 'string' && (FAQ_CATEGORIES as readonly string[]).includes(v);
}
