/**
 * Push approval for the SDK (`client.pushApproval`): after 401 2FA_REQUIRED whose `methods`
 * include `push_approval`, ask the enrolled phone (`request`: the page shows the answer's
 * `number`), then wait for the phone's answer (`waitForApproval`), which finishes the sign-in.
 * A signed-in session steps up the same way (`stepUp`, or `requestStepUp` then `waitForStepUp`).
 */
import { StrongroomError } from './errors.js';
import type { SdkHost, StepUpResponse } from './passkeys.js';
import type { SignInResponse } from './types.js';

export const PUSH_APPROVAL_PATHS = Object.freeze({
  request: '/api/v1/auth/push-approval/request',
  complete: '/api/v1/auth/push-approval/complete',
  stepUpRequest: '/api/v1/auth/push-approval/step-up/request',
  stepUpComplete: '/api/v1/auth/push-approval/step-up/complete',
});

/** How long the server is asked to hold each poll while the phone has not answered. */
export const PUSH_APPROVAL_WAIT_SECONDS = 25;

/** The phone was asked: show `number` on the page; the person taps the same one on the phone. */
export interface PushApprovalSent {
  request_id: string;
  /** Two digits, 10 to 99. */
  number: number;
  /** Seconds the phone has left to answer. */
  expires_in: number;
}

export interface PushApprovalRoutes {
  /**
   * Sends the push to the enrolled phone. Asking again with the same token while the request is
   * pending answers the same `request_id` and `number` (nothing is sent again). Throws 403
   * PUSH_APPROVAL_DENIED (`details.reason`), 429 PUSH_APPROVAL_TOO_MANY, 429 MFA_LOCKED, 503
   * PUSH_APPROVAL_UNAVAILABLE, and the token's errors.
   */
  request(twoFactorToken: string): Promise<PushApprovalSent>;
  /**
   * Resolves to the sign-in (the client is then signed in) once the phone approved with the right
   * number. Each poll asks the server to hold the answer up to 25 seconds (`wait_seconds`), and
   * polls again while it answers 409 PUSH_APPROVAL_PENDING (never sooner than its
   * `retry_after_seconds` after the previous poll was sent). Rejects with the StrongroomError of
   * any other answer: 403 PUSH_APPROVAL_DENIED (`details.reason`: `denied`, `wrong_number`,
   * `fraud_reported`, `superseded`, `factor_removed`), 410 PUSH_APPROVAL_EXPIRED (ask again;
   * `details.reason: approval_stale` when approved more than 2 minutes earlier), 409
   * PUSH_APPROVAL_USED (a parallel completion used it), 429 MFA_LOCKED, 429 RATE_LIMITED (the
   * waiting page's limit, `push_approval_wait`, reached, as by many pages behind one network:
   * call it again after `retry_after_seconds`), 404 PUSH_APPROVAL_NOT_FOUND, a token's 401, or
   * NETWORK_ERROR (call it again); with `ABORTED` (status 0) once `signal` aborts.
   */
  waitForApproval(twoFactorToken: string, requestId: string, options?: { signal?: AbortSignal }): Promise<SignInResponse>;
  /**
   * Steps the signed-in session up with the enrolled phone (before a sensitive change: 403
   * STEP_UP_REQUIRED): `requestStepUp`, then `onSent` with the `number` the page must show, then
   * `waitForStepUp`. Resolves to the step-up (the session has a fresh second factor). Rejects as
   * those two do; NOT_SIGNED_IN without a session.
   */
  stepUp(options?: { onSent?: (sent: PushApprovalSent) => void; signal?: AbortSignal }): Promise<StepUpResponse>;
  /**
   * Sends the step-up push to the enrolled phone; asking again in this session while it is pending
   * answers the same request. Throws 400 MFA_METHOD_UNAVAILABLE (no `push_approval` factor), 403
   * PUSH_APPROVAL_DENIED, 429 PUSH_APPROVAL_TOO_MANY, 429 MFA_LOCKED, 503 PUSH_APPROVAL_UNAVAILABLE,
   * and the session's 401.
   */
  requestStepUp(): Promise<PushApprovalSent>;
  /**
   * Resolves to the step-up once the phone approved with the right number: polls as
   * `waitForApproval` does (25-second holds, again while 409 PUSH_APPROVAL_PENDING). Rejects with
   * 403 PUSH_APPROVAL_DENIED (`details.reason`), 410 PUSH_APPROVAL_EXPIRED, 404
   * PUSH_APPROVAL_NOT_FOUND (another session's request), 409 PUSH_APPROVAL_USED, 429 MFA_LOCKED,
   * 429 RATE_LIMITED (as `waitForApproval`), the session's 401, NETWORK_ERROR, or ABORTED once
   * `signal` aborts.
   */
  waitForStepUp(requestId: string, options?: { signal?: AbortSignal }): Promise<StepUpResponse>;
}

const preAuth = { auth: false, autoRefresh: false } as const;

function aborted(signal: AbortSignal): StrongroomError {
  return new StrongroomError(0, 'ABORTED', 'Stopped waiting for the phone: the signal was aborted.', {}, { cause: signal.reason });
}

/** Resolves after `ms` (at once when not positive), or rejects ABORTED when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(aborted(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const isPending = (err: unknown): err is StrongroomError => err instanceof StrongroomError && err.status === 409 && err.errorCode === 'PUSH_APPROVAL_PENDING';

/**
 * POSTs `body` (with `wait_seconds`) to `path` until it answers other than 409
 * PUSH_APPROVAL_PENDING, never sooner than that answer's `retry_after_seconds` after the previous
 * poll was sent.
 */
async function poll<T>(host: SdkHost, path: string, body: Record<string, unknown>, auth: { auth?: boolean; autoRefresh?: boolean }, signal: AbortSignal | undefined): Promise<T> {
  const payload = { ...body, wait_seconds: PUSH_APPROVAL_WAIT_SECONDS };
  for (;;) {
    if (signal?.aborted) throw aborted(signal);
    const sentAt = Date.now();
    try {
      return await host.request<T>('POST', path, payload, { ...auth, ...(signal ? { signal } : {}) });
    } catch (err) {
      if (signal?.aborted) throw aborted(signal);
      if (!isPending(err)) throw err;
      const retryAfter = typeof err.details.retry_after_seconds === 'number' ? err.details.retry_after_seconds : 2;
      await pause(sentAt + retryAfter * 1000 - Date.now(), signal);
    }
  }
}

export function pushApprovalRoutes(host: SdkHost): PushApprovalRoutes {
  const routes: PushApprovalRoutes = {
    request: (twoFactorToken) => host.request('POST', PUSH_APPROVAL_PATHS.request, { two_factor_token: twoFactorToken }, preAuth),
    waitForApproval: (twoFactorToken, requestId, options = {}) =>
      poll<SignInResponse>(host, PUSH_APPROVAL_PATHS.complete, { two_factor_token: twoFactorToken, request_id: requestId }, preAuth, options.signal),
    async requestStepUp() {
      await host.requireSession();
      return host.request<PushApprovalSent>('POST', PUSH_APPROVAL_PATHS.stepUpRequest, {});
    },
    waitForStepUp: (requestId, options = {}) => poll<StepUpResponse>(host, PUSH_APPROVAL_PATHS.stepUpComplete, { request_id: requestId }, {}, options.signal),
    async stepUp(options = {}) {
      const { signal } = options;
      if (signal?.aborted) throw aborted(signal);
      const sent = await routes.requestStepUp();
      options.onSent?.(sent);
      return routes.waitForStepUp(sent.request_id, signal ? { signal } : {});
    },
  };
  return routes;
}
