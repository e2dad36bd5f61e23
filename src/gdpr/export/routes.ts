/**
 * `GET /api/v1/auth/gdpr/export` and `GET /api/v1/auth/gdpr/portability` (signed in, a recent
 * sign-in or step-up), and `GET /api/v1/admin/gdpr/requests` (permission `gdpr.read`).
 *
 * Transport encryption: these answers carry the person's data, so the routes are marked
 * `personalData` and, with ENFORCE_TRANSPORT_ENCRYPTION on, the transport plugin refuses a
 * request without `x-encrypted: true` (422 ENCRYPTION_REQUIRED) even though it is a GET.
 * Flagged, every answer is sealed under the session key as any JSON answer is: the ZIP travels
 * base64 inside a sealed JSON answer (`ZipEnvelope`), and the SCIM document as the sealed JSON's
 * content.
 */
import { createHash } from 'node:crypto';
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { MfaErrors } from '../../mfa/errors.js';
import type { App } from '../../platform/http/app.js';
import { errors } from '../../platform/http/schemas.js';
import { requestAuditContext, signedInAccount, signedInUser, type Guard } from '../../sessions/guard.js';
import { TransportErrors } from '../../transport/errors.js';
import type { UserRow, UserStore } from '../../users/store.js';
import { GdprExportErrors } from './errors.js';
import { ExportDocument, ExportQuery, RequestsPage, RequestsQuery, ScimUser, ZipEnvelope } from './schemas.js';
import { SCIM_CONTENT_TYPE } from './scim.js';
import { counts, type Asker, type GdprExportService } from './service.js';

export interface GdprExportRouteDeps {
  gdprExport: GdprExportService;
  users: UserStore;
  guard: Guard;
}

export const EXPORT_PATH = '/api/v1/auth/gdpr/export';
export const PORTABILITY_PATH = '/api/v1/auth/gdpr/portability';
export const REQUESTS_PATH = '/api/v1/admin/gdpr/requests';
export const GDPR_READ = 'gdpr.read';

const tags = ['Data-subject rights'];
const security = [{ bearer: [] }];
const REAUTH = [MfaErrors.STEP_UP_REQUIRED, GdprExportErrors.GDPR_REAUTHENTICATION_REQUIRED, TransportErrors.ENCRYPTION_REQUIRED] as const;
const REAUTH_TEXT = 'Needs a recent authentication: this session signed in, or stepped up with a second factor, in the last 10 minutes; otherwise `403 STEP_UP_REQUIRED` (with the step-up routes of the person\'s factors) or, without a second factor, `403 GDPR_REAUTHENTICATION_REQUIRED` (sign in again). '
  + 'With ENFORCE_TRANSPORT_ENCRYPTION on, the request must carry `x-encrypted: true` (the answer is sealed under the session key): `422 ENCRYPTION_REQUIRED` otherwise.';

