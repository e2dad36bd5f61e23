/**
 * The "this was not me" page of the recovery notices: `GET /recovery/cancel` serves a small
 * self-contained page (no external asset, a strict Content-Security-Policy that admits only its
 * own inline script and style by hash, and same-origin requests); its script reads the cancel
 * token from the URL's fragment, which the browser never sent to the server, drops it from the
 * address bar, and on a click POSTs it to `POST /recovery/cancel` (the same path, so it works
 * behind a proxy prefix). Both are exempt from transport encryption: a browser page holds no
 * session key, and the token is all it sends.
 */
import { oneClickPage } from '../platform/http/one-click-page.js';

/** The page and its Content-Security-Policy (src/platform/http/one-click-page.ts). */
export const CANCEL_PAGE = oneClickPage({
  title: 'Stop the recovery of your account',
  heading: 'This was not me',
  lead: 'Someone is recovering your bank account. If it was not you, stop it now: nothing you hold will change, and you can still sign in as usual.',
  button: 'Stop this recovery',
  tokenPattern: '^rcx_[A-Za-z0-9_-]{43}$',
  field: 'cancel_token',
  incomplete: 'This link is not complete. Open it again from the message, or contact the bank through the number you already know.',
  done: 'Done: the recovery is stopped and recovery of your account is locked for a while. The bank has been alerted. You can still sign in as usual.',
  refused: 'This link is no longer valid. If you did not ask to recover your account, contact the bank through the number you already know.',
  byCode: { RECOVERY_CANCEL_TOKEN_USED: 'This link has been used already: the recovery was stopped then.' },
});
