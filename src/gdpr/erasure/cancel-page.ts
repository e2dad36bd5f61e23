/**
 * The "keep my account" page of the erasure notices: `GET /gdpr/erasure/cancel` serves a small
 * self-contained page (no external asset; a Content-Security-Policy that admits only its own
 * inline script and style by hash, and same-origin requests). Its script reads the cancel token
 * from the URL's fragment (which the browser never sends to a server), drops it from the address
 * bar, and on a click POSTs it to `POST /gdpr/erasure/cancel` (the same path, so it works behind
 * a proxy prefix). Both are exempt from transport encryption: a browser page holds no session
 * key, and the single-use token is all it sends.
 */
import { createHash } from 'node:crypto';

export const ERASURE_PAGE_PATH = '/gdpr/erasure/cancel';

/** A cancel token: `erx_` and 32 random bytes, base64url. */
export const ERASURE_TOKEN_PATTERN = '^erx_[A-Za-z0-9_-]{43}$';

const SCRIPT = `
(function () {
  var token = location.hash.replace(/^#/, '');
  if (location.hash) history.replaceState(null, '', location.pathname);
  var button = document.getElementById('keep');
  var out = document.getElementById('out');
  if (!/${ERASURE_TOKEN_PATTERN}/.test(token)) {
    button.hidden = true;
    out.textContent = 'This link is not complete. Open it again from the message, or cancel in the app with your username and password.';
    return;
  }
  button.addEventListener('click', function () {
    button.disabled = true;
    fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: token }), credentials: 'omit', referrerPolicy: 'no-referrer' })
      .then(function (res) {
        button.hidden = true;
        out.textContent = res.ok ? 'Done: your account will not be erased, and you can sign in again as usual.'
          : 'This link is no longer valid: the erasure was cancelled already, or has been done. Contact the bank through the number you already know.';
      })
      .catch(function () { button.disabled = false; out.textContent = 'The bank could not be reached; try again.'; });
  });
})();
`;

const STYLE = 'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font-size:1.1rem;padding:.6rem 1.2rem}';

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export const ERASURE_PAGE_CSP = [
  "default-src 'none'", `script-src ${sha256(SCRIPT)}`, `style-src ${sha256(STYLE)}`, "connect-src 'self'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

export const ERASURE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>Keep your account</title><style>${STYLE}</style></head>
<body><h1>Keep my account</h1>
<p>Your account is to be erased. If you want to keep it, or did not ask for this, cancel the erasure now.</p>
<p><button id="keep" type="button">Cancel the erasure</button></p>
<p id="out" role="status"></p>
<script>${SCRIPT}</script></body></html>`;
