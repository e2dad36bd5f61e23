/**
 * The "this was not me" page of the sign-in notices: `GET /security/not-me` serves the service's
 * one-click page (src/platform/http/one-click-page.ts: self-contained, a strict
 * Content-Security-Policy); its script reads the token from the URL's fragment, which the
 * browser never sent to the server, drops it from the address bar, and on a click POSTs it to
 * `POST /security/not-me` (the same path, so it works behind a proxy prefix). Both are exempt from
 * transport encryption: a browser page holds no session key, and the token is all it sends.
 */
import { oneClickPage } from '../../platform/http/one-click-page.js';

export const NOT_ME_PAGE_PATH = '/security/not-me';

export const NOT_ME_PAGE = oneClickPage({
  title: 'This sign-in was not me',
  heading: 'This was not me',
  lead: 'If you did not sign in to your bank account as the message describes, press the button: every session of your account is signed out at once and the account is locked, so that nobody can sign in until you recover it.',
  button: 'Sign everyone out and lock my account',
  tokenPattern: '^rnm_[A-Za-z0-9_-]{43}$',
  field: 'not_me_token',
  incomplete: 'This link is not complete. Open it again from the message, or contact the bank through the number you already know.',
  done: 'Done: every session of your account is signed out and the account is locked. The bank has been alerted. To use your account again, recover it with the account recovery (a new password), or contact the bank.',
  refused: 'This link is no longer valid. If a sign-in was not yours, contact the bank through the number you already know.',
  byCode: { NOT_ME_TOKEN_USED: 'This link has been used already: your account was locked then.' },
});
