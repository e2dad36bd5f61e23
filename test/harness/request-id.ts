/**
 * Every error body's `details` carries `request_id`, the request's own id (a UUID, the
 * `X-Request-ID` header). These helpers check it and take it out, so that a test still compares
 * the rest of `details` exactly, and the answers of two requests (which differ in nothing else)
 * can be compared with each other.
 */
import { expect } from 'vitest';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `details` less its `request_id`, after checking that one is there and is a UUID. */
export function withoutRequestId(details: unknown): Record<string, unknown> {
  expect(details, 'details').toBeTypeOf('object');
  const { request_id: id, ...rest } = details as Record<string, unknown>;
  expect(id, 'details.request_id').toMatch(UUID);
  return rest;
}

/** An error body with `details.request_id` taken out (checked as `withoutRequestId` does). */
export function bodyWithoutRequestId(body: unknown): Record<string, unknown> {
  const b = body as Record<string, unknown>;
  return { ...b, details: withoutRequestId(b.details) };
}

/** The body of an error answer parsed, `details.request_id` checked to be the answer's `X-Request-ID`, and taken out. */
export function answerWithoutRequestId(res: { json(): unknown; headers: Record<string, unknown> }): Record<string, unknown> {
  const body = res.json() as { details?: { request_id?: unknown } };
  expect(body.details?.request_id, 'details.request_id is the X-Request-ID').toBe(res.headers['x-request-id']);
  return bodyWithoutRequestId(body);
}
