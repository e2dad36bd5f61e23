import { describe, expect, it } from 'vitest';
import { scrubDetails } from './apply.js';

const c = { user: { id: 1, uuid: 'u', username: 'amina.otieno', email: 'amina@bank.example', phone: '+254700000012' }, pseudonym: 'erased-0123456789abcdef0123' };

describe('scrubDetails (the audit trail\'s details, pseudonymised)', () => {
  it('drops keys that carry contacts, masks, names or client traits at any depth, and replaces the person\'s identifiers anywhere else', () => {
    const out = scrubDetails({
      reason: 'invalid_password', email: 'amina@bank.example', destination: 'a***@bank.example', nested: { phone: '+254700000012', kept: 1 },
      list: [{ full_name: 'Amina Otieno', method: 'totp' }], note: 'sent to +254700000012', by: 'AMINA.OTIENO', changed_by: 'ops.admin',
    }, c);
    expect(out).toEqual({ reason: 'invalid_password', nested: { kept: 1 }, list: [{ method: 'totp' }], note: c.pseudonym, by: c.pseudonym, changed_by: 'ops.admin' });
    expect(JSON.stringify(out)).not.toMatch(/amina|254700000012/i);
  });

  it('threat: masks of contacts under any key the service writes them with (from, to, recipient, destination, *_masked) leave the pseudonymised entry', () => {
    const out = scrubDetails({
      kind: 'email', from: 'a***@bank.example', to: 'n***@elsewhere.example', recipient: 'a***@bank.example', old_masked: 'a***@bank.example',
      phone_mask: '+2547*****012', delivery: 'email', device: 'abc123…wxyz',
    }, c);
    expect(out).toEqual({ kind: 'email', delivery: 'email' });
  });
});
