/** The FAQ's request and response schemas, shared by the public, admin and assistant surfaces. */
import Type from 'typebox';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../platform/http/public-id.js';
import { CATEGORY_LABELS, FAQ_CATEGORIES, type FaqCategory } from './categories.js';
import type { FaqRow } from './store.js';

/**
 * A FAQ article's public id: its uuid, what every route takes and every answer gives (the
 * integer `id` of the table stays internal). An integer where it belongs is refused with 422.
 */
export const FAQ_ID: PublicIdKind = {
  what: 'FAQ article',
  source: 'the `id` of the article in the FAQ answers (search, `GET /api/v1/faq/category/{category}`, `GET /api/v1/admin/faqs`)',
  example: '6d1f4b2a-8c3e-4f5a-9b7d-2e4c6a8f0b13',
};
/** Fixed article ids for examples that list several. */
export const FAQ_ID_EXAMPLES = [FAQ_ID.example, 'b84e2c07-5a1d-4c9f-8e36-7d0f2a9c4b51', '0f9a3d6e-2c47-4b18-a5e9-c1d8b7a6f302'] as const;

export const FaqId = publicIdSchema(FAQ_ID);

/** No control characters (the snippet's match markers rely on it), line breaks and tabs aside in the answer. */
const ONE_LINE = '^[^\\u0000-\\u001F\\u007F]*$';
const MULTI_LINE = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';

/** A search query: some text besides spaces, and no control character but tab and line breaks (PostgreSQL refuses NUL). */
export const QUERY_PATTERN = '^(?=[^]*\\S)[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';

export const SEARCH_LIMIT_MAX = 50;
export const QUERY_MAX_LENGTH = 200;

export const Category = Type.Unsafe<FaqCategory>({
  type: 'string', enum: [...FAQ_CATEGORIES], description: `One of the ten FAQ categories: ${FAQ_CATEGORIES.join(', ')}.`, examples: ['security'],
});

const Question = Type.String({ minLength: 5, maxLength: 300, pattern: ONE_LINE, examples: ['I lost my card or it was stolen. How do I block it?'] });
const Answer = Type.String({ minLength: 1, maxLength: 10_000, pattern: MULTI_LINE, description: 'Plain text; line breaks are kept.', examples: ['Block your card straight away in the app: Cards, then Block card.'] });
const Keywords = Type.String({ maxLength: 500, pattern: ONE_LINE, description: 'Comma-separated search terms; stored trimmed, in lower case, without repeats.', examples: ['lost card, stolen card, block card'] });
const Order = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Display priority within the category: lower first.', examples: [10] });

/** What an administrator writes: every field on create (`is_active` defaults to true). */
export const FaqInputProperties = {
  question: Question,
  answer: Answer,
  category: Category,
  keywords: Type.Optional(Keywords),
  order: Type.Optional(Order),
  is_active: Type.Optional(Type.Boolean()),
};
export const FaqInput = Type.Object(FaqInputProperties, { additionalProperties: false });

export const FaqPatch = Type.Object({
  question: Type.Optional(Question),
  answer: Type.Optional(Answer),
  category: Type.Optional(Category),
  keywords: Type.Optional(Keywords),
  order: Type.Optional(Order),
  is_active: Type.Optional(Type.Boolean({ description: 'false is a soft delete; true restores.' })),
}, { additionalProperties: false, minProperties: 1, examples: [{ answer: 'Block your card in the app: Cards, then Block card. Then call the number on the back of your card.' }] });

const Counts = {
  helpful_count: Type.Integer({ minimum: 0, examples: [42] }),
  unhelpful_count: Type.Integer({ minimum: 0, examples: [3] }),
};

const faqProperties = {
  id: FaqId,
  question: Question,
  answer: Answer,
  category: Category,
  keywords: Keywords,
  order: Order,
  ...Counts,
  created_on: Type.String({ format: 'date-time' }),
  updated_on: Type.String({ format: 'date-time' }),
};

/** One article as the public routes show it. */
export const Faq = Type.Object(faqProperties);

/** An article as administrators see it (inactive ones too). */
export const AdminFaq = Type.Object({ ...faqProperties, is_active: Type.Boolean({ description: 'false: soft-deleted, hidden from every public route and from search.' }) });

export const SearchHitSchema = Type.Object({
  id: FaqId,
  question: Type.String({ examples: ['I lost my card or it was stolen. How do I block it?'] }),
  answer: Type.String(),
  snippet: Type.String({ description: 'The best passage of the answer, HTML-escaped, the matched words in `<mark>`: safe to insert as HTML.', examples: ['<mark>Block</mark> your <mark>card</mark> straight away, even if you think you may find it later.'] }),
  category: Category,
  ...Counts,
});

export const SearchResponse = Type.Object({
  query: Type.String({ examples: ['lost my card'] }),
  category_filter: Type.Union([Category, Type.Null()], { description: 'The category searched within, or null.' }),
  total_matches: Type.Integer({ minimum: 0, description: 'All matching active articles, of which `results` holds the first `limit`.', examples: [4] }),
  results: Type.Array(SearchHitSchema),
  match: Type.Union([Type.Literal('exact'), Type.Literal('fuzzy')], { description: '`exact`: every word of the query matched (full text, with stemming). `fuzzy`: nothing did, so unknown words were corrected to the nearest word the articles use and any of the words may match.' }),
  did_you_mean: Type.Union([Type.String(), Type.Null()], { description: 'The corrected query when a fuzzy search changed a word, else null.', examples: [null] }),
});

export const CategorySummary = Type.Object({
  name: Category,
  label: Type.String({ description: 'What a help page shows.', examples: ['Security'] }),
  article_count: Type.Integer({ minimum: 0, description: 'Active articles in the category.', examples: [11] }),
});

export const CategoriesResponse = Type.Object({
  categories: Type.Array(CategorySummary, { description: 'All ten, in their fixed order, empty ones included.' }),
  total_articles: Type.Integer({ minimum: 0, examples: [110] }),
});

export const CategoryResponse = Type.Object({
  category: Category,
  label: Type.String({ examples: ['Security'] }),
  total_in_category: Type.Integer({ minimum: 0, examples: [11] }),
  faqs: Type.Array(Faq, { description: 'Active articles by `order`, then oldest first.' }),
});

export const VoteResponse = Type.Object({
  id: FaqId,
  ...Counts,
  your_vote: Type.Union([Type.Literal('helpful'), Type.Literal('unhelpful')]),
  counted: Type.Boolean({ description: 'false when nothing changed: this voter had given this vote already, or an anonymous site (whose first vote stands) gave the other one. A signed-in user\'s changed vote moves their one from the other counter.' }),
});

export const FaqIdParams = Type.Object({ faq_id: FaqId });

/** A `preValidation` hook: an integer `{faq_id}` answers 422 VALIDATION_ERROR saying to send the uuid. */
export const refuseIntegerFaqId = refuseIntegerIds(FAQ_ID, { params: ['faq_id'] });

const iso = (d: Date | string): string => new Date(d).toISOString();

export function presentFaq(f: FaqRow) {
  return {
    id: f.uuid, question: f.question, answer: f.answer, category: f.category, keywords: f.keywords, order: f.order,
    helpful_count: f.helpful_count, unhelpful_count: f.unhelpful_count, created_on: iso(f.created_on), updated_on: iso(f.updated_on),
  };
}

export function presentAdminFaq(f: FaqRow) {
  return { ...presentFaq(f), is_active: f.is_active };
}

export function labelOf(category: keyof typeof CATEGORY_LABELS): string {
  return CATEGORY_LABELS[category];
}
