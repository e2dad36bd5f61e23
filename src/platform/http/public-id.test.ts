import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { refuseIntegerIds, type PublicIdKind } from './public-id.js';

const KIND: PublicIdKind = { what: 'widget', source: 'the `id` of GET /widgets', example: '6d2f9a41-8c3e-4b7a-a5d0-19e4c7b83f62' };
const UUID = KIND.example;

async function refusalOf(fields: Parameters<typeof refuseIntegerIds>[1], request: Partial<Pick<FastifyRequest, 'params' | 'query' | 'body'>>): Promise<AppError | null> {
  try {
    await refuseIntegerIds(KIND, fields)(request as FastifyRequest);
    return null;
  } catch (err) {
    return err as AppError;
  }
}

describe('refuseIntegerIds', () => {
  it('refuses an integer id as a path parameter (a string of digits), naming the field, its format and the id to send', async () => {
    const e = await refusalOf({ params: ['id'] }, { params: { id: '42' } });
    expect(e).toMatchObject({ statusCode: 422, code: 'VALIDATION_ERROR', details: { expected: 'uuid', fields: [{ location: 'params', field: 'id', constraint: 'format', format: 'uuid' }] } });
    expect(e!.message).toBe('Path parameter id must be the widget\'s uuid: send the `id` of GET /widgets (integer ids are not accepted).');
  });

  it('refuses a JSON number as a type error, in a body field, an array item and a nested path with `*`', async () => {
    expect((await refusalOf({ body: ['widget_id'] }, { body: { widget_id: 7 } }))?.details).toMatchObject({ fields: [{ location: 'body', field: 'widget_id', constraint: 'type', expected_type: 'string' }] });
    expect((await refusalOf({ body: ['ids'] }, { body: { ids: [UUID, 8] } }))?.details).toMatchObject({ fields: [{ field: 'ids.1' }] });
    expect((await refusalOf({ body: ['answers.*.widget_id'] }, { body: { answers: [{ widget_id: UUID }, { widget_id: '9' }] } }))?.details).toMatchObject({ fields: [{ field: 'answers.1.widget_id', constraint: 'format' }] });
    expect((await refusalOf({ querystring: ['widget_id'] }, { query: { widget_id: '10' } }))?.details).toMatchObject({ fields: [{ location: 'querystring', field: 'widget_id' }] });
  });

  it('lets uuids, other malformed values (left to the schema) and absent or oddly shaped fields through', async () => {
    for (const body of [{ widget_id: UUID }, { widget_id: 'not-a-uuid' }, { widget_id: 1.5 }, {}, null, 'text', { answers: 'x' }, { answers: [null, 3] }]) {
      expect(await refusalOf({ body: ['widget_id', 'answers.*.widget_id'] }, { body }), JSON.stringify(body)).toBeNull();
    }
  });
});
