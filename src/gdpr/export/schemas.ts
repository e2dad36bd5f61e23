/** TypeBox schemas of the export, portability and request-log routes. */
import Type from 'typebox';

const UUID_EXAMPLE = '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77';

export const ExportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { default: 'json', description: '`json` (one document) or `csv` (a ZIP of one CSV file per section, with README.txt and manifest.json).' })),
}, { additionalProperties: false });

const Section = Type.Object({
  name: Type.String({ examples: ['sessions'] }),
  description: Type.String({ examples: ['Your sessions: channel, when opened, last active and ended, from which address, user agent and device.'] }),
  columns: Type.Array(Type.String(), { examples: [['session_id', 'channel', 'created_at']] }),
  rows: Type.Integer({ minimum: 0, examples: [3] }),
});

export const ExportDocument = Type.Object({
  format: Type.String({ description: 'The layout\'s version.', examples: ['strongroom-export/1'] }),
  generated_at: Type.String({ format: 'date-time' }),
  user_id: Type.String({ format: 'uuid', examples: [UUID_EXAMPLE] }),
  sections: Type.Array(Section, { description: 'The table of contents: every section below, what it holds, its columns and how many rows.' }),
  notes: Type.Record(Type.String(), Type.String(), { description: 'What a section leaves out and how to get it (the audit events\' window).' }),
}, {
  additionalProperties: true,
  description: 'Then one key per section (`profile`, `credentials`, `roles`, `sessions`, `factors`, `devices`, `consents`, `audit_events`, …), each an array of rows with the section\'s columns. '
    + 'With `format=csv` under transport encryption: the ZipEnvelope instead. With `format=csv` without it: the ZIP itself (`application/zip`).',
  examples: [{
    format: 'strongroom-export/1', generated_at: '2026-11-28T04:15:51.000Z', user_id: UUID_EXAMPLE,
    sections: [{ name: 'factors', description: 'The second factors you enrolled: method, state, since when. Never the authenticator secret.', columns: ['method', 'status', 'since', 'confirmed_at'], rows: 1 }],
    notes: { audit_events: 'The security events recorded about you since 2025-10-28T04:15:51.000Z (13 months), newest first, at most 1000.' },
    factors: [{ method: 'totp', status: 'active', since: '2026-11-01T09:00:00.000Z', confirmed_at: '2026-11-01T09:01:12.000Z' }],
  }],
});

export const ZipEnvelope = Type.Object({
  format: Type.Literal('csv'),
  content_type: Type.Literal('application/zip'),
  filename: Type.String({ examples: ['strongroom-export-2026-11-28.zip'] }),
  size: Type.Integer({ minimum: 0, description: 'The ZIP\'s length in bytes.', examples: [4821] }),
  sha256: Type.String({ description: 'Hex SHA-256 of the ZIP\'s bytes.', examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'] }),
  data: Type.String({ description: 'The ZIP\'s bytes, base64.', examples: ['UEsDBBQACAgIAAAAAAAAAAAAAAAAAAAAAAAKAAAAUkVBRE1FLnR4dA=='] }),
}, { description: 'The CSV export under transport encryption: the ZIP\'s bytes inside the sealed JSON answer (the SDK\'s `downloadExport` opens it).' });

export const ScimUser = Type.Object({
  schemas: Type.Array(Type.String(), { examples: [['urn:ietf:params:scim:schemas:core:2.0:User']] }),
  id: Type.String({ examples: [UUID_EXAMPLE] }),
  userName: Type.String({ examples: ['amina.otieno'] }),
  name: Type.Optional(Type.Object({ formatted: Type.String({ examples: ['Amina Otieno'] }) })),
  displayName: Type.String({ examples: ['Amina Otieno'] }),
  emails: Type.Array(Type.Object({ value: Type.String(), type: Type.String(), primary: Type.Boolean() })),
  phoneNumbers: Type.Array(Type.Object({ value: Type.String(), type: Type.String(), primary: Type.Boolean() })),
  preferredLanguage: Type.String({ examples: ['en'] }),
  active: Type.Boolean(),
  meta: Type.Object({ resourceType: Type.Literal('User'), created: Type.String({ format: 'date-time' }), lastModified: Type.String({ format: 'date-time' }), location: Type.String() }),
}, {
  additionalProperties: true,
  description: 'A SCIM 2.0 User (RFC 7643), with the enterprise extension and `urn:strongroom:params:scim:schemas:extension:person:1.0:User` (date of birth, branches, consents) as keys named by their schema URIs.',
  examples: [{
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', 'urn:strongroom:params:scim:schemas:extension:person:1.0:User'],
    id: UUID_EXAMPLE, userName: 'amina.otieno', name: { formatted: 'Amina Otieno' }, displayName: 'Amina Otieno',
    emails: [{ value: 'amina@example.com', type: 'home', primary: true }], phoneNumbers: [{ value: 'tel:+254712345678', type: 'mobile', primary: true }],
    preferredLanguage: 'en', active: true,
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { organization: 'Strongroom Bank', department: 'Nairobi Central' },
    'urn:strongroom:params:scim:schemas:extension:person:1.0:User': { dateOfBirth: '1990-04-12', branches: [{ value: 'NBO01', display: 'Nairobi Central' }], consents: [{ purpose: 'marketing_email', given: true, version: 1, changed: '2026-11-01T09:00:00.000Z' }] },
    meta: { resourceType: 'User', created: '2026-01-05T10:00:00.000Z', lastModified: '2026-11-01T09:00:00.000Z', location: 'https://auth.bank.example/api/v1/auth/gdpr/portability' },
  }],
});

export const RequestsQuery = Type.Object({
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only this person\'s requests (their uuid).' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 256, description: 'The `next_cursor` of the previous page, unchanged.' })),
}, { additionalProperties: false });

const LoggedRequest = Type.Object({
  id: Type.String({ format: 'uuid' }),
  user_id: Type.String({ format: 'uuid', description: 'Who asked (their uuid; kept after the account is gone).' }),
  username: Type.Union([Type.String(), Type.Null()], { description: 'Null once the account is gone.' }),
  kind: Type.String({ examples: ['export'] }),
  format: Type.String({ examples: ['csv'] }),
  channel: Type.Union([Type.String(), Type.Null()], { examples: ['web'] }),
  encrypted: Type.Boolean({ description: 'Whether the answer left under the session\'s transport key.' }),
  sections: Type.Record(Type.String(), Type.Integer(), { description: 'What was sent: each section and its row count (never the data).' }),
  bytes: Type.Integer(),
  requested_at: Type.String({ format: 'date-time' }),
});

export const RequestsPage = Type.Object({
  requests: Type.Array(LoggedRequest),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Send as `cursor` for the next page; null on the last page.' }),
}, {
  examples: [{
    requests: [{ id: '0b9e6c1e-7d3a-4f5e-8a2b-1c9d0e7f6a5b', user_id: UUID_EXAMPLE, username: 'amina.otieno', kind: 'export', format: 'csv', channel: 'web', encrypted: true, sections: { profile: 1, sessions: 4, audit_events: 37 }, bytes: 4821, requested_at: '2026-11-28T04:15:51.000Z' }],
    next_cursor: null,
  }],
});
