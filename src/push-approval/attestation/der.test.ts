import { describe, expect, it } from 'vitest';
import { der, tlv } from '../../../test/harness/attestation.js';
import { DerError, childrenOf, oid, parseDer, readNode, smallUint, time } from './der.js';

describe('the DER reader', () => {
  it('reads high tag numbers (Android\'s [709]) and nested values', () => {
    const node = parseDer(der.explicit(709, der.int(300)));
    expect(node.tag).toBe(709);
    expect(node.cls).toBe(2);
    expect(smallUint(childrenOf(node)[0])).toBe(300);
  });

  it('decodes object identifiers', () => {
    expect(oid(parseDer(der.oid('1.3.6.1.4.1.11129.2.1.17')))).toBe('1.3.6.1.4.1.11129.2.1.17');
    expect(oid(parseDer(der.oid('1.2.840.113635.100.8.2')))).toBe('1.2.840.113635.100.8.2');
    expect(oid(parseDer(der.oid('2.5.29.19')))).toBe('2.5.29.19');
  });

  it('reads UTCTime (two-digit years: 50-99 are 19xx) and GeneralizedTime', () => {
    expect(time(parseDer(der.time(Date.UTC(2026, 11, 6, 12))))).toBe(Date.UTC(2026, 11, 6, 12));
    expect(time(parseDer(der.time(0)))).toBe(0);
    expect(time(parseDer(der.time(Date.UTC(2048, 0, 1))))).toBe(Date.UTC(2048, 0, 1));
    expect(time(parseDer(der.time(Date.UTC(2060, 5, 1))))).toBe(Date.UTC(2060, 5, 1));
    expect(() => time(parseDer(tlv(0x17, Buffer.from('261332120000Z'))))).toThrow(DerError);
  });

  it('refuses indefinite and non-minimal lengths, truncation and trailing bytes', () => {
    expect(() => readNode(Buffer.from([0x30, 0x80, 0x00, 0x00]))).toThrow(DerError);
    expect(() => readNode(Buffer.from([0x04, 0x81, 0x01, 0x00]))).toThrow(DerError);
    expect(() => readNode(Buffer.from([0x04, 0x05, 0x00]))).toThrow(DerError);
    expect(() => parseDer(Buffer.from([0x05, 0x00, 0x00]))).toThrow(DerError);
  });

  it('refuses negative and non-minimal integers', () => {
    expect(() => smallUint(parseDer(Buffer.from([0x02, 0x01, 0xff])))).toThrow(DerError);
    expect(() => smallUint(parseDer(Buffer.from([0x02, 0x02, 0x00, 0x01])))).toThrow(DerError);
    expect(smallUint(parseDer(Buffer.from([0x02, 0x02, 0x00, 0x80])))).toBe(128);
  });
});
