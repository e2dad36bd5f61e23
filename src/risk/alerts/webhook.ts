/**
 * The security team's webhook: a JSON POST to SECURITY_WEBHOOK_URL, signed as Stripe signs its
 * webhooks, so that a SIEM (or the small receiver in front of it) knows each delivery came from
 * this service, unaltered, and recently:
 *
 *     Strongroom-Signature: t=1772615100,v1=5f8c...e2
 *
 * `v1` is the hex HMAC-SHA256, under SECURITY_WEBHOOK_SECRET, of the timestamp, a full stop and
 * the raw body bytes (`1772615100.{"type":...}`). Each attempt is signed afresh with the time it
 * is sent, so a receiver can refuse a delivery whose timestamp is more than a few minutes from its
 * own clock: a captured delivery replayed later is refused, and a retry is not.
 * `verifySignature` is what a receiver does, in code a bank's developers can copy.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AlertWebhookConfig } from '../../platform/config-alerts.js';
import { inSpan } from '../../platform/observability/tracing.js';

/** A receiver refuses a timestamp further than this from its clock (either way): 5 minutes, as Stripe. */
export const DEFAULT_TOLERANCE_SEC = 300;

/** The signature header's value for `body` sent at `unixSeconds`. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export type SignatureCheck = 'valid' | 'malformed' | 'mismatch' | 'stale';

/**
 * What a receiver checks: the header parses (`t=<digits>` and at least one `v1=<64 hex>`), one
 * `v1` is the HMAC of `<t>.<body>` under `secret` (compared in constant time), and `t` is within
 * `toleranceSec` of `nowSeconds`. The body must be the raw bytes received, before any JSON parse.
 */
export function verifySignature(header: string | undefined, body: string, secret: string, nowSeconds: number, toleranceSec = DEFAULT_TOLERANCE_SEC): SignatureCheck {
  if (header === undefined) return 'malformed';
  let t: number | undefined;
  const macs: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value = ''] = part.trim().split('=', 2) as [string, string?];
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) macs.push(Buffer.from(value, 'hex'));
  }
  if (t === undefined || macs.length === 0) return 'malformed';
  const expected = createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest();
  if (!macs.some((m) => timingSafeEqual(m, expected))) return 'mismatch';
  return Math.abs(nowSeconds - t) > toleranceSec ? 'stale' : 'valid';
}

/** What became of one POST: accepted (2xx), or why not and whether the receiver asked for a delay. */
export type WebhookResult = { ok: true; status: number } | { ok: false; reason: string; retryAfterSec?: number };

/** `Retry-After` in seconds (a number of seconds or an HTTP date), when the receiver sent one. */
function retryAfterOf(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  if (/^\d{1,9}$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** A reason safe to log and to store: the error's kind, never the receiver's answer or a secret. */
function reasonOf(err: unknown): string {
  const e = err as { name?: unknown; cause?: { code?: unknown } };
  if (e.name === 'TimeoutError') return 'timeout';
  if (typeof e.cause?.code === 'string') return e.cause.code;
  return 'network error';
}

/**
 * POSTs one delivery: `body` exactly as signed. A redirect is not followed (it would carry a
 * signed alert to an address nobody configured): it is a failure like any answer outside 2xx.
 */
export async function postWebhook(config: AlertWebhookConfig, body: string, deliveryId: string, nowMs: number): Promise<WebhookResult> {
  const u = new URL(config.url);
  const attributes = { 'http.request.method': 'POST', 'server.address': u.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
  return inSpan('security webhook send', attributes, async (span) => {
    try {
      const res = await fetch(config.url, {
        method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(config.timeoutMs), body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Strongroom-Alerts/1',
          'strongroom-signature': signatureHeader(config.secret, body, Math.floor(nowMs / 1000)),
          'strongroom-delivery': deliveryId,
        },
      });
      span.setAttribute('http.response.status_code', res.status);
      await res.body?.cancel().catch(() => undefined); // the answer's body is not read: only its status counts
      if (res.status >= 200 && res.status <= 299) return { ok: true, status: res.status };
      const retryAfterSec = retryAfterOf(res.headers.get('retry-after'), nowMs);
      return { ok: false, reason: `HTTP ${res.status}`, ...(retryAfterSec === undefined ? {} : { retryAfterSec }) };
    } catch (err) {
      return { ok: false, reason: reasonOf(err) };
    }
  });
}
