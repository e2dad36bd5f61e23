/**
 * The personal-data breach register (permission `breach.manage`): record a breach, list them
 * with their 72-hour deadlines, read the record a regulator asks for and the affected accounts,
 * record the report to the authority, close one. Ordinary signed-in administrative routes.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CommonErrors } from '../../platform/errors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors, Pagination } from '../../platform/http/schemas.js';
import { requestAuditContext, signedInUser, type Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { BreachErrors as E } from './errors.js';
import { AffectedList, BreachList, BreachRecord, CloseBody, IdParams, RecordBody, ReportBody } from './schemas.js';
import type { BreachService, Operator } from './service.js';

const tags = ['Personal-data breaches'];
const security = [{ bearer: [] }];
export const BREACH_PERMISSION = 'breach.manage';
const DENIED = '`403 PERMISSION_DENIED`: the caller lacks `breach.manage`.';
const NOT_FOUND = '`404 BREACH_NOT_FOUND`: no breach has this id.';

export interface BreachRouteDeps {
  breaches: BreachService;
  guard: Guard;
  users: UserStore;
}

export function breachRoutes(deps: BreachRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const onRequest = deps.guard.requirePermission(BREACH_PERMISSION);
    registerReadRoutes(app, deps.breaches, onRequest);
    registerWriteRoutes(app, deps, onRequest);
  };
}

type Hook = ReturnType<Guard['requirePermission']>;

/** Recording, reporting and closing: each audited with the operator. */
function registerWriteRoutes(app: App, deps: BreachRouteDeps, onRequest: Hook): void {
  const operatorOf = async (request: FastifyRequest): Promise<Operator> => {
    const u = await signedInUser(request, deps.users);
    return { uuid: u.uuid, username: u.username };
  };
  const ctx = requestAuditContext;
  const s = deps.breaches;

  app.post('/api/v1/admin/breaches', {
    schema: {
      tags, security, summary: 'Record a personal-data breach (permission breach.manage)',
      description: `Records the breach, finds the affected accounts in the audit trail (every account with an entry in the window that meets the scope), lists them, and, with \`notify_subjects\`, queues a notice to each by email and SMS in their language, sent in the background. The 72-hour deadline to notify the supervisory authority runs from \`aware_at\`. Audited (\`BREACH_RECORDED\`).\n\n${bullets(DENIED, '`422 VALIDATION_ERROR`: a field is invalid (`details.fields` names it): `occurred_to` not after `occurred_from`, in the future or too far after it; `aware_at` in the future or before `occurred_from`; an unknown category, channel or event type; a client network that is no address or CIDR block (`scope.client_networks.<index>`).', '`422 BREACH_SCOPE_TOO_BROAD`: more accounts match than one breach may list (`BREACH_MAX_AFFECTED`, `details.max_affected`): nothing was recorded.')}`,
      body: RecordBody,
      response: { 201: BreachRecord, ...errors(CommonErrors.VALIDATION_ERROR, E.BREACH_SCOPE_TOO_BROAD) },
    },
    onRequest,
  }, async (request, reply) => {
    const view = await s.record(request.body, await operatorOf(request), ctx(request));
    return reply.code(201).send(view);
  });

  app.post('/api/v1/admin/breaches/:id/report', {
    schema: {
      tags, security, summary: 'Record the notification of the supervisory authority (permission breach.manage)',
      description: `Records that, and when, the authority was notified, with its reference; once. The breach is then \`reported\` and leaves the deadline metrics. Audited (\`BREACH_REPORTED\`, with whether it was within the deadline).\n\n${bullets(DENIED, NOT_FOUND, '`422 VALIDATION_ERROR`: `reported_at` in the future or before `aware_at`.', '`409 BREACH_ALREADY_REPORTED`: it was reported already; `409 BREACH_CLOSED`: it is closed.')}`,
      params: IdParams,
      body: ReportBody,
      response: { 200: BreachRecord, ...errors(E.BREACH_NOT_FOUND, CommonErrors.VALIDATION_ERROR, E.BREACH_ALREADY_REPORTED, E.BREACH_CLOSED) },
    },
    onRequest,
  }, async (request) => s.report(request.params.id, request.body, await operatorOf(request), ctx(request)));

  app.post('/api/v1/admin/breaches/:id/close', {
    schema: {
      tags, security, summary: 'Close a personal-data breach (permission breach.manage)',
      description: `With a note: why it is closed, and when it was never reported, why the authority did not need to be notified. Notices already queued are still sent. Audited (\`BREACH_CLOSED\`).\n\n${bullets(DENIED, NOT_FOUND, '`409 BREACH_CLOSED`: it is closed already.')}`,
      params: IdParams,
      body: CloseBody,
      response: { 200: BreachRecord, ...errors(E.BREACH_NOT_FOUND, E.BREACH_CLOSED) },
    },
    onRequest,
  }, async (request) => s.close(request.params.id, request.body.note, await operatorOf(request), ctx(request)));
}

/** The register, a record, its affected accounts. */
function registerReadRoutes(app: App, s: BreachService, onRequest: Hook): void {
  app.get('/api/v1/admin/breaches', {
    schema: {
      tags, security, summary: 'List personal-data breaches with their deadlines (permission breach.manage)',
      description: `Newest first: each breach's state (\`open\`, \`reported\`, \`closed\`), its deadline and the seconds left (negative once overdue) while it awaits its report.\n\n${bullets(DENIED)}`,
      querystring: Type.Object(Pagination, { additionalProperties: false }),
      response: { 200: BreachList },
    },
    onRequest,
  }, async (request) => s.list(request.query.page ?? 1, request.query.page_size ?? 50));

  app.get('/api/v1/admin/breaches/:id', {
    schema: {
      tags, security, summary: 'The record of a personal-data breach (permission breach.manage)',
      description: `What the supervisory authority asks for: the nature of the breach, the categories and approximate numbers of people and records concerned, its likely consequences, the measures taken, the contact point, the notices sent and failed, the report to the authority, and the timeline.\n\n${bullets(DENIED, NOT_FOUND)}`,
      params: IdParams,
      response: { 200: BreachRecord, ...errors(E.BREACH_NOT_FOUND) },
    },
    onRequest,
  }, async (request) => s.view(request.params.id));

  app.get('/api/v1/admin/breaches/:id/affected', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'The accounts a personal-data breach affected (permission breach.manage)',
      description: `By account, with how many of its audit entries matched and the state of its notices.\n\n${bullets(DENIED, NOT_FOUND)}`,
      params: IdParams,
      querystring: Type.Object({ ...Pagination, page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })) }, { additionalProperties: false }),
      response: { 200: AffectedList, ...errors(E.BREACH_NOT_FOUND) },
    },
    onRequest,
  }, async (request) => s.affected(request.params.id, request.query.page ?? 1, request.query.page_size ?? 100));

}
