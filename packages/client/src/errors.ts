/**
 * Every failure the client reports is a `StrongroomError`. For an answer of the server it
 * carries the service's error body (`status_code`, `error_code`, `message`, `details`), decrypted first
 * when the answer was sealed. Failures on the client's side have `status` 0 and one of the
 * codes of `ClientErrorCode`.
 */

/** Codes the client itself produces (the server's codes are documented in its OpenAPI). */
export type ClientErrorCode =
  /** fetch threw: no connection, DNS, CORS, aborted. */
  | 'NETWORK_ERROR'
  /** The answer could not be read: not JSON, not the error body's shape, not decryptable, or plaintext where a sealed answer was due. */
  | 'INVALID_RESPONSE'
  /** The call needs a signed-in session and there is none. */
  | 'NOT_SIGNED_IN'
  /** The device made no passkey answer: the person cancelled, or the browser refused (`details.name`: `NotAllowedError`, ...). */
  | 'PASSKEY_CANCELLED'
  /** The caller's `AbortSignal` aborted (`pushApproval.waitForApproval`). */
  | 'ABORTED';

export interface ErrorBody {
  status_code: number;
  error_code: string;
  message: string;
  details: Record<string, unknown>;
}

export class StrongroomError extends Error {
  /** HTTP status; 0 when the failure happened on the client's side. */
  readonly status: number;
  /** The service's `error_code`, e.g. INVALID_CREDENTIALS, TOKEN_EXPIRED, DECRYPTION_FAILED, or a `ClientErrorCode`. */
  readonly errorCode: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, errorCode: string, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StrongroomError';
    this.status = status;
    this.errorCode = errorCode;
    this.details = details;
  }

  /** The server's id of the request that failed (`details.request_id`, its `X-Request-ID`): quote it to the bank's support, who find the request's log line and trace by it. Undefined for a failure on the client's side. */
  get requestId(): string | undefined {
    return typeof this.details.request_id === 'string' ? this.details.request_id : undefined;
  }

  static fromBody(status: number, body: unknown): StrongroomError {
    if (isErrorBody(body)) return new StrongroomError(status, body.error_code, body.message, body.details ?? {});
    return new StrongroomError(status, 'INVALID_RESPONSE', `HTTP ${status} without an error body`, { body });
  }

  toJSON(): ErrorBody {
    return { status_code: this.status, error_code: this.errorCode, message: this.message, details: this.details };
  }
}

export function isErrorBody(v: unknown): v is ErrorBody {
  if (typeof v !== 'object' || v === null) return false;
  const b = v as Record<string, unknown>;
  return typeof b.error_code === 'string' && typeof b.message === 'string' && (b.details === undefined || (typeof b.details === 'object' && b.details !== null));
}
