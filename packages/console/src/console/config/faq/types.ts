/**
 * FAQ articles as GET /api/v1/admin/faqs answers them and the search's answer (the server's own
 * schemas: type-only imports, nothing of the server is bundled); the categories; a move within a
 * category; a search snippet read safely.
 */
import type { Static } from 'typebox';
import type { AdminFaq as AdminFaqSchema, SearchHitSchema, SearchResponse } from '../../../../../../src/faq/schemas.js';

export const FAQS_PATH = '/api/v1/admin/faqs';
export const FAQ_CATEGORIES = ['general', 'accounts', 'transactions', 'security', 'disputes', 'fees', 'transfers', 'wallets', 'loans', 'technical'] as const;
export type FaqCategory = (typeof FAQ_CATEGORIES)[number];

export type AdminFaq = Static<typeof AdminFaqSchema>;
export type SearchHit = Static<typeof SearchHitSchema>;
export type SearchAnswer = Static<typeof SearchResponse>;

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
