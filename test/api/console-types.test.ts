/**
 * The console's hand-written answer types (packages/console) against the OpenAPI document, as
 * test/api/openapi-quality.test.ts checks the SDK's: every property a console type declares is
 * in the route's answer, with a type the answer's value fits (null included), and required there
 * when the console reads it as always present. The types that are the server's own
 * (`import type` of a TypeBox schema's Static: AdminUser, the alerts, the FAQ articles and search, the keys)
 * need no entry.
 */
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { mirrorProblems, type Mirror } from '../harness/console-types.js';

const C = 'packages/console/src/console';
const A = 'packages/console/src/account';

/** Each console type and the answer it mirrors (`at`: where in the answer; `[]`: each element). */
const MIRRORS: Mirror[] = [
  // People
  { file: `${C}/users/UsersScreen.tsx`, type: 'Page', method: 'get', path: '/api/v1/admin/users' },
  { file: `${C}/users/NewUserScreen.tsx`, type: 'Created', method: 'post', path: '/api/v1/admin/users', status: 201 },
  { file: `${C}/users/UserCredentials.tsx`, type: 'PasswordReset', method: 'post', path: '/api/v1/admin/users/{id}/reset-password' },
  { file: `${C}/users/UserPasskeys.tsx`, type: 'Passkey', method: 'get', path: '/api/v1/admin/users/{id}/passkeys', at: 'passkeys[]' },
  { file: `${C}/users/UserSessions.tsx`, type: 'AdminSession', method: 'get', path: '/api/v1/admin/users/{id}/sessions', at: 'sessions[]' },
  { file: `${C}/users/factors.ts`, type: 'UserFactorsAnswer', method: 'get', path: '/api/v1/admin/users/{id}/factors' },
  { file: `${C}/users/UserCredentials.tsx`, type: 'PinReset', method: 'post', path: '/api/v1/admin/users/{id}/reset-pin' },
  { file: `${C}/roles/types.ts`, type: 'Role', method: 'get', path: '/api/v1/admin/roles/{name}' },
  { file: `${C}/roles/types.ts`, type: 'Role', method: 'get', path: '/api/v1/admin/roles', at: 'roles[]' },
  { file: `${C}/roles/types.ts`, type: 'Role', method: 'patch', path: '/api/v1/admin/roles/{name}', at: 'role' },
  { file: `${C}/roles/types.ts`, type: 'Permission', method: 'get', path: '/api/v1/admin/permissions', at: 'permissions[]' },
  { file: `${C}/entities/types.ts`, type: 'EntityPage', method: 'get', path: '/api/v1/admin/entities' },
  { file: `${C}/entities/types.ts`, type: 'Entity', method: 'post', path: '/api/v1/admin/entities', status: 201 },
  { file: `${C}/entities/types.ts`, type: 'Entity', method: 'patch', path: '/api/v1/admin/entities/{id}' },
  // Approvals
  { file: `${C}/approvals/DeviceBindingsScreen.tsx`, type: 'Page', method: 'get', path: '/api/v1/admin/device-bindings' },
  { file: `${C}/approvals/RecoveriesScreen.tsx`, type: 'Awaiting', method: 'get', path: '/api/v1/admin/recoveries', at: 'recoveries[]' },
  { file: `${C}/approvals/MfaResetsScreen.tsx`, type: 'Queue', method: 'post', path: '/api/v1/auth/reset/mfa/admin/pending' },
  { file: `${C}/approvals/ErasuresScreen.tsx`, type: 'PendingErasure', method: 'get', path: '/api/v1/admin/gdpr/erasures', at: 'erasures[]' },
  // Security
  { file: `${C}/audit/types.ts`, type: 'AuditPage', method: 'get', path: '/api/v1/admin/audit' },
  { file: `${C}/audit/chart-data.ts`, type: 'AuditSummary', method: 'get', path: '/api/v1/admin/audit/summary' },
  { file: `${C}/policies/types.ts`, type: 'Policy', method: 'get', path: '/api/v1/admin/access-policies', at: 'policies[]' },
  { file: `${C}/policies/types.ts`, type: 'Policy', method: 'get', path: '/api/v1/admin/access-policies/{id}', at: 'policy' },
  { file: `${C}/policies/types.ts`, type: 'Policy', method: 'post', path: '/api/v1/admin/access-policies', status: 201, at: 'policy' },
  { file: `${C}/policies/types.ts`, type: 'Policy', method: 'put', path: '/api/v1/admin/access-policies/{id}', at: 'policy' },
  { file: `${C}/policies/types.ts`, type: 'ChannelAccess', method: 'get', path: '/api/v1/admin/channels', at: 'channels[]' },
  { file: `${C}/policies/TesterScreen.tsx`, type: 'Verdict', method: 'post', path: '/api/v1/admin/access-policies/evaluate' },
  // Content
  { file: `${C}/config/templates/types.ts`, type: 'Template', method: 'get', path: '/api/v1/admin/notification-templates', at: 'templates[]' },
  { file: `${C}/config/templates/types.ts`, type: 'Template', method: 'post', path: '/api/v1/admin/notification-templates', status: 201 },
  { file: `${C}/config/templates/usePreview.ts`, type: 'Preview', method: 'post', path: '/api/v1/admin/notification-templates/{id}/preview' },
  // Settings
  { file: `${C}/config/types.ts`, type: 'LdapView', method: 'post', path: '/api/v1/auth/ldap/config' },
  { file: `${C}/config/types.ts`, type: 'LdapTestResult', method: 'post', path: '/api/v1/admin/ldap/test' },
  { file: `${C}/config/types.ts`, type: 'SamlView', method: 'post', path: '/api/v1/auth/saml/config' },
  { file: `${C}/config/types.ts`, type: 'RateGroup', method: 'get', path: '/api/v1/admin/rate-limits', at: 'groups[]' },
  // The account pages
  { file: `${A}/ProfileScreen.tsx`, type: 'Profile', method: 'get', path: '/api/v1/auth/profile', at: 'profile' },
  { file: `${A}/ContactsScreen.tsx`, type: 'Contacts', method: 'get', path: '/api/v1/auth/profile', at: 'profile' },
  { file: `${A}/ContactsScreen.tsx`, type: 'Contacts', method: 'post', path: '/api/v1/auth/profile/verify-contact', at: 'profile' },
  { file: `${A}/ContactsScreen.tsx`, type: 'Sent', method: 'put', path: '/api/v1/auth/profile/update', at: 'codes_sent[]' },
  { file: `${A}/SessionsScreen.tsx`, type: 'OwnSession', method: 'get', path: '/api/v1/auth/sessions', at: 'sessions[]' },
  { file: `${A}/DevicesScreen.tsx`, type: 'Device', method: 'get', path: '/api/v1/notifications/devices', at: 'devices[]' },
  { file: `${A}/ConsentScreen.tsx`, type: 'Consent', method: 'get', path: '/api/v1/auth/consent', at: 'consents[]' },
  { file: `${A}/ConsentScreen.tsx`, type: 'Answer', method: 'get', path: '/api/v1/auth/consent', at: 'history[]' },
  { file: `${A}/security/FactorsScreen.tsx`, type: 'Factors', method: 'get', path: '/api/v1/2fa/factors' },
  { file: `${A}/security/SecurityQuestions.tsx`, type: 'Question', method: 'post', path: '/api/v1/auth/security-questions/predefined', at: 'questions[]' },
  { file: `${A}/your-data/erasure-state.ts`, type: 'ErasureRequested', method: 'post', path: '/api/v1/auth/gdpr/delete', status: 202 },
  { file: `${A}/RecoveryScreen.tsx`, type: 'Own', method: 'get', path: '/api/v1/auth/recoveries' },
  { file: 'packages/console/src/ui/SetUpAuthenticator.tsx', type: 'TotpSetup', method: 'post', path: '/api/v1/2fa/totp/setup' },
];

let t: TestApp;
let generated: string;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  generated = astToString(await openapiTS(res.json() as never));
});
afterAll(async () => t.close());

describe('the console\'s answer types', () => {
  it('console types: every property a console type declares is in its route\'s answer, with a fitting type, required when the console reads it as always there', () => {
    expect(mirrorProblems(generated, MIRRORS)).toEqual([]);
  });

  it('console types: a property the answer lacks is caught (an extra optional property of a console type, deep down)', () => {
    const probe = [{ file: 'test/harness/console-types.probe.ts', type: 'Drifted', method: 'get', path: '/api/v1/admin/audit' } as const];
    expect(mirrorProblems(generated, probe)).toEqual([
      expect.stringMatching(/^Drifted\.entries\[\]\.location\.planet .*: not in the answer$/),
      expect.stringMatching(/^Drifted\.total .*: the answer's number does not fit the console's string$/),
      expect.stringMatching(/^Drifted\.secret .*: not in the answer$/),
    ]);
  });
});
