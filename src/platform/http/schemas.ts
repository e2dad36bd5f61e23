/** Schemas shared by every capability: the error body and small building blocks. */
import Type, { type TSchema } from 'typebox';
import { describeSchemaErrors, summarise, type SchemaError } from './validation-messages.js';

const ErrorDetails = Type.Object(
  { request_id: Type.String({ format: 'uuid', description: 'This request\'s id, also in the `X-Request-ID` header: quote it to support; it finds the request\'s log line and trace.' }) },
  { additionalProperties: true, description: 'What the error code documents, and always `request_id`.' },
);

const EXAMPLE_REQUEST_ID = '7d4e9a1c-5b2f-4c3d-8e6a-0f1b2c3d4e5f';

/** Whether a response schema is an error body (`status_code` and `error_code`), whoever wrote it. */
export function isErrorBodySchema(schema: unknown): boolean {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props !== undefined && 'error_code' in props && 'status_code' in props;
}

/** What `errors()` and the document's transform need of an error code: its catalogue entry. */
export interface DeclaredError {
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

/**
 * The response of one error status: `error_code` is one of `declared` (an enum a generator
 * turns into a union), `status_code` is the status, and the example is the first code's body.
 */
export function errorResponse(status: number, declared: readonly DeclaredError[]): TSchema {
  const unique = [...new Map(declared.filter((d) => d.status === status).map((d) => [d.code, d])).values()];
  if (unique.length === 0) throw new Error(`errorResponse(${status}): no error code with this status`);
  const first = unique[0]!;
  return Type.Object(
    {
      status_code: Type.Integer({ enum: [status], description: 'The HTTP status, repeated.' }),
      error_code: Type.String({ enum: unique.map((d) => d.code), description: 'Stable: match on it, never on `message`.' }),
      message: Type.String({ description: 'For people; may change.' }),
      details: ErrorDetails,
    },
    {
      description: unique.map((d) => `\`${d.code}\`: ${d.message}`).join('\n\n'),
      examples: [{ status_code: status, error_code: first.code, message: first.message, details: { request_id: EXAMPLE_REQUEST_ID } }],
    },
  );
}

/** The error codes an `errorResponse` schema lists (none for any other schema). */
export function declaredCodes(schema: unknown): string[] {
  const codes = (schema as { properties?: { error_code?: { enum?: unknown } } } | undefined)?.properties?.error_code?.enum;
  return Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [];
}

/**
 * A route's error responses, from the error codes it can answer with: one response per status,
 * its `error_code` an enum of those codes. Name the codes the route itself raises (its service's
 * catalogue and `CommonErrors`); the codes every route of a kind can return (the bearer guard's,
 * a body's parsing and schema, transport encryption, rate limits) are added to the document by
 * src/openapi.ts, so they need not be listed.
 *
 *     response: { 200: UserSchema, ...errors(AdminErrors.USER_NOT_FOUND, AdminErrors.UNKNOWN_ROLE) }
 */
export function errors(...declared: DeclaredError[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of new Set(declared.map((d) => d.status))) out[status] = errorResponse(status, declared);
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
/**
 * The configuration routes (`ldap/config`, `saml/config`) read and write on one POST: no body
 * (or `{}`) reads, and its schema errors only say it is not a configuration; a body writes, and
 * any schema problem (or one in the query string) is the route's own 400 naming the fields.
 * The body to write, or undefined for a read.
 */
export function configBody<T>(request: { body: unknown; query?: unknown; validationError?: Error; getValidationFunction?(part: 'querystring'): (((input: unknown) => boolean) & { errors?: unknown }) | undefined }, invalid: (details: { fields: Array<{ field: string; message: string }> }, options: { message: string }) => Error): T | undefined {
  const body = request.body;
  const empty = body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0);
  const error = request.validationError as (Error & { validationContext?: string }) | undefined;
  const refuse = (e: unknown): Error => {
    const v = e as { validation?: SchemaError[]; validationContext?: string };
    const problems = describeSchemaErrors(v.validation ?? [], v.validationContext ?? 'body');
    // The message says "the JSON body" for the whole body; `details` names it `body` (no location there).
    const fields = problems.map(({ location: _l, ...p }) => ({ ...p, field: p.field === '(root)' ? 'body' : p.field }));
    return invalid({ fields }, { message: summarise(problems) });
  };
  if (error && (error.validationContext === 'querystring' || !empty)) throw refuse(error);
  // Fastify stops at the body's failure: a read's query is checked here.
  const query = error?.validationContext === 'body' ? request.getValidationFunction?.('querystring') : undefined;
  if (query && !query(request.query)) throw refuse({ validation: query.errors ?? [], validationContext: 'querystring' });
  return empty ? undefined : (body as T);
}
