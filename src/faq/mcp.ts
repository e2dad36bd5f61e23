/**
 * SPEC "FAQ assistant tools" over the Model Context Protocol: `POST /mcp`, Streamable HTTP,
 * stateless (a new server and transport for every request, answers as JSON, no SSE stream and
 * no MCP session), on the same Fastify app, so every request passes the same hooks (request ids,
 * security headers, metrics, rate limits).
 *
 * Authentication is the service's own: `Authorization: Bearer <access token>`, verified like any
 * signed-in route (signature, denylist, session, device binding); the caller needs the permission
 * `access_ai_chat`. Without a valid token: 401 with `WWW-Authenticate: Bearer` (RFC 6750 3);
 * without the permission: 403 with `error="insufficient_scope"`. The body is the service's error
 * body, as everywhere; MCP clients act on the status and the header.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import Type from 'typebox';
import { z } from 'zod';
import { AppError, CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { signedInAccount, type Guard } from '../sessions/guard.js';
import { CATEGORY_LABELS, FAQ_CATEGORIES } from './categories.js';
import { QUERY_MAX_LENGTH, QUERY_PATTERN, SEARCH_LIMIT_MAX } from './schemas.js';
import type { FaqService } from './service.js';

export const AI_CHAT_PERMISSION = 'access_ai_chat';
const REALM = 'Bearer realm="strongroom"';
const MCP_BODY_LIMIT = 64 * 1024;

export interface McpDeps {
  faq: FaqService;
  guard: Guard;
  version: string;
}

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

/** Re-raises the guard's refusal with the `WWW-Authenticate` challenge an MCP client acts on. */
function challenge(err: unknown): unknown {
  if (!(err instanceof AppError) || err.statusCode !== 401) return err;
  const header = err.code === 'TOKEN_MISSING' ? REALM : `${REALM}, error="invalid_token"`;
  return new AppError(err.statusCode, err.code, err.message, err.details, { cause: err.cause, headers: { ...err.headers, 'www-authenticate': header } });
}

function headersOf(request: FastifyRequest): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(request.headers)) {
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) out.append(k, value);
  }
  return out;
}

export function mcpRoutes(s: McpDeps): FastifyPluginAsync {
  const authorise = async (request: FastifyRequest): Promise<void> => {
    try {
      await s.guard.authenticate(request);
    } catch (err) {
      throw challenge(err);
    }
    if (!request.auth!.claims.permissions.includes(AI_CHAT_PERMISSION)) {
      throw CommonErrors.PERMISSION_DENIED({ required_permission: AI_CHAT_PERMISSION }, { headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${AI_CHAT_PERMISSION}"` } });
    }
  };

  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['Assistant tools (MCP)'];
    const security = [{ bearer: [] }];

    app.post('/mcp', {
      bodyLimit: MCP_BODY_LIMIT,
      schema: {
        tags, security, summary: 'Model Context Protocol endpoint (Streamable HTTP, stateless)',
        description: `JSON-RPC 2.0 messages of MCP: \`initialize\`, \`tools/list\`, \`tools/call\` of \`search_faqs\`, \`get_faq_categories\` and \`get_faq_by_category\`. Send \`Accept: application/json, text/event-stream\`; answers are JSON. Needs a bearer access token with the permission \`${AI_CHAT_PERMISSION}\`: 401 (with \`WWW-Authenticate\`) without a valid one, 403 without the permission. Never encrypted (MCP clients do not speak the transport encryption).`,
        // One JSON-RPC message per request: a batch (an array; MCP 2025-06-18 has none) would spend
        // one rate-limit slot on up to a hundred searches.
        body: Type.Object({ jsonrpc: Type.Literal('2.0'), method: Type.Optional(Type.String({ maxLength: 128 })) }, { additionalProperties: true, description: 'One JSON-RPC 2.0 message of MCP (no batches).' }),
        response: {
          200: Type.Object({ jsonrpc: Type.Literal('2.0'), id: Type.Union([Type.String(), Type.Integer(), Type.Null()]) }, {
            additionalProperties: true, title: 'McpMessage', description: 'A JSON-RPC 2.0 answer of MCP: `result`, or `error` for a JSON-RPC error (the SDK\'s own codes, not this service\'s error body).',
            examples: [{ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'search_faqs', description: 'Search the FAQ.' }] } }],
          }),
          ...errors(CommonErrors.PERMISSION_DENIED),
        },
      },
      onRequest: authorise,
      config: { rateLimit: { group: 'faq_search', account: signedInAccount } },
    }, async (request, reply) => {
      const server = faqMcpServer(s.faq, s.version);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      try {
        await server.connect(transport);
        // The URL only carries the path to the SDK; the Host header is the client's to garble.
        const response = await transport.handleRequest(new Request('http://localhost/mcp', { method: 'POST', headers: headersOf(request) }), {
          parsedBody: request.body,
          authInfo: { token: request.auth!.token, clientId: request.auth!.claims.user_id, scopes: request.auth!.claims.permissions },
        });
        const text = await response.text();
        reply.status(response.status as 200); // the SDK's status (JSON-RPC errors included); the text goes out as it is
        response.headers.forEach((value, key) => {
          if (key !== 'content-length') reply.header(key, value);
        });
        return reply.send((text === '' ? undefined : text) as never);
      } finally {
        await server.close();
      }
    });

    // Stateless: no server-to-client stream to open (GET) and no MCP session to end (DELETE).
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method, url: '/mcp',
        schema: { tags, summary: `${method} is not offered: the MCP endpoint is stateless`, response: errors(CommonErrors.METHOD_NOT_ALLOWED) },
        handler: async () => {
          throw CommonErrors.METHOD_NOT_ALLOWED({ allowed: ['POST'] }, { headers: { allow: 'POST' } });
        },
      });
    }
  };
}
