/**
 * The security alerts' administration (permission `alerts.manage`): list them with filters and
 * keyset pages, read one with the audit trail around it, acknowledge and resolve. Ordinary
 * signed-in administrative routes; every change audited with the operator.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CommonErrors } from '../../platform/errors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { requestAuditContext, signedInUser, type Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { AlertErrors as E } from './errors.js';
import { AcknowledgeBody, AlertDetail, AlertList, IdParams, ListQuery, ResolveBody } from './schemas.js';
import { TRAIL_MAX, type AlertService, type Operator } from './service.js';

const tags = ['Security alerts'];
const security = [{ bearer: [] }];
export const ALERTS_PERMISSION = 'alerts.manage';
const DENIED = '`403 PERMISSION_DENIED`: the caller lacks `alerts.manage`.';
const NOT_FOUND = '`404 ALERT_NOT_FOUND`: no alert has this id.';

export interface AlertRouteDeps {
  alerts: AlertService;
  guard: Guard;
  users: UserStore;
}

export function alertRoutes(deps: AlertRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const onRequest = deps.guard.requirePermission(ALERTS_PERMISSION);
    const s = deps.alerts;
    const operatorOf = async (request: FastifyRequest): Promise<Operator> => {
      const u = await signedInUser(request, deps.users);
      return { uuid: u.uuid, username: u.username };
    };

    app.get('/api/v1/admin/alerts', {
      config: { personalData: true },
      schema: {
        tags, security, summary: 'List security alerts (permission alerts.manage)',
        description: `Newest first. Filter by \`state\`, \`severity\`, \`rule\`, \`user_id\` (the account's uuid) and a time range \`[from, to)\`. Page with \`cursor\`: send a page's \`next_cursor\` to get the next (null on the last); every page costs the same however deep. \`total\` counts exactly up to 1000 (\`total_exact\`).\n\n${bullets(DENIED, '`422 VALIDATION_ERROR`: a filter is malformed, or `cursor` is malformed (send a page\'s `next_cursor` unchanged).')}`,
        querystring: ListQuery,
        response: { 200: AlertList, ...errors(CommonErrors.VALIDATION_ERROR) },
      },
      onRequest,
    }, async (request) => {
      const q = request.query;
      return s.list({ state: q.state, severity: q.severity, rule: q.rule, userUuid: q.user_id, from: q.from, to: q.to, cursor: q.cursor, limit: q.page_size ?? 50 });
    });

    app.get('/api/v1/admin/alerts/:id', {
      config: { personalData: true },
      schema: {
        tags, security, summary: 'A security alert with the audit trail around it (permission alerts.manage)',
        description: `The alert, its deliveries to the security team, and the account's audit entries from 30 minutes before it to 30 minutes after (at most ${TRAIL_MAX}).\n\n${bullets(DENIED, NOT_FOUND)}`,
        params: IdParams,
        response: { 200: AlertDetail, ...errors(E.ALERT_NOT_FOUND) },
      },
      onRequest,
    }, async (request) => s.view(request.params.id));

    app.post('/api/v1/admin/alerts/:id/acknowledge', {
      schema: {
        tags, security, summary: 'Acknowledge a security alert (permission alerts.manage)',
        description: `Someone is looking at it: the alert goes from \`open\` to \`acknowledged\`, with who, when and an optional note. Audited (\`SECURITY_ALERT_ACKNOWLEDGED\`).\n\n${bullets(DENIED, NOT_FOUND, '`409 ALERT_ALREADY_ACKNOWLEDGED`: it was acknowledged already (`details.acknowledged_at`, `acknowledged_by`); `409 ALERT_RESOLVED`: it is resolved (`details.resolved_at`, `resolved_by`).')}`,
        params: IdParams,
        body: AcknowledgeBody,
        response: { 200: AlertDetail, ...errors(E.ALERT_NOT_FOUND, E.ALERT_ALREADY_ACKNOWLEDGED, E.ALERT_RESOLVED) },
      },
      onRequest,
    }, async (request) => s.acknowledge(request.params.id, request.body.note ?? null, await operatorOf(request), requestAuditContext(request)));

    app.post('/api/v1/admin/alerts/:id/resolve', {
      schema: {
        tags, security, summary: 'Resolve a security alert (permission alerts.manage)',
        description: `Closes it, \`open\` or \`acknowledged\`, with a note: what was found and what was done. Once. Audited (\`SECURITY_ALERT_RESOLVED\`).\n\n${bullets(DENIED, NOT_FOUND, '`409 ALERT_RESOLVED`: it is resolved already (`details.resolved_at`, `resolved_by`).')}`,
        params: IdParams,
        body: ResolveBody,
        response: { 200: AlertDetail, ...errors(E.ALERT_NOT_FOUND, E.ALERT_RESOLVED) },
      },
      onRequest,
    }, async (request) => s.resolve(request.params.id, request.body.note, await operatorOf(request), requestAuditContext(request)));
  };
}