export function gdprExportRoutes(s: GdprExportRouteDeps): FastifyPluginAsync {
  /** The signed-in person, once re-authentication passes (the transport plugin enforced encryption before). */
  const asker = async (request: FastifyRequest): Promise<Asker> => {
    const encrypted = request.transport !== null && request.transport !== undefined;
    await s.gdprExport.requireRecentAuthentication(request.auth!);
    const user = await signedInUser<UserRow>(request, s.users);
    return { user, context: requestAuditContext(request), encrypted };
  };
  const rateLimit = { group: 'account' as const, account: signedInAccount };

  return async (instance) => {
    const app = instance as unknown as App;

    app.get(EXPORT_PATH, {
      schema: {
        tags, security, summary: 'Download everything the service holds about you',
        description: [
          'Every record of the signed-in person the personal-data registry lists: profile and contacts (decrypted), roles, branches, credentials as records (never hashes), factors (method and dates, never secrets), sessions and their history, devices (push tokens masked), consents and their history, recovery workflows, one-time codes sent (masked addresses), notifications, earlier data requests, and the audit events about them of the last 13 months (at most 1,000; `notes.audit_events` says how to get older ones).',
          '',
          '- `format=json` (default): one document, `generated_at`, `user_id`, a table of contents (`sections`), then one key per section.',
          '- `format=csv`: a ZIP with one CSV file per section, README.txt and manifest.json. Under transport encryption (`x-encrypted: true`) the answer is JSON (`ZipEnvelope`: the ZIP base64 in `data`, with its `sha256`), sealed under the session key; without it, the ZIP itself (`application/zip`, attachment).',
          '',
          REAUTH_TEXT,
          '',
          'Recorded in the request log (`GET /api/v1/admin/gdpr/requests`: section names and row counts, never the data) and audited as GDPR_EXPORTED.',
        ].join('\n'),
        querystring: ExportQuery,
        response: { 200: Type.Union([ExportDocument, ZipEnvelope], { description: 'The export (JSON), or the CSV export\'s ZIP inside JSON under transport encryption; without transport encryption `format=csv` answers `application/zip` bytes.' }), ...errors(...REAUTH) },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit, personalData: true },
    }, async (request, reply) => {
      const who = await asker(request);
      const collected = await s.gdprExport.collect(who.user);
      const format = request.query.format ?? 'json';
      if (format === 'json') {
        const document = s.gdprExport.renderJson(who.user, collected);
        await s.gdprExport.log(who, { kind: 'export', format, sections: counts(collected), bytes: Buffer.byteLength(JSON.stringify(document)) });
        return reply.header('cache-control', 'no-store').send(document as never);
      }
      const bytes = s.gdprExport.renderZip(who.user, collected);
      const filename = `strongroom-export-${collected.generatedAt.toISOString().slice(0, 10)}.zip`;
      await s.gdprExport.log(who, { kind: 'export', format, sections: counts(collected), bytes: bytes.length });
      reply.header('cache-control', 'no-store');
      if (who.encrypted) {
        return reply.send({ format: 'csv', content_type: 'application/zip', filename, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), data: bytes.toString('base64') });
      }
      return reply.type('application/zip').header('content-disposition', `attachment; filename="${filename}"`).send(bytes as never);
    });

    app.get(PORTABILITY_PATH, {
      schema: {
        tags, security, summary: 'Take your data to another provider (SCIM 2.0 User)',
        description: [
          'The data the person gave (name, email, phone, language, date of birth, branches, consents) as a SCIM 2.0 `User` resource (RFC 7643): the core schema, the enterprise extension (`organization`: the bank, `department`: the first branch) and `urn:strongroom:params:scim:schemas:extension:person:1.0:User` for what SCIM has no attribute for (`dateOfBirth`, `branches`, `consents`). Phone numbers are RFC 3966 `tel:` URIs. `Content-Type: application/scim+json`; under transport encryption the sealed envelope is JSON, as every sealed answer, and holds this document.',
          '',
          REAUTH_TEXT,
          '',
          'Recorded in the request log and audited as GDPR_PORTABILITY.',
        ].join('\n'),
        response: { 200: ScimUser, ...errors(...REAUTH) },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit, personalData: true },
    }, async (request, reply) => {
      const who = await asker(request);
      const location = `${request.protocol}://${request.host}${PORTABILITY_PATH}`;
      const { document, sections } = await s.gdprExport.portability(who.user, location);
      await s.gdprExport.log(who, { kind: 'portability', format: 'scim', sections, bytes: Buffer.byteLength(JSON.stringify(document)) });
      reply.header('cache-control', 'no-store');
      // A sealed answer must be JSON for the envelope to seal it; the document inside is the same.
      if (!who.encrypted) reply.type(SCIM_CONTENT_TYPE);
      return reply.send(document as never);
    });

    app.get(REQUESTS_PATH, {
      config: { personalData: true },
      schema: {
        tags, security, summary: 'The log of data-subject requests',
        description: 'Every export and portability document answered (erasures later): who, when, kind, format, channel, whether it left encrypted, and what was sent (section names and row counts, never the data). Newest first; `user_id` narrows to one person; page with `cursor`. Permission `gdpr.read`.',
        querystring: RequestsQuery,
        response: { 200: RequestsPage },
      },
      onRequest: s.guard.requirePermission(GDPR_READ),
    }, async (request) => {
      const q = request.query;
      const page = await s.gdprExport.requests.list({ userUuid: q.user_id, limit: q.limit ?? 50, cursor: q.cursor });
      return { requests: page.requests, next_cursor: page.nextCursor };
    });
  };
}
