/**
 * One error type for everything a client may see. Each capability declares its catalogue with
 * `defineErrors`: a stable SCREAMING_SNAKE code, its HTTP status and a message that never tells
 * whether an account exists. The HTTP layer turns an `AppError` into SPEC's error body
 * `{status_code, error_code, message, details}`; the log also gets the `cause`.
 */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.headers = options?.headers ?? {};
  }
  readonly headers: Record<string, string>;
}

export interface ErrorDef {
  status: number;
  message: string;
}

/** Makes a code's error; `code` and `status` name it (`errors(...)` in a route's schema lists factories). */
export type ErrorFactory = ((
  details?: Record<string, unknown>,
  options?: { cause?: unknown; headers?: Record<string, string>; message?: string },
) => AppError) & { readonly code: string; readonly status: number; readonly message: string };

export type ErrorCatalogue<T extends Record<string, ErrorDef>> = { [K in keyof T]: ErrorFactory } & {
  readonly definitions: T;
};

export function defineErrors<const T extends Record<string, ErrorDef>>(defs: T): ErrorCatalogue<T> {
  const out: Record<string, unknown> = { definitions: defs };
  for (const [code, def] of Object.entries(defs)) {
    const make = (details?: Record<string, unknown>, options?: { cause?: unknown; headers?: Record<string, string>; message?: string }): AppError =>
      new AppError(def.status, code, options?.message ?? def.message, details ?? {}, options);
    out[code] = Object.assign(make, { code, status: def.status, message: def.message }) satisfies ErrorFactory;
  }
  return out as ErrorCatalogue<T>;
}

/** A "come back later" error: `Retry-After` and `details.retry_after_seconds`, at least 1 second. */
export function retryLater(factory: ErrorFactory, seconds: number): AppError {
  const s = Math.max(1, Math.ceil(seconds));
  return factory({ retry_after_seconds: s }, { headers: { 'retry-after': String(s) } });
}

/** Errors of the HTTP layer itself, shared by every route. */
export const CommonErrors = defineErrors({
  MALFORMED_REQUEST: { status: 400, message: 'The request body could not be parsed.' },
  VALIDATION_ERROR: { status: 422, message: 'The request does not match the schema.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request content type is not supported.' },
  NOT_FOUND: { status: 404, message: 'No such resource.' },
  /** `details.allowed` and the `Allow` header: the methods the path takes. */
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not allowed on this path.' },
  PERMISSION_DENIED: { status: 403, message: 'You do not have permission for this action.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; try again later.' },
  INTERNAL_ERROR: { status: 500, message: 'An internal error occurred.' },
});
