/** Request and answer schemas of the security alerts' administration. */
import Type, { type TSchema } from 'typebox';
import { COUNT_CAP } from '../../audit/service.js';
import { NO_NUL } from '../../platform/http/schemas.js';
import { ALERT_SEVERITIES } from '../types.js';
import { ALERT_STATES } from './store.js';
import { TRAIL_MAX } from './service.js';

const ISO = { format: 'date-time' } as const;
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const oneOf = <T extends string>(values: readonly T[], opts: { description?: string; examples: [T] }) => Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });
const Uuid = (description: string, example = '0195a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b') => Type.String({ format: 'uuid', description, examples: [example] });

const ALERT_ID = '0195a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
const USER_ID = '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77';
const ADMIN_ID = '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e';

export const Severity = oneOf(ALERT_SEVERITIES, { description: '`low`, `medium`, `high` or `critical`.', examples: ['high'] });
export const State = oneOf(ALERT_STATES, { description: '`open` (nobody has taken it), `acknowledged` (someone is looking at it), `resolved`.', examples: ['open'] });

const Location = Type.Object({
  internal: Type.Optional(Type.Boolean({ description: 'true: an internal address (the bank\'s networks, a proxy, loopback); no other field.' })),
  country: Type.Optional(Type.String({ description: 'ISO 3166-1 alpha-2.', examples: ['PT'] })),
  asn: Type.Optional(Type.Integer({ examples: [3243] })),
  as_org: Type.Optional(Type.String({ examples: ['MEO'] })),
  city: Type.Optional(Type.String({ examples: ['Lisbon'] })),
  latitude: Type.Optional(Type.Number({ examples: [38.7223] })),
  longitude: Type.Optional(Type.Number({ examples: [-9.1393] })),
  accuracy_km: Type.Optional(Type.Number({ examples: [20] })),
}, { description: 'Where the client address was, from the operator\'s geolocation databases, when the alert was raised.' });

const Indicator = Type.Object({
  signal: Type.String({ description: 'The signal that fired: `new_device`, `new_country`, `new_network`, `impossible_travel`, `country_hop`, `failed_passwords`, `failed_second_factors`, `unusual_hour`, `address_failing_many_accounts`, `breached_password`.', examples: ['impossible_travel'] }),
  weight: Type.Number({ description: 'Its contribution to the score.', examples: [40] }),
  details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), { description: 'Country codes, network numbers, distances and counts; never personal data.', examples: [{ from_country: 'KE', to_country: 'PT', km: 6470, minutes: 20 }] }),
});

const EXAMPLE_ALERT = {
  id: ALERT_ID, rule: 'impossible_travel', severity: 'high', state: 'open', created_at: '2026-03-04T09:20:00.000Z',
  user_id: USER_ID, username: 'amina.otieno', audit_id: '0195a1b2-7c3d-7e4f-8a9b-000000000001', channel: 'web',
  ip_hash: 'c2b7e1f0a9d84e6b3f5a7c9e1d3b5f7a9c1e3d5b7f9a1c3e5d7b9f1a3c5e7d9b', location: { country: 'PT', asn: 3243, as_org: 'MEO', city: 'Lisbon' },
  score: 85, indicators: [{ signal: 'impossible_travel', weight: 40, details: { from_country: 'KE', to_country: 'PT', km: 6470, minutes: 20 } }],
  acknowledged: null, resolved: null,
};

