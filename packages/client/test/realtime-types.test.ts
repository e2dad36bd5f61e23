/**
 * The SDK's real-time event types against the server's published contract: the event type names,
 * the push-approval purposes and deny reasons the SDK knows are exactly those docs/asyncapi.yaml
 * documents (and the server publishes), so a new event or reason cannot reach clients untyped.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { AnswerResponse } from '../../../src/push-approval/schemas.js';
import { REALTIME_EVENT_TYPES as SERVER_EVENT_TYPES } from '../../../src/realtime/types.js';
import { PUSH_APPROVAL_DENY_REASONS, PUSH_APPROVAL_PURPOSES, REALTIME_EVENT_TYPES } from '../src/index.js';

type Node = Record<string, unknown>;
const asyncapi = parse(readFileSync(new URL('../../../docs/asyncapi.yaml', import.meta.url), 'utf8')) as { components: { schemas: Record<string, Node>; messages: Record<string, Node> } };
const schemas = asyncapi.components.schemas;

/** The second part of an event schema's `allOf` (the first is EventBase). */
function eventPart(schema: Node): { properties: { type: { const?: string; enum?: string[] }; data: { properties: Record<string, { enum?: string[] }> } } } {
  const allOf = schema.allOf as Node[];
  return allOf.find((part) => part.$ref === undefined) as never;
}

/** The schemas the `event` message's payload may be, by the `$ref`s of its `oneOf`. */
const eventSchemas = (asyncapi.components.messages.event!.payload as { oneOf: Array<{ $ref: string }> }).oneOf.map((r) => schemas[r.$ref.split('/').pop()!]!);
const documentedTypes = eventSchemas.flatMap((s) => {
  const type = eventPart(s).properties.type;
  return type.const !== undefined ? [type.const] : type.enum!;
});
const secondFactor = eventPart(schemas.SecondFactorEvent!).properties.data.properties;
const sorted = (xs: readonly string[]) => [...xs].sort();

describe('the SDK real-time types match docs/asyncapi.yaml', () => {
  it('the event types the SDK knows are exactly those the AsyncAPI document lists (and the server publishes)', () => {
    expect(sorted(REALTIME_EVENT_TYPES)).toEqual(sorted(documentedTypes));
    expect(sorted(REALTIME_EVENT_TYPES)).toEqual(sorted(SERVER_EVENT_TYPES));
  });

  it('every example event of the document has a type the SDK knows', () => {
    const examples = (asyncapi.components.messages.event!.examples as Array<{ payload: { type: string } }>).map((e) => e.payload.type);
    expect(examples.length).toBeGreaterThan(0);
    for (const type of examples) expect(REALTIME_EVENT_TYPES).toContain(type);
  });

  it('second_factor.* purposes and deny reasons are the documented enums (and the API answer\'s deny_reason)', () => {
    expect(sorted(PUSH_APPROVAL_PURPOSES)).toEqual(sorted(secondFactor.purpose!.enum!));
    expect(sorted(PUSH_APPROVAL_DENY_REASONS)).toEqual(sorted(secondFactor.reason!.enum!));
    const apiReasons = (AnswerResponse.properties.deny_reason as unknown as { anyOf: Array<{ const?: string }> }).anyOf.flatMap((l) => (typeof l.const === 'string' ? [l.const] : []));
    expect(sorted(PUSH_APPROVAL_DENY_REASONS)).toEqual(sorted(apiReasons));
  });
});
