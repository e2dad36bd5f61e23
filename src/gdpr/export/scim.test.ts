import { describe, expect, it } from 'vitest';
import { SCIM_ENTERPRISE, SCIM_STRONGROOM, SCIM_USER, scimUser, telUri } from './scim.js';

const profile = { id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', username: 'amina', full_name: null, email: null, phone: null, language: null, date_of_birth: null, is_active: false, created_at: '2026-01-05T10:00:00.000Z', updated_at: '2026-02-01T10:00:00.000Z' };

describe('scimUser', () => {
  it('a person without name or contacts: displayName falls back to userName, empty multi-valued attributes, language en', () => {
    const u = scimUser({ profile, branches: [], consents: [], organization: 'Bank', location: 'https://a.example/x' });
    expect(u).toMatchObject({ schemas: [SCIM_USER, SCIM_ENTERPRISE, SCIM_STRONGROOM], userName: 'amina', displayName: 'amina', emails: [], phoneNumbers: [], preferredLanguage: 'en', active: false });
    expect(u).not.toHaveProperty('name');
    expect(u[SCIM_ENTERPRISE]).toEqual({ organization: 'Bank' });
    expect(u.meta).toEqual({ resourceType: 'User', created: profile.created_at, lastModified: profile.updated_at, location: 'https://a.example/x' });
  });

  it('phone numbers as RFC 3966 tel: URIs', () => {
    expect(telUri('+254 712 000-111')).toBe('tel:+254712000111');
  });
});
