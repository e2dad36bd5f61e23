import { describe, expect, it } from 'vitest';
import { present } from './service.js';

describe('present', () => {
  it('shows a stored request with ISO timestamps and the user as id, uuid and username', () => {
    const view = present({
      id: '5b0e6f2a-8c1d-4e3f-9a7b-2c4d6e8f0a1b', user_id: 42, user_uuid: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', username: 'amina.otieno',
      status: 'approved', reason: 'lost phone', proof: 'password_and_factor', requested_at: new Date(Date.UTC(2026, 0, 15, 9)),
      expires_at: '2026-01-18T09:00:00+00:00', decided_at: new Date(Date.UTC(2026, 0, 15, 10)), decided_by: 'a1b2c3d4-0000-4000-8000-000000000001',
      decision_note: null, completed_at: null,
    });
    expect(view).toEqual({
      request_id: '5b0e6f2a-8c1d-4e3f-9a7b-2c4d6e8f0a1b', user: { id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', uuid: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', username: 'amina.otieno' },
      status: 'approved', reason: 'lost phone', proof: 'password_and_factor', requested_at: '2026-01-15T09:00:00.000Z', expires_at: '2026-01-18T09:00:00.000Z',
      decided_at: '2026-01-15T10:00:00.000Z', decided_by: 'a1b2c3d4-0000-4000-8000-000000000001', decision_note: null, completed_at: null,
    });
  });
});
