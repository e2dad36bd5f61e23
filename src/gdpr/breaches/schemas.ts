/** Request and answer schemas of the personal-data breach register. */
import Type from 'typebox';
import { CHANNELS } from '../../access/policy.js';
import { AUDIT_EVENTS } from '../../audit/service.js';
import { NO_NUL } from '../../platform/http/schemas.js';
import { BREACH_CATEGORIES, CATEGORY_MEANING } from './categories.js';
import { MAX_NETWORKS } from './scope.js';
import { MAX_WINDOW_DAYS } from './service.js';
import { NOTICE_STATES } from './store.js';

const ISO = { format: 'date-time' } as const;
const oneOf = <T extends string>(values: readonly T[], opts: { description?: string; examples: [T] }) => Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });
const text = (max: number, description: string, example: string) => Type.String({ minLength: 1, maxLength: max, pattern: NO_NUL, description, examples: [example] });
const Uuid = (description: string) => Type.String({ format: 'uuid', description, examples: ['3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77'] });

export const Category = oneOf(BREACH_CATEGORIES, {
  description: `A category of personal data: ${BREACH_CATEGORIES.map((c) => `\`${c}\` (${CATEGORY_MEANING[c]})`).join(', ')}.`,
  examples: ['contact_details'],
});

export const Scope = Type.Object({
  channels: Type.Optional(Type.Array(oneOf(CHANNELS, { examples: ['web'] }), { minItems: 1, maxItems: CHANNELS.length, uniqueItems: true, description: 'Only audit entries of these channels.' })),
  event_types: Type.Optional(Type.Array(oneOf(AUDIT_EVENTS, { examples: ['USER_LOGIN'] }), { minItems: 1, maxItems: 50, uniqueItems: true, description: 'Only audit entries of these event types.' })),
  client_networks: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 49, examples: ['198.51.100.0/24'] }), {
    minItems: 1, maxItems: MAX_NETWORKS, description: `Only audit entries whose client address lies in one of these IPv4 or IPv6 addresses or CIDR blocks (no host bits below the prefix; at most ${MAX_NETWORKS}).`,
  })),
}, {
  additionalProperties: false,
  description: 'How the affected accounts are found: every account with an audit entry in the window (`occurred_from` included, `occurred_to` excluded) that meets every filter given; the values of one filter are alternatives. No filter: every account with an entry in the window. Service accounts are never listed.',
  examples: [{ channels: ['web'], client_networks: ['198.51.100.0/24'] }],
});

export const RecordBody = Type.Object({
  occurred_from: Type.String({ ...ISO, description: 'When the breach began (or the earliest it may have).', examples: ['2026-03-01T08:00:00Z'] }),
  occurred_to: Type.String({ ...ISO, description: `When it ended (or now, if it may be going on): after \`occurred_from\`, not in the future, at most ${MAX_WINDOW_DAYS} days later.`, examples: ['2026-03-01T10:30:00Z'] }),
  aware_at: Type.Optional(Type.String({ ...ISO, description: 'When the bank became aware of it (default: now): the 72-hour deadline to notify the supervisory authority runs from here. Not before `occurred_from`, not in the future.', examples: ['2026-03-02T07:15:00Z'] })),
  categories: Type.Array(Category, { minItems: 1, maxItems: BREACH_CATEGORIES.length, uniqueItems: true, description: 'What was exposed.' }),
  scope: Type.Optional(Scope),
  description: text(4000, 'The nature of the breach, for the authority.', 'A misconfigured log shipper copied sign-in records to a storage bucket readable from the internet.'),
  consequences: text(4000, 'Its likely consequences for the people concerned.', 'Targeted phishing using the email addresses; no password or code was exposed.'),
  measures: text(4000, 'The measures taken or proposed, including those to mitigate its effects.', 'Bucket closed at 10:30; access logs reviewed; affected customers told to beware of phishing.'),
  contact_point: text(500, 'Whom the authority and the people concerned may ask (the data-protection officer). Notices quote it.', 'Data Protection Officer, dpo@bank.example, +254 20 000 0000'),
  notify_subjects: Type.Boolean({ description: 'Whether to notify each affected person by email and SMS, in their language (when the risk to them is high).', examples: [true] }),
}, {
  additionalProperties: false, title: 'BreachRecordRequest',
  examples: [{
    occurred_from: '2026-03-01T08:00:00Z', occurred_to: '2026-03-01T10:30:00Z', aware_at: '2026-03-02T07:15:00Z', categories: ['contact_details', 'audit_data'],
    scope: { channels: ['web'], client_networks: ['198.51.100.0/24'] }, description: 'A misconfigured log shipper copied sign-in records to a storage bucket readable from the internet.',
    consequences: 'Targeted phishing using the email addresses; no password or code was exposed.', measures: 'Bucket closed at 10:30; affected customers told to beware of phishing.',
    contact_point: 'Data Protection Officer, dpo@bank.example', notify_subjects: true,
  }],
});

