import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.js';
import { checkDateOfBirth, newContacts } from './service.js';

describe('profile change rules', () => {
  const user = { email: 'Amina@Bank.example', phone: '+254700000012' };

  it('a contact sent with its current value (email by case, phone by digits) is no change', () => {
    expect(newContacts(user, { email: ' amina@bank.example ', phone: '+254700000012' })).toEqual([]);
    expect(newContacts(user, { email: 'new@bank.example' })).toEqual([{ kind: 'email', value: 'new@bank.example' }]);
    expect(newContacts({ email: null, phone: null }, { phone: '+254700000013' })).toEqual([{ kind: 'phone', value: '+254700000013' }]);
  });

  it('a date of birth in the future or before 1900 is 422 naming date_of_birth; today and 1900-01-01 pass', () => {
    const now = Date.parse('2026-11-28T04:00:00Z');
    for (const bad of ['2026-11-29', '1899-12-31']) {
      const e = (() => { try { checkDateOfBirth(bad, now); } catch (err) { return err; } return undefined; })();
      expect(e).toBeInstanceOf(AppError);
      expect(e).toMatchObject({ statusCode: 422, code: 'VALIDATION_ERROR', details: { fields: [{ location: 'body', field: 'date_of_birth' }] } });
    }
    expect(() => checkDateOfBirth('2026-11-28', now)).not.toThrow();
    expect(() => checkDateOfBirth('1900-01-01', now)).not.toThrow();
  });
});
