/**
 * SPEC "FAQ (REST)": search, categories, a category, an article, and feedback. Public: a help page
 * is read before sign-in (docs/decisions.md "FAQ"). Feedback counts one vote per voter per
 * article: the signed-in user when a bearer token comes with it (who may change it), otherwise
 * the client's site, an IPv4 address or IPv6 /48 (an HMAC of it, never the address; its first
 * vote stands); it is rate limited per network and per user.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { clientSite } from '../policy/network.js';
import { signedInAccount, type Guard } from '../sessions/guard.js';
import { CATEGORY_LABELS, type FaqCategory } from './categories.js';
import { Category, CategoriesResponse, CategoryResponse, Faq, FaqIdParams, presentFaq, QUERY_MAX_LENGTH, QUERY_PATTERN, refuseIntegerFaqId, SEARCH_LIMIT_MAX, SearchResponse, VoteResponse } from './schemas.js';
import type { FaqService } from './service.js';
import type { Vote } from './store.js';
import { FaqErrors } from './errors.js';

export interface FaqRouteDeps {
  faq: FaqService;
  guard: Guard;
  ipHasher: Hasher;
}

const tags = ['FAQ'];

export const SearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: QUERY_MAX_LENGTH, pattern: QUERY_PATTERN, description: 'Words to find; web-search syntax: `"exact phrase"`, `or`, `-exclude`.', examples: ['lost my card'] }),
  category: Type.Optional(Category),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX, default: 10, description: `Default 10, at most ${SEARCH_LIMIT_MAX}; more is refused with 422, not cut.` })),
}, { additionalProperties: false, examples: [{ query: 'lost my card' }, { query: 'transfer limit', category: 'transfers', limit: 5 }] });

/**
 * The same search as a link a help page can put in an `<a href>` or a browser can bookmark:
 * `GET /api/v1/faq/search?q=...`. Declared on its own path, so that `search` is never read as
 * an article id by `GET /api/v1/faq/{faq_id}`.
 */
export const SearchQuery = Type.Object({
  q: SearchBody.properties.query,
  category: Type.Optional(Category),
  limit: SearchBody.properties.limit,
}, { additionalProperties: false, examples: [{ q: 'lost my card' }, { q: 'transfer limit', category: 'transfers', limit: 5 }] });

