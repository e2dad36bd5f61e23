import { describe, expect, it } from 'vitest';
import { BACKUP_CODE_COUNT, newBackupCode, normaliseBackupCode } from './backup-codes.js';

describe('backup codes', () => {
  it('are xxxx-xxxx over Crockford base32 (40 bits) and do not repeat', () => {
    const codes = Array.from({ length: 2000 }, newBackupCode);
    for (const c of codes) expect(c).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{4}-[0-9abcdefghjkmnpqrstvwxyz]{4}$/);
    expect(new Set(codes).size).toBe(codes.length);
    expect(BACKUP_CODE_COUNT).toBe(10);
  });

  it('normalise what people type: case, dashes, spaces, o/0 and i/l/1', () => {
    expect(normaliseBackupCode('7K3M-Q9XZ')).toBe('7k3mq9xz');
    expect(normaliseBackupCode(' 7k3m q9xz ')).toBe('7k3mq9xz');
    expect(normaliseBackupCode('oOiL-1234')).toBe('00111234');
    expect(normaliseBackupCode(normaliseBackupCode(newBackupCode())!)).toHaveLength(8);
  });

  it('refuse what cannot be a code', () => {
    expect(normaliseBackupCode('7k3m-q9x')).toBeNull();
    expect(normaliseBackupCode('7k3m-q9xzz')).toBeNull();
    expect(normaliseBackupCode('uuuu-uuuu')).toBeNull(); // u is not in the alphabet
    expect(normaliseBackupCode('')).toBeNull();
  });
});
