/** FAQ articles as GET /api/v1/admin/faqs answers them; the categories; a move within a category; a search snippet read safely. */

export const FAQS_PATH = '/api/v1/admin/faqs';
export const FAQ_CATEGORIES = ['general', 'accounts', 'transactions', 'security', 'disputes', 'fees', 'transfers', 'wallets', 'loans', 'technical'] as const;
export type FaqCategory = (typeof FAQ_CATEGORIES)[number];

export interface AdminFaq {
  id: string;
  question: string;
  answer: string;
  category: FaqCategory;
  keywords: string;
  order: number;
  helpful_count: number;
  unhelpful_count: number;
  is_active: boolean;
  created_on: string;
  updated_on: string;
}

export interface SearchHit {
  id: string;
  question: string;
  answer: string;
  snippet: string;
  category: FaqCategory;
  helpful_count: number;
  unhelpful_count: number;
}

export interface SearchAnswer {
  query: string;
  total_matches: number;
  results: SearchHit[];
  match: 'exact' | 'fuzzy';
  did_you_mean: string | null;
}

/** The ids in display order with the one at `index` moved one place up (-1) or down (+1). */
export function moved(ids: readonly string[], index: number, delta: -1 | 1): string[] {
  const to = index + delta;
  if (to < 0 || to >= ids.length) return [...ids];
  const out = [...ids];
  [out[index], out[to]] = [out[to]!, out[index]!];
  return out;
}

/** Whether an article has `text` in its question, answer or keywords (any case). */
export function matches(faq: AdminFaq, text: string): boolean {
  const q = text.trim().toLowerCase();
  return q === '' || [faq.question, faq.answer, faq.keywords].some((f) => f.toLowerCase().includes(q));
}

const ENTITIES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'" };

/**
 * The search's snippet (HTML-escaped text, matched words in `<mark>`) as plain pieces, so the
 * page renders it as text with its own `<mark>` elements and never parses the server's HTML.
 */
export function snippetParts(html: string): Array<{ text: string; marked: boolean }> {
  const text = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39|#x27);/g, (e) => ENTITIES[e] ?? e);
  return html.split(/(<mark>[^<]*<\/mark>)/).filter((p) => p !== '').map((p) => (p.startsWith('<mark>') ? { text: text(p.slice(6, -7)), marked: true } : { text: text(p), marked: false }));
}
