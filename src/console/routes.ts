/**
 * The operator console (/console) and the account pages (/account): single-page applications,
 * each path under them answered with its page (the page routes in the browser), the hashed
 * assets under /console/assets/ cached for a year. Every answer carries a strict
 * Content-Security-Policy: scripts, styles, fonts and connections from this origin only, nothing
 * inline, no eval, no framing. `/` tells a browser where these are; an API client asking for
 * JSON gets the 404 it always did.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import type { ConsoleBuild, ConsoleFile, Encoded } from './files.js';

/**
 * 'self' in connect-src covers ws: and wss: to this origin as well (CSP Level 3), which the
 * real-time channel uses. Images from this origin only: the pages draw QR codes as SVG.
 */
export const CONSOLE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'", "font-src 'self'",
  "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
  // No string may reach an HTML sink (innerHTML, document.write...): React renders with DOM
  // calls; the one policy allowed, `default`, lets only an empty string through
  // (packages/console/src/lib/trusted-types.ts).
  "require-trusted-types-for 'script'", "trusted-types default",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';
const HTML_CACHE = 'no-store';

/** The page `/` shows a browser: where to go. No script, no style; the console's icon when built. */
const homePage = (build: ConsoleBuild): string => HOME_PAGE.replace('ICON', iconLink(build));
const HOME_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Strongroom</title>ICON</head>
<body><main><h1>Strongroom</h1><p>The authentication service of the bank.</p>
<ul>
<li><a href="/account">Your account</a>: your profile, where you are signed in, your second factors and your data.</li>
<li><a href="/console">Operator console</a>: users, approvals, access policies, the audit log and settings, for the bank's operators.</li>
<li><a href="/api/docs">API reference</a> (also <a href="/api/redoc">as one readable page</a>, and <a href="/api/openapi.json">the OpenAPI document</a>).</li>
</ul></main></body></html>
`;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><main><h1>The console is not built</h1><p>Start the service with <code>npm start</code>, which builds it, or run <code>npm run build:console</code>.</p></main></body></html>
`;

function iconLink(build: ConsoleBuild): string {
  const icon = [...build.assets.keys()].find((name) => name.startsWith('favicon-') && name.endsWith('.svg'));
  return icon ? `<link rel="icon" type="image/svg+xml" href="/console/assets/${icon}">` : '';
}

/** The 404 any unknown path gets (a route here must not turn it into a 405). */
function notFound(request: FastifyRequest): Error {
  return CommonErrors.NOT_FOUND({ method: request.method, path: request.url.split('?')[0]!.slice(0, 200) });
}

function html(reply: FastifyReply, status: number, body: string | Buffer): FastifyReply {
  // A window the page opens, or that opens it, from another site gets no handle on it.
  return reply.status(status).type('text/html; charset=utf-8').header('cache-control', HTML_CACHE).header('content-security-policy', CONSOLE_CSP)
    .header('cross-origin-opener-policy', 'same-origin').send(body);
}

/** Adds `field` to Vary, keeping what is there (CORS's `Origin`): a shared cache must key on both. */
function vary(reply: FastifyReply, field: string): void {
  const current = String(reply.getHeader('vary') ?? '');
  const fields = current.split(',').map((f) => f.trim()).filter(Boolean);
  if (!fields.some((f) => f.toLowerCase() === field || f === '*')) reply.header('vary', [...fields, field].join(', '));
}

/** Whether Accept-Encoding admits `coding` (named with a q above 0, or by `*`). */
function accepts(header: string, coding: string): boolean {
  let star = false;
  for (const part of header.toLowerCase().split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const admitted = !q || Number(q.slice(2)) > 0;
    if (name.trim() === coding) return admitted;
    if (name.trim() === '*') star = admitted;
  }
  return star;
}

/** The form of an asset to send: Brotli, then gzip, when the build wrote it and the client takes it. */
function pickEncoding(file: ConsoleFile, header: string | undefined): ['br' | 'gzip' | null, Encoded] {
  if (header && file.br && accepts(header, 'br')) return ['br', file.br];
  if (header && file.gzip && accepts(header, 'gzip')) return ['gzip', file.gzip];
  return [null, file];
}

/** A browser's navigation asks for HTML first; API clients ask for JSON or anything. */
function wantsHtml(request: FastifyRequest): boolean {
  const accept = String(request.headers.accept ?? '');
  return /\btext\/html\b/i.test(accept);
}

export function consoleRoutes(build: ConsoleBuild): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const hide = { schema: { hide: true } };
    const home = homePage(build);
    // A hashed asset never changes: the service's no-cache headers (set before this hook) go.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (reply.getHeader('cache-control') === IMMUTABLE) {
        reply.removeHeader('pragma');
        reply.removeHeader('expires');
      }
      return payload;
    });
    const page = (which: 'console' | 'account') => async (_request: FastifyRequest, reply: FastifyReply) =>
      build.pages ? html(reply, 200, build.pages[which]) : html(reply, 503, NOT_BUILT);

    app.get('/console', hide, page('console'));
    app.get('/account', hide, page('account'));
    app.get('/account/*', hide, page('account'));
    app.get('/console/*', hide, async (request, reply) => {
      const rest = (request.params as { '*': string })['*'];
      if (!rest.startsWith('assets/')) return page('console')(request, reply);
      const file = build.assets.get(rest.slice('assets/'.length));
      if (!file) throw notFound(request);
      const [encoding, sent] = pickEncoding(file, request.headers['accept-encoding']);
      vary(reply, 'accept-encoding');
      if (encoding) reply.header('content-encoding', encoding);
      return reply.type(file.type).header('cache-control', IMMUTABLE).header('content-security-policy', CONSOLE_CSP)
        .header('x-content-sha256', sent.sha256).header('cross-origin-resource-policy', 'same-origin').send(sent.body);
    });
    app.get('/', hide, async (request, reply) => {
      vary(reply, 'accept'); // a page for browsers, a JSON 404 for the rest
      if (!wantsHtml(request)) throw notFound(request);
      return html(reply, 200, home);
    });
  };
}
