/**
 * The "keep my account" page of the erasure notices: `GET /gdpr/erasure/cancel` serves a small
 * self-contained page (no external asset; a Content-Security-Policy that admits only its own
 * inline script and style by hash, and same-origin requests). Its script reads the cancel token
 * from the URL's fragment (which the browser never sends to a server), drops it from the address
 * bar, and on a click POSTs it to `POST /gdpr/erasure/cancel` (the same path, so it works behind
 * a proxy prefix). Both are exempt from transport encryption: a browser page holds no session
 * key, and the single-use token is all it sends.
 */
import { oneClickPage } from '../../platform/http/one-click-page.js';

export const ERASURE_PAGE_PATH = '/gdpr/erasure/cancel';

/** A cancel token: `erx_` and 32 random bytes, base64url. */
export const ERASURE_TOKEN_PATTERN = '^erx_[A-Za-z0-9_-]{43}$';

/** The page and its Content-Security-Policy (src/platform/http/one-click-page.ts). */
export const ERASURE_PAGE = oneClickPage({
  title: 'Keep your account',
  heading: 'Keep my account',
  lead: 'Your account is to be erased. If you want to keep it, or did not ask for this, cancel the erasure now.',
  button: 'Cancel the erasure',
  tokenPattern: ERASURE_TOKEN_PATTERN,
  field: 'token',
  incomplete: 'This link is not complete. Open it again from the message, or cancel in the app with your username and password.',
  done: 'Done: your account will not be erased, and you can sign in again as usual.',
  refused: 'This link is no longer valid: the erasure was cancelled already, or has been done. Contact the bank through the number you already know.',
});
