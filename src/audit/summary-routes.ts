/**
 * GET /api/v1/admin/audit/summary (permission audit.read): the audit trail counted per time bucket
 * and channel, for the operator console's charts. Counts only: never who, where or from what.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import type { Guard } from '../sessions/guard.js';
import { AuditErrors } from './errors.js';
import { MAX_DAYS, SUMMARY_EVENTS, SUMMARY_KINDS, type AuditSummary, type SummaryKind } from './summary.js';

const ISO = { format: 'date-time' } as const;
const tags = ['Administration'];
const security = [{ bearer: [] }];

const KIND_TEXT: Record<SummaryKind, string> = {
  sign_ins: 'Sign-ins',
  failed_sign_ins: 'Sign-ins refused',
  account_locks: 'Accounts locked',
  alerts_raised: 'Security alerts raised',
};
const countOf = (k: SummaryKind, example: number) => Type.Integer({ minimum: 0, description: `${KIND_TEXT[k]}: ${SUMMARY_EVENTS[k].map((e) => `\`${e}\``).join(', ')} entries.`, examples: [example] });
const counts = (examples: number[]) => Object.fromEntries(SUMMARY_KINDS.map((k, i) => [k, countOf(k, examples[i]!)])) as Record<SummaryKind, ReturnType<typeof countOf>>;

const ROWS = [
  { start: '2026-03-04T09:00:00.000Z', channel: 'mobile', sign_ins: 412, failed_sign_ins: 9, account_locks: 0, alerts_raised: 0 },
  { start: '2026-03-04T09:00:00.000Z', channel: 'web', sign_ins: 230, failed_sign_ins: 17, account_locks: 1, alerts_raised: 1 },
  { start: '2026-03-04T10:00:00.000Z', channel: 'web', sign_ins: 198, failed_sign_ins: 4, account_locks: 0, alerts_raised: 0 },
];

const SummaryAnswer = Type.Object({
  from: Type.String({ ...ISO, description: 'The range counted: from (inclusive)…', examples: ['2026-03-04T08:30:00.000Z'] }),
  to: Type.String({ ...ISO, description: '…to (exclusive).', examples: ['2026-03-05T08:30:00.000Z'] }),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')], { examples: ['hour'] }),
  rows: Type.Array(Type.Object({
    start: Type.String({ ...ISO, description: 'The bucket\'s start, an hour or a day in UTC. The first and last buckets count only what is inside `[from, to)`.' }),
    channel: Type.Union([Type.String(), Type.Null()], { description: 'The client\'s channel (`web`, `mobile`, `ussd`, `agent`); null for entries written without one.', examples: ['web'] }),
    ...counts([230, 17, 1, 1]),
  }), { description: 'One row per bucket and channel with anything counted (a bucket with nothing has no row), by start then channel.' }),
  totals: Type.Object(counts([840, 30, 1, 1]), { description: 'The rows added up.' }),
}, { title: 'AuditSummary', examples: [{ from: '2026-03-04T08:30:00.000Z', to: '2026-03-04T10:30:00.000Z', bucket: 'hour', rows: ROWS, totals: { sign_ins: 840, failed_sign_ins: 30, account_locks: 1, alerts_raised: 1 } }] });

const SummaryQuerystring = Type.Object({
  from: Type.Optional(Type.String({ ...ISO, description: 'Inclusive; default: a day before `to`.', examples: ['2026-03-04T08:30:00.000Z'] })),
  to: Type.Optional(Type.String({ ...ISO, description: 'Exclusive; default: now.', examples: ['2026-03-05T08:30:00.000Z'] })),
  bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'hour', description: `\`hour\` (a range of at most ${MAX_DAYS.hour} days) or \`day\` (at most ${MAX_DAYS.day} days), in UTC.`, examples: ['hour'] })),
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only this user\'s entries (the user\'s uuid).' })),
  channel: Type.Optional(Type.String({ pattern: '^[a-z0-9_-]{1,32}$', description: 'Only entries written for a client on this channel.', examples: ['web'] })),
  country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, upper case: only entries located in that country.', examples: ['KE'] })),
}, { additionalProperties: false });

export function auditSummaryRoutes(deps: { summary: AuditSummary; guard: Guard }): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    app.get('/api/v1/admin/audit/summary', {
      schema: {
        tags, security, summary: 'Count sign-ins, failures, locks and alerts over time (permission audit.read)',
        description: `The audit trail counted per time bucket and channel, exactly, however many entries the range holds: ${SUMMARY_KINDS.map((k) => `\`${k}\` (${SUMMARY_EVENTS[k].join(', ')})`).join(', ')}. Filter by \`user_id\`, \`channel\` and \`country\` as \`GET /api/v1/admin/audit\` does, over \`[from, to)\` (the last 24 hours by default). Buckets are hours or days in UTC.\n\n${bullets(`\`400 AUDIT_SUMMARY_RANGE_INVALID\`: \`to\` is not after \`from\`, or the range is longer than the bucket allows (${MAX_DAYS.hour} days by hour, ${MAX_DAYS.day} by day); \`details.max_days\` says how long it may be.`, '`403 PERMISSION_DENIED`: the caller lacks `audit.read`.', '`422 VALIDATION_ERROR`: a filter is malformed.')}`,
        querystring: SummaryQuerystring,
        response: { 200: SummaryAnswer, ...errors(AuditErrors.AUDIT_SUMMARY_RANGE_INVALID, CommonErrors.VALIDATION_ERROR) },
      },
      onRequest: deps.guard.requirePermission('audit.read'),
      // Filtered by user_id, the counts are one person's sign-ins by channel and country.
      config: { personalData: true },
    }, async (request) => {
      const q = request.query;
      return deps.summary.summarise({ from: q.from, to: q.to, bucket: q.bucket ?? 'hour', userId: q.user_id, channel: q.channel, country: q.country });
    });
  };
}
