/**
 * The SMS gateway adapter: one HTTP call per message, to whatever gateway the bank runs or buys
 * (SMS_GATEWAY_URL). Strongroom speaks this contract; a gateway that speaks another one gets a
 * small shim in front of it.
 *
 * ## SMS gateway contract
 *
 * Request: `POST <SMS_GATEWAY_URL>` with headers
 * - `Content-Type: application/json`
 * - `Authorization: Bearer <SMS_GATEWAY_TOKEN>` (only when SMS_GATEWAY_TOKEN is set)
 * - `Idempotency-Key: <reference>`: the same key is never used for two different messages, so a
 *   gateway that sees it twice must send once and answer as the first time.
 *
 * and the body
 * ```json
 * {"to": "+254712345612", "from": "Strongroom", "message": "123456 is your Strongroom code ...", "reference": "6f1c2d0e-8a4b-4c55-9e1f-3b7a2d9c0e11"}
 * ```
 * `to` is E.164 with its `+`; `from` is SMS_SENDER_ID; `message` is plain text of at most 160
 * characters; `reference` is Strongroom's id for the code (a UUID), for the gateway's records.
 *
 * Response: any 2xx status with the JSON body
 * ```json
 * {"id": "gw-msg-8841", "status": "queued"}
 * ```
 * where `id` is the gateway's message id (a non-empty string of at most 256 characters; stored as
 * the code's `delivery_ref`) and `status` is `queued`, `sent` or `delivered`. That means the
 * gateway accepted the message. Anything else is a failed delivery: a non-2xx status, a body
 * that is not that JSON, no answer within SMS_GATEWAY_TIMEOUT_MS (default 10000), a refused or
 * broken connection, or a redirect (never followed, so the token cannot be carried to another
 * host). Strongroom then answers `503 OTP_DELIVERY_FAILED` and the code is void.
 *
 * The token and the message (which holds the code) are never logged; a failure is logged and
 * audited with a short reason such as `HTTP 500`, `timeout` or `ECONNREFUSED`.
 */
import type { Logger } from 'pino';
import type { Config } from '../../platform/config.js';
import { inSpan } from '../../platform/observability/tracing.js';

export interface SmsRequest {
  to: string;
  message: string;
  reference: string;
}

export interface SmsAccepted {
  id: string;
  status: 'queued' | 'sent' | 'delivered';
}

/** The gateway did not accept the message. `reason` is safe to log and audit. */
export class SmsDeliveryError extends Error {
  constructor(readonly reason: string) {
    super(`SMS delivery failed: ${reason}`);
    this.name = 'SmsDeliveryError';
  }
}

const ACCEPTED = new Set(['queued', 'sent', 'delivered']);

/** A short reason for a failed `fetch`: a timeout, or the socket error code, never a URL or header. */
function reasonOf(err: unknown): string {
  const e = err as { name?: unknown; cause?: { code?: unknown } };
  if (e.name === 'TimeoutError') return 'timeout';
  if (typeof e.cause?.code === 'string') return e.cause.code;
  return 'network error';
}

function accepted(body: unknown): SmsAccepted | null {
  if (typeof body !== 'object' || body === null) return null;
  const { id, status } = body as Record<string, unknown>;
  if (typeof id !== 'string' || id.length === 0 || id.length > 256) return null;
  if (typeof status !== 'string' || !ACCEPTED.has(status)) return null;
  return { id, status: status as SmsAccepted['status'] };
}

export class SmsGateway {
  /** The gateway's address for spans: never its URL's path or query, the number, the message or the token. */
  private readonly server: { 'http.request.method': 'POST'; 'server.address': string; 'server.port': number };

  constructor(private readonly sms: Config['sms'] & { url: string }, private readonly log: Logger) {
    const u = new URL(sms.url);
    this.server = { 'http.request.method': 'POST', 'server.address': u.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
  }

  /** Resolves once the gateway accepted the message; rejects with `SmsDeliveryError` otherwise. */
  async send(req: SmsRequest): Promise<SmsAccepted> {
    try {
      return await inSpan('SMS gateway send', this.server, (span) => this.post(req, (status) => span.setAttribute('http.response.status_code', status)));
    } catch (err) {
      const reason = err instanceof SmsDeliveryError ? err.reason : reasonOf(err);
      this.log.warn({ reference: req.reference, reason }, `SMS delivery through the gateway failed: ${reason}`);
      throw new SmsDeliveryError(reason);
    }
  }

  private async post(req: SmsRequest, answered: (status: number) => void): Promise<SmsAccepted> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': req.reference };
    if (this.sms.token !== undefined) headers.authorization = `Bearer ${this.sms.token}`;
    // One signal for the whole exchange: a gateway that stalls while sending the body times out too.
    const signal = AbortSignal.timeout(this.sms.timeoutMs);
    const res = await fetch(this.sms.url, {
      method: 'POST', headers, signal, redirect: 'manual',
      body: JSON.stringify({ to: req.to, from: this.sms.sender, message: req.message, reference: req.reference }),
    });
    answered(res.status);
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel().catch(() => undefined);
      throw new SmsDeliveryError(`HTTP ${res.status}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(await res.text());
    } catch (err) {
      if ((err as { name?: unknown }).name === 'TimeoutError') throw err;
      throw new SmsDeliveryError('response is not JSON');
    }
    const ok = accepted(body);
    if (!ok) throw new SmsDeliveryError('response does not follow the contract');
    return ok;
  }
}
