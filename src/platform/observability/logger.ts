/**
 * Structured logs (pino). Anything that could hold a secret is redacted by path, so a secret
 * never reaches a log line even when a whole body or header set is logged by mistake.
 */
import pino, { type Logger } from 'pino';

const SECRET_KEYS = [
  'password', 'current_password', 'new_password', 'temporary_password', 'bind_password',
  'access_token', 'refresh_token', 'reset_token', 'two_factor_token', 'token', 'secret',
  'code', 'aes_key', 'private_key', 'push_token',
  'answer', 'answers', 'proof_token', 'backup_codes', 'otpauth_uri', 'qr_code',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'strongroom' },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
