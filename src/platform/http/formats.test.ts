import { describe, expect, it } from 'vitest';
import { isStrictDateTime, UUID } from './formats.js';

describe('isStrictDateTime', () => {
  it('accepts RFC 3339 instants in UTC and with offsets, with fractions', () => {
    for (const v of ['2026-03-04T23:59:59Z', '2026-03-04t00:00:00z', '2024-02-29T12:00:00+03:00', '2026-12-31T23:59:59.123456789-23:59', '0001-01-01T00:00:00Z']) {
      expect(isStrictDateTime(v), v).toBe(true);
    }
  });

  it('refuses leap seconds, days the month lacks, out-of-range fields and offsets, and other shapes', () => {
    for (const v of [
      '2021-03-04T23:59:60Z', '2026-02-29T00:00:00Z', '2026-02-30T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:00+24:00',
      '2026-01-01T00:00:00+05:60', '0000-01-01T00:00:00Z', '2026-01-01T00:00:00', '2026-01-01 00:00:00Z', '2026-01-01', '+02026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.Z', '2026-01-01T00:00:00.1234567890Z', '', 'now',
      '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', // in years 0 and 10000 once the offset is applied
    ]) {
      expect(isStrictDateTime(v), v).toBe(false);
    }
  });
});

describe('UUID', () => {
  it('accepts what PostgreSQL stores as a uuid, in either case', () => {
    for (const v of ['3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', '3F0C8A5E-2B7D-4D6A-9A51-0C6B1E2F4A77', '00000000-0000-0000-0000-000000000000']) expect(UUID.test(v), v).toBe(true);
  });

  it('refuses the urn:uuid: form ajv-formats takes (PostgreSQL refuses it: a 500, were it let through), braces, and other shapes', () => {
    for (const v of ['urn:uuid:3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', '{3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77}', '3f0c8a5e2b7d4d6a9a510c6b1e2f4a77', '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a7', '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77\n', '42', '']) {
      expect(UUID.test(v), v).toBe(false);
    }
  });
});
