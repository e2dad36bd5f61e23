/** Schemas shared by every capability: the error body and small building blocks. */
import Type, { type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  {
    status_code: Type.Integer({ examples: [401] }),
    error_code: Type.String({ examples: ['INVALID_CREDENTIALS'] }),
    message: Type.String({ examples: ['The username or password is incorrect.'] }),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { description: 'SPEC error body. `error_code` is stable; `message` is for people.' },
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
