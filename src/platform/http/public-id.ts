/**
 * One public id per resource: the uuid. Routes take it in their path and bodies and answers give
 * it; the integer `id` of each table stays internal. An integer where a uuid belongs is what
 * earlier versions exposed: it is refused with a message that names the id to send instead
 * (docs/decisions.md, "One public id").
 */
import Type, { type TString } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { CommonErrors } from '../errors.js';
import type { FieldProblem } from './validation-messages.js';

/** A kind of resource named by a uuid, and where a client finds that uuid. */
export interface PublicIdKind {
  /** What it names, for messages: "branch", "device token". */
  readonly what: string;
  /** Where the client reads the id: "the `id` of GET /api/v1/admin/entities". */
  readonly source: string;
  readonly example: string;
}

/** The schema of a uuid naming one resource of this kind. */
export function publicIdSchema(kind: PublicIdKind, description?: string): TString {
  return Type.String({
    format: 'uuid',
    description: description ?? `The ${kind.what}'s id (a uuid): ${kind.source}. Integer ids are not accepted.`,
    examples: [kind.example],
  });
}

const INTEGER = /^[0-9]{1,20}$/;
const WHERE = { params: 'Path parameter', body: 'Body field', querystring: 'Query parameter' } as const;

function refusal(kind: PublicIdKind, location: 'params' | 'body' | 'querystring', field: string, value: unknown): Error {
  // A JSON number breaks the field's type; a string of digits (a path or query parameter) its format.
  const problem: FieldProblem = typeof value === 'number'
    ? { location, field, constraint: 'type', expected_type: 'string', format: 'uuid', message: `must be the ${kind.what}'s uuid (${kind.source}) as a string, not an integer` }
    : { location, field, constraint: 'format', format: 'uuid', message: `must be the ${kind.what}'s uuid (${kind.source}), not an integer` };
  return CommonErrors.VALIDATION_ERROR(
    { fields: [problem], expected: 'uuid' },
    { message: `${WHERE[location]} ${field} must be the ${kind.what}'s uuid: send ${kind.source} (integer ids are not accepted).` },
  );
}

/** True for what an earlier version sent as an id: a number, or a string of digits. */
function isInteger(value: unknown): boolean {
  return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && INTEGER.test(value));
}

/**
 * Where a route carries ids of one kind: path parameters, body fields, query parameters. A field
 * holds an id or an array of them; a dotted path reaches into objects, `*` into every item of an
 * array (`answers.*.question_id`).
 */
export interface PublicIdFields {
  readonly params?: readonly string[];
  readonly body?: readonly string[];
  readonly querystring?: readonly string[];
}

/** The values at a dotted path of `source`, each with its field name (`answers.1.question_id`). */
function valuesAt(source: unknown, path: readonly string[], at: string): Array<[string, unknown]> {
  if (path.length === 0) return [[at, source]];
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '*') return Array.isArray(source) ? source.flatMap((item, i) => valuesAt(item, rest, `${at}.${i}`)) : [];
  if (source === null || typeof source !== 'object' || Array.isArray(source)) return [];
  return valuesAt((source as Record<string, unknown>)[head], rest, at === '' ? head : `${at}.${head}`);
}

/**
 * A `preValidation` hook: an integer where these fields take a uuid answers 422
 * VALIDATION_ERROR saying which id to send, before the schema's generic type or format error.
 */
export function refuseIntegerIds(kind: PublicIdKind, fields: PublicIdFields) {
  return async function refuseIntegerId(request: FastifyRequest): Promise<void> {
    for (const location of ['params', 'querystring', 'body'] as const) {
      const source: unknown = location === 'querystring' ? request.query : request[location];
      for (const [field, value] of (fields[location] ?? []).flatMap((f) => valuesAt(source, f.split('.'), ''))) {
        if (isInteger(value)) throw refusal(kind, location, field, value);
        const at = Array.isArray(value) ? value.findIndex(isInteger) : -1;
        if (at >= 0) throw refusal(kind, location, `${field}.${at}`, (value as unknown[])[at]);
      }
    }
  };
}
