/**
 * The starter set: original articles for a retail bank, eleven per category, in plain language.
 * `strongroom faq seed` loads them, and a development server loads them on its first start.
 */
import accounts from './starter/accounts.json' with { type: 'json' };
import disputes from './starter/disputes.json' with { type: 'json' };
import fees from './starter/fees.json' with { type: 'json' };
import general from './starter/general.json' with { type: 'json' };
import loans from './starter/loans.json' with { type: 'json' };
import security from './starter/security.json' with { type: 'json' };
import technical from './starter/technical.json' with { type: 'json' };
import transactions from './starter/transactions.json' with { type: 'json' };
import transfers from './starter/transfers.json' with { type: 'json' };
import wallets from './starter/wallets.json' with { type: 'json' };
import type { FaqCategory } from './categories.js';
import type { FaqInputItem } from './admin.js';

type StarterArticle = { question: string; answer: string; keywords: string; order: number };

const BY_CATEGORY: Record<FaqCategory, StarterArticle[]> = { general, accounts, transactions, security, disputes, fees, transfers, wallets, loans, technical };

/** Every starter article, category by category in SPEC's order. */
export function starterArticles(): FaqInputItem[] {
  return Object.entries(BY_CATEGORY).flatMap(([category, articles]) => articles.map((a) => ({ ...a, category: category as FaqCategory })));
}
