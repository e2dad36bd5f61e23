/**
 * A one-click page for a link in a notice ("this was not me", "keep my account"): a small
 * self-contained HTML page (no external asset; a Content-Security-Policy that admits only its own
 * inline script and style by hash, and same-origin requests). Its script reads the single-use
 * token from the URL's fragment, which the browser never sends to a server (so it reaches no
 * log), drops it from the address bar, and on a click POSTs `{ [field]: token }` to the page's
 * own path (so it works behind a proxy prefix), then says what happened. Such a page and its POST
 * are exempt from transport encryption: a browser page holds no session key, and the token is
 * all it sends.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

export interface OneClickPageText {
  /** The document's title. */
  title: string;
  heading: string;
  /** The paragraph above the button. */
  lead: string;
  button: string;
  /** The token the fragment must hold (a regular expression's source, anchored). */
  tokenPattern: string;
  /** The body field the token is posted in. */
  field: string;
  /** Said when the fragment holds no well-formed token. */
  incomplete: string;
  /** Said after a 2xx answer. */
  done: string;
  /** Said after a refusal whose `error_code` is not in `byCode`. */
  refused: string;
  /** Said after a refusal with this `error_code`. */
  byCode?: Readonly<Record<string, string>>;
}

export interface OneClickPage {
  html: string;
  csp: string;
}

const STYLE = 'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font-size:1.1rem;padding:.6rem 1.2rem}';

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function script(t: OneClickPageText): string {
  const say = JSON.stringify({ incomplete: t.incomplete, done: t.done, refused: t.refused, byCode: t.byCode ?? {} });
  return `
(function () {
  var say = ${say};
  var token = location.hash.replace(/^#/, '');
  if (location.hash) history.replaceState(null, '', location.pathname);
  var button = document.getElementById('go');
  var out = document.getElementById('out');
  if (!/${t.tokenPattern}/.test(token)) {
    button.hidden = true;
    out.textContent = say.incomplete;
    return;
  }
  button.addEventListener('click', function () {
    button.disabled = true;
    var body = {};
    body[${JSON.stringify(t.field)}] = token;
    fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'omit', referrerPolicy: 'no-referrer' })
      .then(function (res) { return res.json().catch(function () { return {}; }).then(function (b) { return { ok: res.ok, body: b }; }); })
      .then(function (r) {
        button.hidden = true;
        var code = r.body && r.body.error_code;
        out.textContent = r.ok ? say.done : (Object.prototype.hasOwnProperty.call(say.byCode, code) ? say.byCode[code] : say.refused);
      })
      .catch(function () { button.disabled = false; out.textContent = 'The bank could not be reached; try again.'; });
  });
})();
`;
}

/** The page and its Content-Security-Policy. */
export function oneClickPage(t: OneClickPageText): OneClickPage {
  const js = script(t);
  const csp = [
    "default-src 'none'", `script-src ${sha256(js)}`, `style-src ${sha256(STYLE)}`, "connect-src 'self'",
    "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>${escapeHtml(t.title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(t.heading)}</h1>
<p>${escapeHtml(t.lead)}</p>
<p><button id="go" type="button">${escapeHtml(t.button)}</button></p>
<p id="out" role="status"></p>
<script>${js}</script></body></html>`;
  return { html, csp };
}

/** Sends a one-click page: never cached, never framed, no referrer. */
export function sendOneClickPage(reply: FastifyReply, page: OneClickPage): FastifyReply {
  return reply.type('text/html; charset=utf-8').header('content-security-policy', page.csp).header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer').header('x-frame-options', 'DENY').send(page.html);
}
