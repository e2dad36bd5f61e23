/**
 * The FAQ assistant tools over MCP (issue 13 section 4), driven by the official MCP client of
 * the SDK over real HTTP: it connects with a user's access token, lists the three tools and calls
 * each; without a token, or without `access_ai_chat`, it is refused with 401 or 403 and the
 * `WWW-Authenticate` challenge. The done-when: an assistant answers from the same articles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { starterArticles } from '../../src/faq/starter.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { expectError, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

let t: TestApp;
let base: URL;
let customerToken: string;
let operatorToken: string;
const SYSTEM = { actor: { uuid: null, username: 'test' }, context: {} };

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'strongroom-test-assistant', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

beforeAll(async () => {
  t = await createTestApp();
  await t.s.faqAdmin.seed(SYSTEM, starterArticles());
  await seedUser(t.s, 'chat.customer', { roles: ['customer'] });
  await seedUser(t.s, 'chat.operator', { roles: ['operator'] });
  customerToken = (await signIn(t.app, 'chat.customer')).access_token;
  operatorToken = (await signIn(t.app, 'chat.operator')).access_token;
  base = new URL(await t.app.listen({ host: '127.0.0.1', port: 0 }));
});
afterAll(async () => t.close());

describe('FAQ assistant tools over MCP', () => {
  it('lists exactly the three tools, with input schemas that show the assistant the categories, the defaults and the maxima', async () => {
    const client = await connect(customerToken);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['get_faq_by_category', 'get_faq_categories', 'search_faqs']);
      const search = tools.find((tool) => tool.name === 'search_faqs')!;
      expect(search.inputSchema.required).toEqual(['query']);
      const props = search.inputSchema.properties as Record<string, { enum?: string[]; maximum?: number; minimum?: number }>;
      expect(props.category!.enum).toEqual(['general', 'accounts', 'transactions', 'security', 'disputes', 'fees', 'transfers', 'wallets', 'loans', 'technical']);
      expect(props.limit).toMatchObject({ minimum: 1, maximum: 50 });
      const byCategory = tools.find((tool) => tool.name === 'get_faq_by_category')!;
      expect(byCategory.inputSchema.required).toEqual(['category']);
      expect(tools.every((tool) => tool.annotations?.readOnlyHint === true && tool.outputSchema !== undefined)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('done-when: search_faqs answers "lost my card" from the same articles as the REST search, as structured content and as text', async () => {
    const client = await connect(customerToken);
    try {
      const result = await client.callTool({ name: 'search_faqs', arguments: { query: 'lost my card' } });
      expect(result.isError).toBeFalsy();
      const data = result.structuredContent as { query: string; category_filter: null; total_matches: number; results: Array<Record<string, unknown>> };
      expect(Object.keys(data).sort()).toEqual(['category_filter', 'query', 'results', 'total_matches']);
      expect(data).toMatchObject({ query: 'lost my card', category_filter: null });
      expect(Object.keys(data.results[0]!).sort()).toEqual(['answer', 'category', 'helpful_count', 'id', 'question', 'unhelpful_count']);
      const rest = (await t.app.inject({ method: 'POST', url: '/api/v1/faq/search', payload: { query: 'lost my card' } })).json() as { total_matches: number; results: Array<{ id: string }> };
      expect(data.total_matches).toBe(rest.total_matches);
      expect(data.results.map((r) => r.id)).toEqual(rest.results.map((r) => r.id)); // the public id, the same as REST's
      expect(data.results[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(data.results[0]!.question).toMatch(/lost my card.*block/i);
      const [text] = result.content as Array<{ type: string; text: string }>;
      expect(text!.type).toBe('text');
      expect(JSON.parse(text!.text)).toEqual(data);

      const within = await client.callTool({ name: 'search_faqs', arguments: { query: 'wallet', category: 'wallets', limit: 2 } });
      const w = within.structuredContent as { category_filter: string; results: Array<{ category: string }> };
      expect(w.category_filter).toBe('wallets');
      expect(w.results).toHaveLength(2);
      expect(w.results.every((r) => r.category === 'wallets')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('get_faq_categories and get_faq_by_category give SPEC\'s shapes; by-category defaults to 10', async () => {
    const client = await connect(customerToken);
    try {
      const cats = (await client.callTool({ name: 'get_faq_categories', arguments: {} })).structuredContent as { categories: Array<{ name: string; article_count: number }>; total_articles: number; tip: string };
      expect(cats.categories).toHaveLength(10);
      expect(Object.keys(cats.categories[0]!).sort()).toEqual(['article_count', 'name']);
      expect(cats.total_articles).toBe(cats.categories.reduce((n, c) => n + c.article_count, 0));
      expect(cats.tip).toMatch(/search_faqs/);

      const sec = (await client.callTool({ name: 'get_faq_by_category', arguments: { category: 'security' } })).structuredContent as { category: string; total_in_category: number; faqs: Array<Record<string, unknown>> };
      expect(sec.category).toBe('security');
      expect(sec.faqs).toHaveLength(10);
      expect(sec.total_in_category).toBe(cats.categories.find((c) => c.name === 'security')!.article_count);
      expect(Object.keys(sec.faqs[0]!).sort()).toEqual(['answer', 'helpful_count', 'id', 'keywords', 'question']);
      const article = (await t.app.inject({ method: 'GET', url: `/api/v1/faq/${String(sec.faqs[0]!.id)}` })).json() as { id: string; question: string };
      expect(article).toMatchObject({ id: sec.faqs[0]!.id, question: sec.faqs[0]!.question }); // the REST route reads the tool's id
      const three = (await client.callTool({ name: 'get_faq_by_category', arguments: { category: 'loans', limit: 3 } })).structuredContent as { faqs: unknown[] };
      expect(three.faqs).toHaveLength(3);
    } finally {
      await client.close();
    }
  });

  it('refuses bad arguments as a tool error the assistant can read (limit over 50, an unknown category, a missing query), and nothing runs', async () => {
    const client = await connect(customerToken);
    try {
      for (const [name, args] of [['search_faqs', { query: 'card', limit: 51 }], ['get_faq_by_category', { category: 'cards' }], ['search_faqs', {}]] as const) {
        const result = await client.callTool({ name, arguments: args }).catch((err: unknown) => ({ isError: true, thrown: err }));
        expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      }
    } finally {
      await client.close();
    }
  });

  it('threat: no token, a forged token or a signed-out session: 401 with WWW-Authenticate: Bearer; the client cannot connect', async () => {
    await expect(connect()).rejects.toThrow();
    await expect(connect('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl')).rejects.toThrow();
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const none = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: init });
    expectError(none, 401, 'TOKEN_MISSING');
    expect(none.headers['www-authenticate']).toBe('Bearer realm="strongroom"');
    const forged = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, authorization: 'Bearer abc.def.ghi' }, payload: init });
    expect(forged.statusCode).toBe(401);
    expect(forged.headers['www-authenticate']).toBe('Bearer realm="strongroom", error="invalid_token"');

    await seedUser(t.s, 'chat.leaver', { roles: ['customer'] });
    const leaver = await signIn(t.app, 'chat.leaver');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization: `Bearer ${leaver.access_token}` } })).statusCode).toBe(200);
    const ended = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, authorization: `Bearer ${leaver.access_token}` }, payload: init });
    expect(ended.statusCode).toBe(401);
    expect(ended.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('threat: a signed-in user without access_ai_chat (an operator) is refused: 403 PERMISSION_DENIED with error="insufficient_scope"', async () => {
    const err = await connect(operatorToken).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(403);
    const res = await t.app.inject({
      method: 'POST', url: '/mcp', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${operatorToken}` },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_faqs', arguments: { query: 'card' } } },
    });
    const body = expectError(res, 403, 'PERMISSION_DENIED');
    expect(withoutRequestId(body.details)).toEqual({ required_permission: 'access_ai_chat' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="strongroom", error="insufficient_scope", scope="access_ai_chat"');
  });

  it('is stateless: GET and DELETE are 405 with Allow: POST; no MCP session id is handed out', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: '/mcp', headers: { authorization: `Bearer ${customerToken}` } });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe('POST');
    }
    const res = await t.app.inject({
      method: 'POST', url: '/mcp', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${customerToken}` },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect((res.json() as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('strongroom-faq');
  });

  it('threat: malformed JSON-RPC and oversized bodies are clear errors, never a 500', async () => {
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${customerToken}` };
    const junk = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: '{"jsonrpc": ' });
    expect(junk.statusCode).toBe(400);
    const wrong = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: { hello: 'world' } });
    expect(wrong.statusCode).toBeGreaterThanOrEqual(400);
    expect(wrong.statusCode).toBeLessThan(500);
    const batch = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'search_faqs', arguments: { query: 'card' } } }))) });
    expectError(batch, 422, 'VALIDATION_ERROR'); // one message per request: a batch would spend one rate-limit slot on fifty searches
    const host = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, host: 'a b' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(host.statusCode).toBe(200);
    const nul = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_faqs', arguments: { query: 'card\u0000' } } } });
    expect(nul.statusCode).toBe(200);
    expect((nul.json() as { result: { isError: boolean } }).result.isError).toBe(true);
    const big = await t.app.inject({ method: 'POST', url: '/mcp', headers, payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_faqs', arguments: { query: 'x'.repeat(70_000) } } } });
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
  });
});
