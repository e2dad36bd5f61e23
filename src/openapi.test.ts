import { describe, expect, it } from 'vitest';
import { AdminErrors } from './admin/errors.js';
import { exampleOf } from './openapi-bodies.js';
import { operationId } from './openapi.js';
import { CommonErrors } from './platform/errors.js';
import { errors } from './platform/http/schemas.js';

describe('errors(...) declares codes, one response per status', () => {
  it('groups codes by their catalogue status, with an enum of codes and an example of the first', () => {
    const r = errors(AdminErrors.USER_NOT_FOUND, AdminErrors.USER_EXISTS, AdminErrors.IDENTIFIER_CONFLICT, CommonErrors.VALIDATION_ERROR) as Record<number, { properties: { error_code: { enum: string[] } }; examples: Array<{ status_code: number; error_code: string; message: string }> }>;
    expect(Object.keys(r).sort()).toEqual(['404', '409', '422']);
    expect(r[409]!.properties.error_code.enum).toEqual(['USER_EXISTS', 'IDENTIFIER_CONFLICT']);
    expect(r[409]!.examples[0]).toMatchObject({ status_code: 409, error_code: 'USER_EXISTS', message: AdminErrors.definitions.USER_EXISTS.message });
    expect(r[404]!.examples[0]!.error_code).toBe('USER_NOT_FOUND');
  });

  it('a catalogue factory names its code, status and message', () => {
    expect([AdminErrors.USER_NOT_FOUND.code, AdminErrors.USER_NOT_FOUND.status, AdminErrors.USER_NOT_FOUND.message]).toEqual(['USER_NOT_FOUND', 404, AdminErrors.definitions.USER_NOT_FOUND.message]);
    expect(AdminErrors.USER_NOT_FOUND().code).toBe('USER_NOT_FOUND');
  });
});

describe('the document transform', () => {
  it('names operations by method and path', () => {
    expect(operationId('POST', '/api/v1/admin/users/:id/reset-pin')).toBe('postAdminUsersByIdResetPin');
    expect(operationId('GET', '/api/health')).toBe('getApiHealth');
    expect(operationId('GET', '/health')).toBe('getHealth');
  });

  it('builds an example from property examples, formats and minimum counts', () => {
    const schema = {
      type: 'object', required: ['id', 'at', 'codes', 'name'],
      properties: {
        id: { type: 'string', format: 'uuid' }, at: { type: 'string', format: 'date-time' },
        codes: { type: 'array', minItems: 2, items: { type: 'string', examples: ['a1', 'b2', 'c3'] } },
        name: { anyOf: [{ type: 'string', examples: ['Amina'] }, { type: 'null' }] },
        note: { type: 'string' },
      },
    };
    expect(exampleOf(schema)).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), at: '2026-01-15T09:00:00.000Z', codes: ['a1', 'b2'], name: 'Amina' });
  });
});
