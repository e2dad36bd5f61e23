/**
 * `GET` and `POST /api/v1/auth/consent`: the signed-in person's consents per purpose, and giving
 * or withdrawing several in one call (withdrawal is the same call as giving). Each change is
 * recorded with the version and hash of the text, the time, the channel, the client's address
 * and user agent, and audited (CONSENT_GIVEN, CONSENT_WITHDRAWN).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CommonErrors } from '../../platform/errors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { requestAuditContext, signedInAccount, signedInUser, type Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { registerConsentAdminRoutes } from './admin-routes.js';
import { ConsentErrors as E } from './errors.js';
import { ChangeAnswer, ChangeBody, ConsentQuery, ConsentsAnswer } from './schemas.js';
import type { ConsentService, Subject } from './service.js';
import type { ConsentRecord } from './store.js';

export interface ConsentRouteDeps {
  consent: ConsentService;
  guard: Guard;
  users: UserStore;
}

const tags = ['Consent'];
const security = [{ bearer: [] }];
const BASE = '/api/v1/auth/consent';
const iso = (d: Date): string => d.toISOString();

function presentRecord(r: ConsentRecord) {
  return { ...r, at: iso(r.at) };
}

export function consentRoutes(s: ConsentRouteDeps): FastifyPluginAsync {
  const subject = async (request: FastifyRequest): Promise<Subject> => signedInUser(request, s.users);
  return async (instance) => {
    const app = instance as unknown as App;

    app.get(BASE, {
      schema: {
        tags, security, summary: 'Your consents, per purpose',
        description: [
          'Every purpose the bank asks consent for, with your answer: given or not, the version of the text you answered, the current version and its text (in `language`, else your language, else English), when and on which channel you answered.',
          '',
          '`newer_version: true`: you consented to an older version of the text; your consent stays recorded against it, and the current one awaits your agreement. `history=true` adds every answer you gave, oldest first, with the address and user agent it came from.',
        ].join('\n'),
        querystring: ConsentQuery,
        response: { 200: ConsentsAnswer },
      },
      onRequest: s.guard.authenticate,
      config: { personalData: true },
    }, async (request) => {
      const who = await subject(request);
      const consents = (await s.consent.view(who, request.query.language)).map((c) => ({
        ...c, changed_at: c.changed_at === null ? null : iso(c.changed_at), text: { ...c.text, published_at: iso(c.text.published_at) },
      }));
      if (!request.query.history) return { consents };
      return { consents, history: (await s.consent.history(who)).map(presentRecord) };
    });

    app.post(BASE, {
      schema: {
        tags, security, summary: 'Give or withdraw consent',
        description: [
          'One or several answers in one call, all recorded or none. To give consent, send the `version` of the text shown: it must be the current one. To withdraw, `given: false` is enough (no version needed); it is recorded against the version consent was given to. An answer that is already yours records nothing (`changed: false`).',
          '',
          'Each change appends a history row (purpose, version, language and SHA-256 of the text, given or withdrawn, time, channel, client address, user agent) and updates your current answer, in one transaction; audited as CONSENT_GIVEN or CONSENT_WITHDRAWN.',
          '',
          bullets(
            '`422 CONSENT_PURPOSE_UNKNOWN`: a purpose the bank has not configured (`details.purposes`).',
            '`409 CONSENT_VERSION_STALE`: the version sent is not the current one (`details.purpose`, `details.version`, `details.current_version`): read the text again and ask again.',
            '`409 CONSENT_REQUIRED_PURPOSE`: a purpose needed to use the service (terms of service) cannot be withdrawn; closing the account is the way to end it.',
            '`422 VALIDATION_ERROR`: the same purpose twice, or consent given without a `version`.',
          ),
        ].join('\n'),
        body: ChangeBody,
        response: { 200: ChangeAnswer, ...errors(E.CONSENT_PURPOSE_UNKNOWN, E.CONSENT_VERSION_STALE, E.CONSENT_REQUIRED_PURPOSE, CommonErrors.VALIDATION_ERROR) },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const changes = request.body.consents;
      const seen = new Set<string>();
      for (const c of changes) {
        if (seen.has(c.purpose)) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'consents', message: `names ${c.purpose} twice: one answer per purpose` }] });
        seen.add(c.purpose);
      }
      const results = await s.consent.change(await subject(request), changes, requestAuditContext(request));
      return { consents: results.map((r) => ({ ...r, changed_at: iso(r.changed_at) })) };
    });

    registerConsentAdminRoutes(app, s);
  };
}
