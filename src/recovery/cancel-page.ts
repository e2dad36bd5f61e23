/**
 * The "this was not me" page of the recovery notices: `GET /recovery/cancel` serves a small
 * self-contained page (no external asset, a strict Content-Security-Policy that admits only its
 * own inline script and style by hash, and same-origin requests); its script reads the cancel
 * token from the URL's fragment, which the browser never sent to the server, drops it from the
 * address bar, and on a click POSTs it to `POST /recovery/cancel` (the same path, so it works
 * behind a proxy prefix). Both are exempt from transport encryption: a browser page holds no
 * session key, and the token is all it sends.
 */
import { createHash } from 'node:crypto';

const SCRIPT = `
(function () {
  var token = location.hash.replace(/^#/, '');
  if (location.hash) history.replaceState(null, '', location.pathname);
  var button = document.getElementById('stop');
  var out = document.getElementById('out');
  if (!/^rcx_[A-Za-z0-9_-]{43}$/.test(token)) {
    button.hidden = true;
    out.textContent = 'This link is not complete. Open it again from the message, or contact the bank through the number you already know.';
    return;
  }
  button.addEventListener('click', function () {
    button.disabled = true;
    fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cancel_token: token }), credentials: 'omit', referrerPolicy: 'no-referrer' })
      .then(function (res) { return res.json().then(function (body) { return { ok: res.ok, body: body }; }); })
      .then(function (r) {
        button.hidden = true;
        if (r.ok) out.textContent = 'Done: the recovery is stopped and recovery of your account is locked for a while. The bank has been alerted. You can still sign in as usual.';
        else if (r.body && r.body.error_code === 'RECOVERY_CANCEL_TOKEN_USED') out.textContent = 'This link has been used already: the recovery was stopped then.';
        else out.textContent = 'This link is no longer valid. If you did not ask to recover your account, contact the bank through the number you already know.';
      })
      .catch(function () { button.disabled = false; out.textContent = 'The bank could not be reached; try again.'; });
  });
})();
`;

const STYLE = 'body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font-size:1.1rem;padding:.6rem 1.2rem}';

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export const CANCEL_PAGE_CSP = [
  "default-src 'none'", `script-src ${sha256(SCRIPT)}`, `style-src ${sha256(STYLE)}`, "connect-src 'self'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

export const CANCEL_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>Stop the recovery of your account</title><style>${STYLE}</style></head>
<body><h1>This was not me</h1>
<p>Someone is recovering your bank account. If it was not you, stop it now: nothing you hold will change, and you can still sign in as usual.</p>
<p><button id="stop" type="button">Stop this recovery</button></p>
<p id="out" role="status"></p>
<script>${SCRIPT}</script></body></html>`;
