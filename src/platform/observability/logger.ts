/**
 * Structured logs (pino). Anything that could hold a secret is redacted by path, so a secret
 * never reaches a log line even when a whole body or header set is logged by mistake.
 */
import pino, { type Logger } from 'pino';
import { traceFields } from './tracing.js';

const SECRET_KEYS = [
  'password', 'current_password', 'new_password', 'temporary_password', 'bind_password',
  'access_token', 'refresh_token', 'reset_token', 'two_factor_token', 'token', 'secret',
  'code', 'aes_key', 'private_key', 'push_token',
  'answer', 'answers', 'proof_token', 'backup_codes', 'otpauth_uri', 'qr_code',
  'pin', 'current_pin', 'new_pin',
  'device_fingerprint', // half of a bound device's credential (src/access/devices.ts)
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-gateway-key"]',
  'headers["x-gateway-key"]',
  'req.headers["x-device-fingerprint"]',
  'headers["x-device-fingerprint"]',
  'headers.authorization',
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
];

/**
 * Database errors carry the statement and its bound values (PGlite: `query`, `params`; pg:
 * `parameters` on some), which may hold password hashes, token ids or session keys; key-name
 * redaction cannot reach positional values, so these fields are dropped from every logged error.
 */
const ERROR_FIELDS_NOT_LOGGED = ['query', 'params', 'parameters', 'queryOptions'] as const;

export function serializeError(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  if (out === null || typeof out !== 'object') return out;
  for (const k of ERROR_FIELDS_NOT_LOGGED) delete out[k];
  // `code` is redacted by name (one-time codes); an error's code (23505, ECONNREFUSED) is not secret.
  if (typeof out.code === 'string' || typeof out.code === 'number') {
    out.err_code = out.code;
    delete out.code;
  }
  if (out.cause !== null && typeof out.cause === 'object') out.cause = serializeError(out.cause);
  return out;
}

/**
 * The process's logger. A line written while a traced request is under way carries the current
 * span's `trace_id` and `span_id` (one AsyncLocalStorage lookup a line when tracing is off).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'strongroom' },
      mixin: traceFields,
      serializers: { err: serializeError },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/**
 * The access lines' logger: the process logger's level and destination, without its redaction.
 * An access line holds only fields the server fills (method, route, status, time, address, user
 * id, request id), never a header, a body or a token; and redaction by wildcard path costs about
 * 100 us a line, twenty times the line itself (docs/benchmarks.md), on every request.
 */
export function accessLogger(log: Logger): Logger {
  const stream = (log as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  return pino({ level: log.level, base: { service: 'strongroom' }, timestamp: pino.stdTimeFunctions.isoTime }, stream);
}
