/**
 * The FAQ's three MCP tools and one stateless exchange with the SDK (`POST /mcp`, `./mcp.ts`).
 * This file is the only one that imports `@modelcontextprotocol/sdk` and zod: the route imports
 * it on its first call, so a node that no assistant calls never loads them.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import { CATEGORY_LABELS, FAQ_CATEGORIES } from './categories.js';
import { QUERY_MAX_LENGTH, QUERY_PATTERN, SEARCH_LIMIT_MAX } from './schemas.js';
import type { FaqService } from './service.js';

const category = z.enum(FAQ_CATEGORIES);
/** An article's public id, the same as the REST routes' (the integer stays internal). */
const articleId = z.uuid().describe('The article\'s id (a uuid): `GET /api/v1/faq/{faq_id}` reads it and `POST /api/v1/faq/{faq_id}/helpful` votes on it.');
const categoryList = FAQ_CATEGORIES.join(', ');

function result<T extends Record<string, unknown>>(structured: T) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(structured) }], structuredContent: structured };
}

/** The three tools, for one request's caller (who was checked before the server was made). */
export function faqMcpServer(faq: FaqService, version: string): McpServer {
  const server = new McpServer({ name: 'strongroom-faq', version }, { capabilities: { tools: {} } });
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  server.registerTool('search_faqs', {
    title: 'Search the bank\'s FAQ',
    description: `Searches the bank's help articles and returns the best matches first, with their full answers. Use it to answer a customer's question from the bank's own articles. Categories: ${categoryList}.`,
    inputSchema: {
      query: z.string().min(1).max(QUERY_MAX_LENGTH).regex(new RegExp(QUERY_PATTERN, 'u'), 'needs some text and no control characters').describe('The customer\'s question or key words, e.g. "lost my card". Web-search syntax works: "exact phrase", or, -exclude.'),
      category: category.optional().describe('Only articles of this category.'),
      limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional().describe(`How many results, default 10, at most ${SEARCH_LIMIT_MAX}.`),
    },
    outputSchema: {
      query: z.string(),
      category_filter: category.nullable(),
      total_matches: z.number().int(),
      results: z.array(z.object({ id: articleId, question: z.string(), answer: z.string(), category, helpful_count: z.number().int(), unhelpful_count: z.number().int() })),
    },
    annotations: readOnly,
  }, async ({ query, category: within, limit }) => {
    const r = await faq.search(query, { category: within, limit: limit ?? 10 });
    return result({
      query, category_filter: within ?? null, total_matches: r.total,
      results: r.hits.map((h) => ({ id: h.id, question: h.question, answer: h.answer, category: h.category, helpful_count: h.helpful_count, unhelpful_count: h.unhelpful_count })),
    });
  });

  server.registerTool('get_faq_categories', {
    title: 'List the FAQ categories',
    description: 'Lists the categories of the bank\'s help articles with how many articles each has.',
    outputSchema: {
      categories: z.array(z.object({ name: category, article_count: z.number().int() })),
      total_articles: z.number().int(),
      tip: z.string(),
    },
    annotations: readOnly,
  }, async () => {
    const r = await faq.categories();
    return result({
      categories: r.categories.map((c) => ({ name: c.name, article_count: c.article_count })),
      total_articles: r.total,
      tip: 'Use search_faqs with the customer\'s own words for the best match, or get_faq_by_category to browse one category (names as listed here).',
    });
  });

  server.registerTool('get_faq_by_category', {
    title: 'Browse one FAQ category',
    description: `Returns a category's help articles, most important first. Categories: ${FAQ_CATEGORIES.map((c) => `${c} (${CATEGORY_LABELS[c]})`).join(', ')}.`,
    inputSchema: {
      category: category.describe('The category to browse.'),
      limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional().describe(`How many articles, default 10, at most ${SEARCH_LIMIT_MAX}.`),
    },
    outputSchema: {
      category,
      total_in_category: z.number().int(),
      faqs: z.array(z.object({ id: articleId, question: z.string(), answer: z.string(), keywords: z.string(), helpful_count: z.number().int() })),
    },
    annotations: readOnly,
  }, async ({ category: name, limit }) => {
    const r = await faq.byCategory(name, limit ?? 10);
    return result({
      category: name, total_in_category: r.total,
      faqs: r.faqs.map((f) => ({ id: f.uuid, question: f.question, answer: f.answer, keywords: f.keywords, helpful_count: f.helpful_count })),
    });
  });
  return server;
}

/** One JSON-RPC message, answered by a server and transport of its own (stateless, JSON answers). */
export async function answerMcp(faq: FaqService, version: string, call: { headers: Headers; body: unknown; authInfo: AuthInfo }): Promise<{ status: number; headers: Headers; text: string }> {
  const server = faqMcpServer(faq, version);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    // The URL only carries the path to the SDK; the Host header is the client's to garble.
    const response = await transport.handleRequest(new Request('http://localhost/mcp', { method: 'POST', headers: call.headers }), { parsedBody: call.body, authInfo: call.authInfo });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } finally {
    await server.close();
  }
}
