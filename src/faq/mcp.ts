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
 * body, as everywhere; MCP clients act on the status and the header. The tools themselves, and
 * the SDK they need, are in `./mcp-tools.ts`, imported on the first call.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError, CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { signedInAccount, type Guard } from '../sessions/guard.js';
import type { FaqService } from './service.js';

export const AI_CHAT_PERMISSION = 'access_ai_chat';
const REALM = 'Bearer realm="strongroom"';
const MCP_BODY_LIMIT = 64 * 1024;

export interface McpDeps {
  faq: FaqService;
  guard: Guard;
  version: string;
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
      // The MCP SDK (and zod) are imported on the first call, not at start: a bank that connects no
      // assistant never holds them (docs/benchmarks.md "Idle memory"). Later calls find them loaded.
      const { answerMcp } = await import('./mcp-tools.js');
      const response = await answerMcp(s.faq, s.version, {
        headers: headersOf(request), body: request.body,
        authInfo: { token: request.auth!.token, clientId: request.auth!.claims.user_id, scopes: request.auth!.claims.permissions },
      });
      reply.status(response.status as 200); // the SDK's status (JSON-RPC errors included); the text goes out as it is
      response.headers.forEach((value, key) => {
        if (key !== 'content-length') reply.header(key, value);
      });
      return reply.send((response.text === '' ? undefined : response.text) as never);
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
