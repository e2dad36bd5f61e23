/**
 * What a client generator needs of the OpenAPI document, as a list of gaps (empty: none).
 * test/api/openapi-quality.test.ts asserts the list is empty; run it on a dumped document to see
 * every gap at once.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;
interface Media { schema?: Json; example?: unknown; examples?: Record<string, { value: unknown }> }
interface Response { description?: string; content?: Record<string, Media> }
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, Response>;
}

export const DOCUMENT_FORBIDDEN_WORDS = /\b(SPEC|ARCHITECTURE)\b/;

function ajvFor(doc: Json): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addKeyword('example');
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) ajv.addSchema({ ...schema, $id: undefined }, `#/components/schemas/${name}`);
  return ajv;
}

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  return ((doc.components as Json).schemas as Record<string, Json>)[ref.replace('#/components/schemas/', '')];
}

function examplesOf(media: Media): unknown[] {
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((e) => e.value);
}

/** Every gap, as `METHOD path: what`. */
export function qualityProblems(doc: Json): string[] {
  const problems: string[] = [];
  const ajv = ajvFor(doc);
  const valid = (schema: Json, value: unknown): string | null => {
    try {
      const validate = ajv.compile({ ...schema, $id: undefined, title: undefined });
      return validate(value) ? null : ajv.errorsText(validate.errors);
    } catch (err) {
      return `schema does not compile: ${(err as Error).message}`;
    }
  };
  const checkMedia = (where: string, media: Media, named: boolean): void => {
    const schema = resolve(doc, media.schema);
    if (schema === undefined) return void problems.push(`${where}: no schema`);
    if (named && typeof media.schema?.$ref !== 'string') problems.push(`${where}: not a named component schema`);
    const examples = examplesOf(media);
    if (examples.length === 0) problems.push(`${where}: no example`);
    for (const e of examples) {
      const why = valid(schema, e);
      if (why !== null) problems.push(`${where}: the example does not match the schema (${why})`);
    }
  };

  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const at = `${method.toUpperCase()} ${path}`;
      if (!op.operationId) problems.push(`${at}: no operationId`);
      for (const media of Object.values(op.requestBody?.content ?? {})) checkMedia(`${at} request body`, media, true);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const where = `${at} ${status}`;
        if (!response.description || response.description === 'Default Response') problems.push(`${where}: no description`);
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (!type.includes('json')) continue;
          if (Number(status) < 400) {
            checkMedia(where, media, true);
            continue;
          }
          const schema = resolve(doc, media.schema) ?? {};
          const codeSchema = (schema.properties as Json | undefined)?.error_code as { enum?: string[] } | undefined;
          if (codeSchema === undefined) {
            checkMedia(where, media, true); // a documented non-error body (the health answer's 503)
            continue;
          }
          if (!Array.isArray(codeSchema.enum) || codeSchema.enum.length === 0) problems.push(`${where}: error_code has no enum of codes`);
          const examples = examplesOf(media) as Array<{ status_code?: unknown; error_code?: unknown }>;
          if (examples.length === 0) problems.push(`${where}: no example`);
          for (const e of examples) {
            if (e.status_code !== Number(status)) problems.push(`${where}: the example's status_code is ${String(e.status_code)}`);
            if (!codeSchema.enum?.includes(String(e.error_code))) problems.push(`${where}: the example's error_code ${String(e.error_code)} is not one of the codes`);
          }
        }
      }
    }
  }
  const text = JSON.stringify(doc);
  const word = DOCUMENT_FORBIDDEN_WORDS.exec(text);
  if (word) problems.push(`the document says "${word[0]}": ${(text.match(new RegExp(DOCUMENT_FORBIDDEN_WORDS.source, 'g')) ?? []).length} times, first near ${JSON.stringify(text.slice(Math.max(0, word.index - 80), word.index + 40))}`);
  return problems;
}

/** The request headers each operation declares (parameters in the header, and apiKey schemes it uses), lower-case. */
export function declaredHeaders(doc: Json, op: Operation): Set<string> {
  const schemes = ((doc.components as Json).securitySchemes ?? {}) as Record<string, { type: string; in?: string; name?: string; scheme?: string }>;
  const out = new Set((op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase()));
  for (const requirement of op.security ?? []) {
    for (const name of Object.keys(requirement)) {
      const s = schemes[name];
      if (s?.type === 'apiKey' && s.in === 'header' && s.name) out.add(s.name.toLowerCase());
      if (s?.type === 'http') out.add('authorization');
    }
  }
  return out;
}

export type { Operation as OpenApiOperation };