const alertProperties = {
  id: Uuid('The alert\'s id.', ALERT_ID),
  rule: Type.String({ description: 'The rule that raised it, such as `impossible_travel`, `failed_passwords`, `credential_stuffing`, `not_me`.', examples: ['impossible_travel'] }),
  severity: Severity,
  state: State,
  created_at: Type.String({ ...ISO, description: 'When it was raised.' }),
  user_id: Nullable(Uuid('The account it concerns (its uuid); null: no single account (an address failing across many).', USER_ID)),
  username: Nullable(Type.String({ description: 'That account\'s username now; null: no account, or gone.', examples: ['amina.otieno'] })),
  audit_id: Nullable(Uuid('The audit entry of the event that raised it.')),
  channel: Nullable(Type.String({ examples: ['web'] })),
  ip_hash: Nullable(Type.String({ description: 'The keyed hash of the client\'s address (as sessions keep it), never the address.', examples: [EXAMPLE_ALERT.ip_hash] })),
  location: Nullable(Location),
  score: Nullable(Type.Number({ minimum: 0, maximum: 100, description: 'The risk score (0 to 100) of the event, when it had one.', examples: [85] })),
  indicators: Type.Array(Indicator, { description: 'What made the score.' }),
  acknowledged: Nullable(Type.Object({
    at: Type.String(ISO), by: Uuid('The administrator.', ADMIN_ID), by_username: Nullable(Type.String({ examples: ['sec.officer'] })),
    note: Nullable(Type.String({ examples: ['Calling the customer.'] })),
  }, { description: 'Who acknowledged it, when, with what note; null: not acknowledged.' })),
  resolved: Nullable(Type.Object({
    at: Type.String(ISO), by: Uuid('The administrator.', ADMIN_ID), by_username: Nullable(Type.String({ examples: ['sec.officer'] })),
    note: Type.String({ examples: ['Customer confirmed the trip; no action.'] }),
  }, { description: 'Who resolved it, when, and the note; null: not resolved.' })),
};

export const AlertSummary = Type.Object(alertProperties, { title: 'SecurityAlert', examples: [EXAMPLE_ALERT] });

export const AlertList = Type.Object({
  alerts: Type.Array(AlertSummary),
  total: Type.Integer({ minimum: 0, description: `Alerts matching the filters, counted up to ${COUNT_CAP}.`, examples: [1] }),
  total_exact: Type.Boolean({ description: `false: more than ${COUNT_CAP} match, and \`total\` says ${COUNT_CAP}.`, examples: [true] }),
  next_cursor: Nullable(Type.String({ description: 'Send as `cursor` for the next page; null on the last page.', examples: ['eyJ2IjoxLCJhdCI6IjIwMjYtMDMtMDRUMDk6MjA6MDAuMDAwMDAwWiIsImlkIjoiMDE5NWExYjItN2MzZC03ZTRmLThhOWItMGMxZDJlM2Y0YTViIn0'] })),
}, { title: 'SecurityAlertList', examples: [{ alerts: [EXAMPLE_ALERT], total: 1, total_exact: true, next_cursor: null }] });

const TrailEntry = Type.Object({
  audit_id: Type.String({ format: 'uuid' }),
  timestamp: Type.String(ISO),
  event_type: Type.String({ examples: ['USER_LOGIN'] }),
  user_id: Nullable(Type.String()),
  username: Nullable(Type.String()),
  status: Type.String({ examples: ['SUCCESS'] }),
  ip_address: Nullable(Type.String()),
  device_fingerprint: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  channel: Nullable(Type.String()),
  mfa_method: Nullable(Type.String()),
  location: Nullable(Location),
  security_events: Type.Array(Type.Unknown()),
  risk_score: Nullable(Type.Number()),
  suspicious_indicators: Type.Array(Type.Unknown()),
  details: Type.Record(Type.String(), Type.Unknown()),
}, { description: 'An audit entry, as `GET /api/v1/admin/audit` answers it.' });

const Delivery = Type.Object({
  channel: oneOf(['email', 'webhook'] as const, { description: 'The security team\'s email (SECURITY_ALERT_EMAIL) or the signed webhook (SECURITY_WEBHOOK_URL).', examples: ['webhook'] }),
  state: oneOf(['pending', 'sent', 'failed'] as const, { description: '`pending` (queued, or due again after a failure), `sent`, `failed` (given up after SECURITY_ALERT_MAX_ATTEMPTS).', examples: ['sent'] }),
  attempts: Type.Integer({ minimum: 0, examples: [1] }),
  last_error: Nullable(Type.String({ description: 'Why the last attempt failed (`HTTP 503`, `timeout`, an SMTP code); null once sent.', examples: ['HTTP 503'] })),
  next_attempt_at: Nullable(Type.String({ ...ISO, description: 'When it is tried next, while pending.' })),
  sent_at: Nullable(Type.String(ISO)),
});