const State = oneOf(['open', 'reported', 'closed'] as const, { description: '`open` (the authority not yet notified), `reported` (it was), `closed`.', examples: ['open'] });
const NoticeState = oneOf(NOTICE_STATES, { description: '`pending` (queued), `sending`, `sent`, `failed`, `no_contact` (the account has no such contact).', examples: ['sent'] });

const listProperties = {
  id: Uuid('The breach\'s id.'),
  state: State,
  occurred_from: Type.String(ISO),
  occurred_to: Type.String(ISO),
  aware_at: Type.String({ ...ISO, description: 'When the bank became aware of it.' }),
  deadline_at: Type.String({ ...ISO, description: '72 hours after `aware_at`: the authority must be notified by then.' }),
  seconds_left: Type.Union([Type.Integer({ examples: [86400] }), Type.Null()], { description: 'Seconds until `deadline_at` while the breach is `open` (negative once overdue); null once reported or closed.' }),
  overdue: Type.Boolean({ description: 'Open and past its deadline.', examples: [false] }),
  categories: Type.Array(Category),
  affected_accounts: Type.Integer({ minimum: 0, description: 'The accounts found affected (approximate number of people concerned).', examples: [412] }),
  recorded_at: Type.String(ISO),
  reported_at: Type.Union([Type.String(ISO), Type.Null()]),
  closed_at: Type.Union([Type.String(ISO), Type.Null()]),
};

export const BreachListItem = Type.Object(listProperties, { title: 'BreachListItem' });

export const BreachList = Type.Object({
  total: Type.Integer({ minimum: 0, examples: [1] }),
  page: Type.Integer({ minimum: 1, examples: [1] }),
  page_size: Type.Integer({ minimum: 1, examples: [50] }),
  breaches: Type.Array(BreachListItem),
}, { title: 'BreachList' });

export const BreachRecord = Type.Object({
  ...listProperties,
  description: Type.String({ description: 'The nature of the breach.' }),
  consequences: Type.String({ description: 'Its likely consequences.' }),
  measures: Type.String({ description: 'The measures taken or proposed.' }),
  contact_point: Type.String(),
  scope: Scope,
  records_concerned: Type.Integer({ minimum: 0, description: 'The audit entries that matched the scope (approximate number of records concerned).', examples: [1830] }),
  notify_subjects: Type.Boolean(),
  notices: Type.Object(Object.fromEntries(NOTICE_STATES.map((s) => [s, Type.Integer({ minimum: 0, examples: [0] })])), { description: 'Notices (one per affected account and channel: email, SMS) in each state.' }),
  authority_report: Type.Union([Type.Object({
    reported_at: Type.String(ISO),
    reference: Type.String({ examples: ['ODPC-2026-00417'] }),
    within_deadline: Type.Boolean({ examples: [true] }),
  }), Type.Null()], { description: 'The notification of the supervisory authority, once recorded.' }),
  closing_note: Type.Union([Type.String(), Type.Null()]),
  recorded_by: Uuid('The administrator who recorded it.'),
  timeline: Type.Array(Type.Object({
    at: Type.String(ISO),
    event: Type.String({ description: '`breach_began`, `breach_ended`, `bank_aware`, `recorded`, `authority_deadline`, `first_notice_sent`, `last_notice_sent`, `reported_to_authority`, `closed`.', examples: ['bank_aware'] }),
  }), { description: 'What happened when, in order.' }),
}, { title: 'BreachRecord' });

export const AffectedList = Type.Object({
  total: Type.Integer({ minimum: 0, examples: [1] }),
  page: Type.Integer({ minimum: 1, examples: [1] }),
  page_size: Type.Integer({ minimum: 1, examples: [50] }),
  accounts: Type.Array(Type.Object({
    user_id: Uuid('The account\'s uuid.'),
    username: Type.String({ examples: ['amina.otieno'] }),
    events: Type.Integer({ minimum: 1, description: 'Its audit entries that matched.', examples: [3] }),
    notices: Type.Object({ email: Type.Union([NoticeState, Type.Null()]), sms: Type.Union([NoticeState, Type.Null()]) }, { description: 'Its notices\' states (null: not notified).' }),
  })),
}, { title: 'BreachAffectedAccounts' });

export const ReportBody = Type.Object({
  reference: text(200, 'The authority\'s reference for the notification.', 'ODPC-2026-00417'),
  reported_at: Type.Optional(Type.String({ ...ISO, description: 'When the authority was notified (default: now); not before `aware_at`, not in the future.', examples: ['2026-03-03T16:00:00Z'] })),
}, { additionalProperties: false, title: 'BreachReportRequest', examples: [{ reference: 'ODPC-2026-00417', reported_at: '2026-03-03T16:00:00Z' }] });

export const CloseBody = Type.Object({
  note: text(4000, 'Why it is closed; when it was never reported, why notifying the authority was not required (unlikely to result in a risk to people).', 'Investigation complete; all measures in place.'),
}, { additionalProperties: false, title: 'BreachCloseRequest', examples: [{ note: 'Investigation complete; all measures in place.' }] });

export const IdParams = Type.Object({ id: Uuid('The breach\'s id.') });
