/**
 * Consent administration: the purposes and every version of their texts, a new purpose, a new
 * version of a purpose's texts (permission `consent.manage`), and who consented to a purpose for
 * a campaign (`consent.read`: uuids, versions and times, nothing else about anyone). Audited.
 */
import type { FastifyRequest } from 'fastify';
import { CommonErrors } from '../../platform/errors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { requestWho, type Guard, type Who } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { ConsentErrors as E } from './errors.js';
import { CreatePurposeBody, PublishBody, PurposeDetail, PurposeList, PurposeParams, SubjectPage, SubjectsQuery } from './schemas.js';
import type { ConsentService, PurposeDetail as Detail } from './service.js';

const tags = ['Consent'];
const security = [{ bearer: [] }];
const BASE = '/api/v1/admin/consent/purposes';
const MANAGE = 'consent.manage';
const READ = 'consent.read';

function present(d: Detail) {
  return {
    ...d, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString(),
    versions: d.versions.map((v) => ({ ...v, published_at: v.published_at.toISOString() })),
  };
}

export function registerConsentAdminRoutes(app: App, s: { consent: ConsentService; guard: Guard; users: UserStore }): void {
  const who = (request: FastifyRequest): Promise<Who> => requestWho(request, s.users);
  const manage = s.guard.requirePermission(MANAGE);

  app.get(BASE, {
    schema: {
      tags, security, summary: 'Consent purposes and their texts (permission consent.manage)',
      description: 'Every purpose, oldest first, with every version of its texts (language, text, SHA-256) and when each was published.',
      response: { 200: PurposeList },
    },
    onRequest: manage,
  }, async () => ({ purposes: (await s.consent.purposes()).map(present) }));

  app.post(BASE, {
    schema: {
      tags, security, summary: 'Create a consent purpose (permission consent.manage)',
      description: `A purpose with version 1 of its texts, asked of everyone from now on. \`required: true\` makes it a condition of the service (people agree to it and cannot withdraw it here). Audited as CONSENT_PURPOSE_CREATED with the texts' hashes.\n\n${bullets('`409 CONSENT_PURPOSE_EXISTS`: a purpose has this key already.')}`,
      body: CreatePurposeBody,
      response: { 201: PurposeDetail, ...errors(E.CONSENT_PURPOSE_EXISTS) },
    },
    onRequest: manage,
  }, async (request, reply) => reply.status(201).send(present(await s.consent.createPurpose(request.body, await who(request)))));

  app.post(`${BASE}/:purpose/versions`, {
    schema: {
      tags, security, summary: 'Publish a new version of a purpose\'s texts (permission consent.manage)',
      description: `The next version (the current one plus 1) becomes the one people are asked to agree to; giving consent to an older one is refused from now on (409 CONSENT_VERSION_STALE). Consents already given stay recorded against the version agreed to, and \`GET /api/v1/auth/consent\` shows those people that a newer version awaits them (\`newer_version\`). Audited as CONSENT_TEXT_PUBLISHED with the hashes.\n\n${bullets('`404 CONSENT_PURPOSE_NOT_FOUND`: no purpose has this key.', '`409 CONSENT_TEXT_UNCHANGED`: the texts are exactly the current version\'s.')}`,
      params: PurposeParams,
      body: PublishBody,
      response: { 201: PurposeDetail, ...errors(E.CONSENT_PURPOSE_NOT_FOUND, E.CONSENT_TEXT_UNCHANGED) },
    },
    onRequest: manage,
  }, async (request, reply) => reply.status(201).send(present(await s.consent.publish(request.params.purpose, request.body.texts, await who(request)))));

  app.get(`${BASE}/:purpose/subjects`, {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'Who consented to a purpose (permission consent.read)',
      description: `The people whose consent to the purpose is given now (deleted accounts left out), for a campaign: each one's uuid, the version of the text and when, and nothing else. A page at a time: \`limit\` per page, \`next_cursor\` to send as \`cursor\` for the next one (null on the last). \`min_version\`: only consents to that version or a later one. Each page is audited as CONSENT_SUBJECTS_LISTED (who asked, the purpose, how many).\n\n${bullets('`404 CONSENT_PURPOSE_NOT_FOUND`: no purpose has this key.', '`422 VALIDATION_ERROR`: a malformed cursor (send a page\'s `next_cursor` unchanged).')}`,
      params: PurposeParams,
      querystring: SubjectsQuery,
      response: { 200: SubjectPage, ...errors(E.CONSENT_PURPOSE_NOT_FOUND, CommonErrors.VALIDATION_ERROR) },
    },
    onRequest: s.guard.requirePermission(READ),
  }, async (request) => {
    const limit = request.query.limit ?? 100;
    const page = await s.consent.subjects(request.params.purpose, { cursor: request.query.cursor, minVersion: request.query.min_version, limit }, await who(request));
    return { subjects: page.subjects.map((x) => ({ ...x, given_at: x.given_at.toISOString() })), next_cursor: page.next_cursor, limit };
  });
}
