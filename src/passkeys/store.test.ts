import { describe, expect, it } from 'vitest';
import { counterWentBack } from './store.js';
import { userHandle } from './webauthn.js';

describe('the signature counter', () => {
  it('must go forward, unless the authenticator keeps none (0 and 0)', () => {
    expect(counterWentBack(0, 0)).toBe(false); // synced passkeys report 0 for ever
    expect(counterWentBack(0, 1)).toBe(false);
    expect(counterWentBack(5, 6)).toBe(false);
    expect(counterWentBack(5, 5)).toBe(true); // the same value twice: a clone, or a replay
    expect(counterWentBack(5, 3)).toBe(true);
    expect(counterWentBack(5, 0)).toBe(true); // a counter that stopped counting
  });
});

describe('the user handle', () => {
  it('is the account\'s public uuid as 16 bytes: no name, no email', () => {
    const handle = userHandle('3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77');
    expect(handle).toHaveLength(16);
    expect(Buffer.from(handle).toString('hex')).toBe('3f0c8a5e2b7d4d6a9a510c6b1e2f4a77');
  });
});