export function faqRoutes(s: FaqRouteDeps): FastifyPluginAsync {
  /** A bearer token is optional; one that comes must be valid (401 otherwise, never quietly anonymous). */
  const optionalSignIn = async (request: FastifyRequest): Promise<void> => {
    if (request.headers.authorization !== undefined) await s.guard.authenticate(request);
  };

  /** After `optionalSignIn`: a signed-in reader votes as themselves (and may change it), anyone else as their site. */
  const voterOf = (request: FastifyRequest): { key: string; mayChange: boolean } => (request.auth
    ? { key: `user:${request.auth.claims.user_id}`, mayChange: true }
    : { key: `net:${s.ipHasher.hex(clientSite(request.ip))}`, mayChange: false });

  /** The search answer, whether the words came in the body or the query string. */
  const search = async (query: string, category: FaqCategory | undefined, limit = 10) => {
    const r = await s.faq.search(query, { category, limit });
    return { query, category_filter: category ?? null, total_matches: r.total, results: r.hits.map(({ keywords: _k, ...hit }) => hit), match: r.match, did_you_mean: r.didYouMean };
  };

  return async (instance) => {
    const app = instance as unknown as App;

    app.post('/api/v1/faq/search', {
      schema: {
        tags, summary: 'Search the FAQ',
        description: 'Full-text search of active articles (question, then keywords, then answer; stemming: "transfers" finds "transfer"), best first, ties by display order. When no article has every word, unknown words are corrected to the nearest word the articles use and any word may match (`match: "fuzzy"`, `did_you_mean`). Public.',
        body: SearchBody,
        response: { 200: SearchResponse },
      },
      config: { rateLimit: { group: 'faq_search', account: signedInAccount } },
      // Before the rate limit, so that a signed-in reader is counted per user too.
      preHandler: optionalSignIn,
    }, async (request) => search(request.body.query, request.body.category, request.body.limit));

    app.get('/api/v1/faq/search', {
      schema: {
        tags, summary: 'Search the FAQ (query string)',
        description: 'The search of `POST /api/v1/faq/search` with the words in `q` (`?q=lost+card&category=cards&limit=5`): the same results, order, limits, fuzzy matching and rate limit. Public; an optional bearer token counts the reader per user.',
        querystring: SearchQuery,
        response: { 200: SearchResponse },
      },
      config: { rateLimit: { group: 'faq_search', account: signedInAccount } },
      preHandler: optionalSignIn,
    }, async (request) => search(request.query.q, request.query.category, request.query.limit));

    app.get('/api/v1/faq/categories', {
      schema: { tags, summary: 'The FAQ categories and how many articles each has', description: 'All ten categories in their fixed order, with a label to show and the count of active articles. Public.', response: { 200: CategoriesResponse } },
    }, async () => {
      const r = await s.faq.categories();
      return { categories: r.categories, total_articles: r.total };
    });

    app.get('/api/v1/faq/category/:category', {
      schema: {
        tags, summary: 'The articles of one category',
        description: 'Active articles by display order. `limit` default 10, at most 50; `offset` pages on. An unknown category is 422. Public.',
        params: Type.Object({ category: Category }),
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX, default: 10 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 0 })),
        }, { additionalProperties: false }),
        response: { 200: CategoryResponse },
      },
    }, async (request) => {
      const { category } = request.params;
      const r = await s.faq.byCategory(category, request.query.limit ?? 10, request.query.offset ?? 0);
      return { category, label: CATEGORY_LABELS[category], total_in_category: r.total, faqs: r.faqs.map(presentFaq) };
    });

    app.get('/api/v1/faq/:faq_id', {
      schema: { tags, summary: 'One article', description: 'By the article\'s uuid (the `id` of the search results and category lists; an integer is 422). An unknown or soft-deleted article is 404 FAQ_NOT_FOUND. Public.', params: FaqIdParams, response: { 200: Faq, ...errors(FaqErrors.FAQ_NOT_FOUND) } },
      preValidation: refuseIntegerFaqId,
    }, async (request) => presentFaq(await s.faq.get(request.params.faq_id)));

    for (const vote of ['helpful', 'unhelpful'] as const satisfies readonly Vote[]) {
      app.post(`/api/v1/faq/:faq_id/${vote}`, {
        schema: {
          tags, summary: `Mark an article ${vote}`,
          description: `Counts one vote per voter per article (named by its uuid, the \`id\` of the search results; an integer is 422): the signed-in user (with a bearer token) or else the client's site (an IPv4 address or an IPv6 /48). The same vote again changes nothing (\`counted: false\`); a signed-in user's other vote moves their one from the other counter, while an anonymous site's first vote stands (\`counted: false\`: readers behind one NAT cannot flip each other's). No body. An unknown or soft-deleted article is 404 FAQ_NOT_FOUND; an invalid bearer token is 401. Public.`,
          params: FaqIdParams,
          response: { 200: VoteResponse, ...errors(FaqErrors.FAQ_NOT_FOUND) },
        },
        config: { rateLimit: { group: 'faq_feedback', account: signedInAccount } },
        preValidation: refuseIntegerFaqId,
        // Before the rate limit, so that a signed-in voter is counted per user too.
        preHandler: optionalSignIn,
      }, async (request) => {
        const r = await s.faq.vote(request.params.faq_id, voterOf(request), vote);
        return { id: r.row.uuid, helpful_count: r.row.helpful_count, unhelpful_count: r.row.unhelpful_count, your_vote: vote, counted: r.counted };
      });
    }
  };
}
