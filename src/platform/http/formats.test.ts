import { describe, expect, it } from 'vitest';
import { isStrictDateTime } from './formats.js';

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
