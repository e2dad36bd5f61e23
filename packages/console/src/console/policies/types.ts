/**
 * Access policies as the console reads and writes them (GET/POST/PUT/DELETE
 * /api/v1/admin/access-policies), the editor's state, and where the API's field errors go.
 */
import { StrongroomError } from '../../../../client/src/index.js';
import type { Geofence } from '../../../../../src/access/rules/geo.js';
import type { ScheduleWindow } from '../../../../../src/access/rules/schedule.js';

export type { Geofence };
export const POLICY_CHANNELS = ['web', 'mobile', 'ussd', 'agent'] as const;
export type PolicyChannel = (typeof POLICY_CHANNELS)[number];
/** The channels whose sign-ins report a location: geofences apply there only. */
export const LOCATED: readonly PolicyChannel[] = ['mobile', 'agent'];

export interface Policy {
  id: string;
  name: string;
  channel: PolicyChannel;
  role: string | null;
  enabled: boolean;
  rules: Record<string, unknown> & { ip?: { allow?: string[]; deny?: string[] }; schedule?: ScheduleWindow[]; geofences?: Geofence[] };
  created_at: string;
  updated_at: string;
}

export interface ChannelAccess {
  channel: PolicyChannel;
  allowed_roles: string[] | null;
  default: boolean;
}

/** The parts of a policy the editor has fields for; the other rules are kept as they were. */
export interface Draft {
  name: string;
  channel: PolicyChannel;
  role: string;
  enabled: boolean;
  allow: string;
  deny: string;
  schedule: ScheduleWindow[];
  geofences: Geofence[];
}

export function draftOf(p: Policy | null): Draft {
  return {
    name: p?.name ?? '', channel: p?.channel ?? 'web', role: p?.role ?? '', enabled: p?.enabled ?? true,
    allow: (p?.rules.ip?.allow ?? []).join('\n'), deny: (p?.rules.ip?.deny ?? []).join('\n'),
    schedule: p?.rules.schedule ?? [], geofences: p?.rules.geofences ?? [],
  };
}

/** The body of POST or PUT: the draft over the rules the editor does not show. */
export function bodyOf(d: Draft, allow: string[], deny: string[], before: Policy['rules'] = {}): Record<string, unknown> {
  const { ip: _ip, schedule: _schedule, geofences: _geofences, ...others } = before;
  const ip = { ...(allow.length ? { allow } : {}), ...(deny.length ? { deny } : {}) };
  return {
    name: d.name.trim(), channel: d.channel, role: d.role.trim() === '' ? null : d.role.trim(), enabled: d.enabled,
    rules: { ...others, ...(allow.length || deny.length ? { ip } : {}), ...(d.schedule.length ? { schedule: d.schedule } : {}), ...(d.geofences.length ? { geofences: d.geofences } : {}) },
  };
}

/** The editor's fields a 422's `details.fields` can name. */
export type FieldKey = 'name' | 'channel' | 'role' | 'allow' | 'deny' | 'schedule' | 'geofences' | 'other';

const FIELD_OF: ReadonlyArray<[RegExp, FieldKey]> = [
  [/^name\b/, 'name'], [/^channel\b/, 'channel'], [/^role\b/, 'role'], [/^rules\.ip\.allow\b/, 'allow'], [/^rules\.ip\.deny\b/, 'deny'],
  [/^rules\.schedule\b/, 'schedule'], [/^rules\.geofences\b/, 'geofences'],
];

/** A refusal's field errors by editor field (`other` for the rest), each `field: message` as the server wrote it. */
export function fieldErrors(err: unknown): Partial<Record<FieldKey, string>> {
  if (!(err instanceof StrongroomError) || !Array.isArray(err.details.fields)) return {};
  const out: Partial<Record<FieldKey, string>> = {};
  for (const f of err.details.fields as { field?: string; message?: string }[]) {
    const field = String(f.field ?? '');
    const key = FIELD_OF.find(([re]) => re.test(field))?.[1] ?? 'other';
    out[key] = [out[key], `${field}: ${f.message ?? ''}`].filter(Boolean).join('; ');
  }
  return out;
}