export const AlertDetail = Type.Object({
  ...alertProperties,
  deliveries: Type.Array(Delivery, { description: 'Its deliveries to the security team (none when no channel is configured, or its severity is below SECURITY_ALERT_MIN_SEVERITY).' }),
  audit_trail: Type.Object({
    from: Type.String({ ...ISO, description: '30 minutes before the alert.' }),
    to: Type.String({ ...ISO, description: '30 minutes after it.' }),
    entries: Type.Array(TrailEntry, { description: `The account's audit entries in [from, to), newest first, at most ${TRAIL_MAX}; none for an alert about no single account.` }),
    truncated: Type.Boolean({ description: `true: more than ${TRAIL_MAX} entries; read the rest with GET /api/v1/admin/audit?user_id=…&from=…&to=….`, examples: [false] }),
  }),
}, {
  title: 'SecurityAlertDetail',
  examples: [{
    ...EXAMPLE_ALERT,
    deliveries: [{ channel: 'email', state: 'sent', attempts: 1, last_error: null, next_attempt_at: null, sent_at: '2026-03-04T09:20:01.000Z' }, { channel: 'webhook', state: 'pending', attempts: 2, last_error: 'HTTP 503', next_attempt_at: '2026-03-04T09:21:05.000Z', sent_at: null }],
    audit_trail: {
      from: '2026-03-04T08:50:00.000Z', to: '2026-03-04T09:50:00.000Z', truncated: false,
      entries: [{
        audit_id: '0195a1b2-7c3d-7e4f-8a9b-000000000001', timestamp: '2026-03-04T09:20:00.000Z', event_type: 'USER_LOGIN', user_id: USER_ID, username: 'amina.otieno', status: 'SUCCESS',
        ip_address: '193.136.0.7', device_fingerprint: null, user_agent: 'Mozilla/5.0', channel: 'web', mfa_method: null, location: { country: 'PT', city: 'Lisbon' },
        security_events: [], risk_score: 85, suspicious_indicators: [], details: {},
      }],
    },
  }],
});

export const ListQuery = Type.Object({
  state: Type.Optional(State),
  severity: Type.Optional(Severity),
  rule: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_.-]{0,63}$', description: 'Only alerts of this rule.', examples: ['impossible_travel'] })),
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only alerts about this account (its uuid).' })),
  from: Type.Optional(Type.String({ ...ISO, description: 'Raised at or after this time.' })),
  to: Type.Optional(Type.String({ ...ISO, description: 'Raised before this time.' })),
  cursor: Type.Optional(Type.String({ maxLength: 256, description: 'The `next_cursor` of the previous page, unchanged.' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
}, { additionalProperties: false });

const note = (required: boolean, description: string, example: string) => Type.String({ minLength: required ? 1 : 0, maxLength: 2000, pattern: NO_NUL, description, examples: [example] });

export const AcknowledgeBody = Type.Object({
  note: Type.Optional(note(false, 'What is being done (optional).', 'Calling the customer.')),
}, { additionalProperties: false, title: 'SecurityAlertAcknowledgeRequest', examples: [{ note: 'Calling the customer.' }] });

export const ResolveBody = Type.Object({
  note: note(true, 'What was found and what was done.', 'Customer confirmed the trip; no action.'),
}, { additionalProperties: false, title: 'SecurityAlertResolveRequest', examples: [{ note: 'Customer confirmed the trip; no action.' }] });

export const IdParams = Type.Object({ id: Uuid('The alert\'s id.', ALERT_ID) });
