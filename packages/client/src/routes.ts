/**
 * Which encryption a path gets (pre-auth, session or none). The lists mirror the
 * server's defaults; a platform that configures other pre-auth routes (the server's
 * TRANSPORT_PREAUTH_ROUTES) passes the same list to the client's `preAuthRoutes` option.
 */

/** Bodies encrypted to the server's RSA key, answers encrypted to the client's RSA key. */
export const DEFAULT_PREAUTH_ROUTES: readonly string[] = Object.freeze([
  '/api/v1/auth/login', '/api/v1/auth/validate', '/api/v1/auth/2fa/request', '/api/v1/auth/2fa/verify',
  '/api/v1/auth/2fa/validate', '/api/v1/auth/agent/validate', '/api/v1/auth/password', '/api/v1/transaction/transfer/receipt',
  '/api/v1/2fa/totp/setup', '/api/v1/2fa/totp/verify', '/api/v1/2fa/totp/verify-login', '/api/v1/2fa/totp/verify-backup-code',
  '/api/v1/auth/security-questions/predefined', '/api/v1/auth/security-questions/verify', '/api/v1/auth/security-questions/setup',
  '/api/v1/auth/refresh', '/api/v1/auth/reset/password',
  '/api/v1/2fa/otp/setup', '/api/v1/2fa/otp/verify', '/api/v1/auth/security-questions', '/api/v1/auth/reset/mfa',
  '/api/v1/auth/login/mobile', '/api/v1/auth/validate/mobile', '/api/v1/auth/reset/pin', '/api/v1/auth/ldap/login', '/api/v1/auth/third-party/login',
  '/api/v1/auth/reset/initiate', '/api/v1/auth/reset/verify-identity', '/api/v1/auth/reset/status', '/api/v1/auth/reset/cancel',
  '/api/v1/auth/reset/access-policy', '/api/v1/auth/gdpr/delete/cancel', '/api/v1/auth/security/not-me',
  '/api/v1/auth/passkey/options', '/api/v1/auth/passkey/login', '/api/v1/auth/passkey/2fa/options', '/api/v1/auth/passkey/2fa/verify',
  '/api/v1/passkeys/registration/options', '/api/v1/passkeys/registration/verify',
  '/api/v1/auth/push-approval/request', '/api/v1/auth/push-approval/complete',
]);

/** Never encrypted, either way. */
export const DEFAULT_EXEMPT_PATHS: readonly string[] = Object.freeze([
  '/api/v1/auth/public_key', '/api/v1/core/translations/fetch', '/api/docs', '/api/redoc', '/api/openapi.json', '/api',
  '/api/health', '/health', '/metrics', '/mcp', '/recovery/cancel', '/gdpr/erasure/cancel', '/security/not-me', '/api/v1/ws',
]);

/** Never encrypted, by prefix: the documentation's assets and the public FAQ. */
export const DEFAULT_EXEMPT_PREFIXES: readonly string[] = Object.freeze(['/api/docs/', '/api/v1/faq/']);

/** Answers on these paths are binary and never encrypted (the request still is). */
export const DEFAULT_BINARY_FRAGMENTS: readonly string[] = Object.freeze([
  'document/download', 'customer/download', 'file/download', 'attachment', 'statement/export', 'simulator/download',
  'report/download', 'qr-code/image',
]);

export type EncryptionMode = 'preauth' | 'session' | 'none';

export interface RouteRules {
  preAuthRoutes: readonly string[];
  exemptPaths: readonly string[];
}

/** The path without query string, fragment or trailing slashes, as the server matches it. */
export function normalisePath(path: string): string {
  return path.split(/[?#]/)[0]!.replace(/\/+$/, '') || '/';
}

export function encryptionModeOf(path: string, rules: RouteRules): EncryptionMode {
  const p = normalisePath(path);
  if (rules.exemptPaths.includes(p) || DEFAULT_EXEMPT_PREFIXES.some((x) => p.startsWith(x)) || p.split('/').includes('ussd')) return 'none';
  return rules.preAuthRoutes.includes(p) ? 'preauth' : 'session';
}
