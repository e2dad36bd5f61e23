/** Schemas shared by every capability: the error body and small building blocks. */
import Type, { type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  {
    status_code: Type.Integer({ examples: [401] }),
    error_code: Type.String({ examples: ['INVALID_CREDENTIALS'] }),
    message: Type.String({ examples: ['The username or password is incorrect.'] }),
    details: Type.Object(
      { request_id: Type.String({ format: 'uuid', description: 'This request\'s id, also in the `X-Request-ID` header: quote it to support; it finds the request\'s log line and trace.' }) },
      { additionalProperties: true, description: 'What the error code documents, and always `request_id`.' },
    ),
  },
  { description: 'SPEC error body. `error_code` is stable; `message` is for people; `details.request_id` names the request.' },
);

/** Error responses for a route, keyed by status, for its `response` schema. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = ErrorBody;
  return out;
}

/** A markdown bullet list, for route descriptions that list their errors. */
export function bullets(...items: string[]): string {
  return items.map((x) => `- ${x}`).join('\n');
}

export const Pagination = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
};

/**
 * For free-text fields that reach the database: PostgreSQL text cannot hold a NUL character,
 * so one is a schema failure (422), not a database error (500).
 */
export const NO_NUL = '^[^\\u0000]*$';

/**
 * The fields a body failed its schema on (`attachValidation: true`), for a route that answers
 * with its own 400 code (a configuration route) rather than VALIDATION_ERROR.
 */
export function schemaFields(validationError: unknown): Array<{ field: string; message: string }> {
  const v = validationError as { validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown> }> };
  return (v.validation ?? []).map((e) => {
    const at = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    const named = e.params?.additionalProperty ?? e.params?.missingProperty; // the property itself, not its parent
    return { field: [at, named === undefined ? '' : String(named)].filter((p) => p !== '').join('.') || 'body', message: e.message ?? 'is not valid' };
  });
}

/**
 * SPEC's configuration routes (`ldap/config`, `saml/config`) read and write on one POST: no body
 * (or `{}`) reads, and its schema errors only say it is not a configuration; a body writes, and
 * any schema problem (or one in the query string) is the route's own 400 naming the fields.
 * The body to write, or undefined for a read.
 */
export function configBody<T>(request: { body: unknown; validationError?: Error }, invalid: (details: { fields: Array<{ field: string; message: string }> }) => Error): T | undefined {
  const body = request.body;
  const empty = body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0);
  const error = request.validationError as (Error & { validationContext?: string }) | undefined;
  if (error && (error.validationContext === 'querystring' || !empty)) throw invalid({ fields: schemaFields(error) });
  return empty ? undefined : (body as T);
}
