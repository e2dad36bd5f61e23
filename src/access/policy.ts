/**
 * One access policy: the rules a channel (narrowed to a role, or not) imposes on a sign-in,
 * as an administrator writes them, and their compiled form that each check evaluates.
 *
 * A sign-in on a channel must satisfy every enabled policy of that channel that applies to the
 * user (no role, or a role the user holds): policies only ever add restrictions, so a role
 * policy narrows the channel's. Rules are checked in a fixed order and the first one broken is
 * the answer: `channel` (the channel is closed to these users), `ip`, `schedule`, `device` (the
 * device is not one an administrator bound to the user), `geofence`.
 */
import { compileCidrs, ipAllowed, type CidrSet } from './rules/ip.js';
import { compileGeofences, locationCheck, type CompiledGeofences, type Geofence, type LocationFix } from './rules/geo.js';
import { compileSchedule, scheduleAllows, type CompiledSchedule, type ScheduleWindow } from './rules/schedule.js';
import { InvalidRuleError } from './rules/errors.js';

export const CHANNELS = ['web', 'mobile', 'ussd', 'agent'] as const;
export type Channel = (typeof CHANNELS)[number];

/** The rule a refused sign-in broke (`details.rule` of 403 POLICY_RESTRICTED). */
export type PolicyRule = 'channel' | 'ip' | 'schedule' | 'device' | 'geofence' | 'factor';

/** Second factors a policy may name (`backup_code` goes with `totp`; `passkey` covers a passwordless passkey sign-in too). */
export const FACTOR_METHODS = ['totp', 'email', 'sms', 'push', 'passkey'] as const;
export type FactorMethod = (typeof FACTOR_METHODS)[number];

/** A location is refused when its accuracy is worse than this, unless the policy says otherwise. */
export const DEFAULT_MAX_ACCURACY_M = 100;

/** The rules document of a policy (`access_policies.rules`), every part optional. */
export interface PolicyRules {
  /** false: users this policy covers may not sign in on the channel at all. */
  allow_channel?: boolean;
  /** CIDR blocks (IPv4 and IPv6) the client address must be in (`allow`) or not in (`deny`; deny wins). */
  ip?: { allow?: string[]; deny?: string[] };
  /** Windows of local time when sign-in is allowed (any window). */
  schedule?: ScheduleWindow[];
  /** true: the users covered must pass a second factor on this channel (enrolling one first if they have none). */
  require_second_factor?: boolean;
  /** The second factors that count on this channel (implies require_second_factor): say `["totp"]` for agents, never a code by SMS. */
  second_factor_methods?: FactorMethod[];
  /** true: only devices an administrator has bound to the user (src/access/devices.ts) may be used. */
  require_bound_device?: boolean;
  /** Areas the sign-in's reported location must lie in (any area); no location: refused. */
  geofences?: Geofence[];
  /** Worst location accuracy accepted, metres (default 100). */
  max_location_accuracy_m?: number;
  /**
   * Failed sign-ins before a lock on this channel (default MAX_LOGIN_ATTEMPTS), and the lock's
   * length (default ACCOUNT_LOCKOUT_MINUTES). Channel-wide only (no `role`): they apply before
   * the account is known, and an unknown name must lock exactly like a known one.
   */
  max_failed_attempts?: number;
  lockout_minutes?: number;
  /** A session opened on this channel ends after this long without a request (default SESSION_INACTIVITY_MINUTES). */
  session_inactivity_minutes?: number;
  /** Sessions a user may hold on this channel at once; a new sign-in ends the oldest beyond it (MAX_CONCURRENT_SESSIONS still bounds all channels together). */
  max_concurrent_sessions?: number;
}

/** The limits a policy sets; absent: the server's setting. */
export interface PolicyLimits {
  readonly maxFailedAttempts?: number;
  readonly lockoutMinutes?: number;
  readonly inactivitySec?: number;
  readonly maxConcurrentSessions?: number;
}

export interface CompiledPolicy {
  /** The policy's public id (the uuid), as audit entries name it. */
  readonly id: string;
  readonly channel: Channel;
  readonly role: string | null;
  readonly allowChannel: boolean;
  readonly ip: { allow?: CidrSet; deny?: CidrSet } | null;
  readonly schedule: CompiledSchedule | null;
  readonly requireBoundDevice: boolean;
  readonly requireSecondFactor: boolean;
  /** The factors that count; null: any. */
  readonly factorMethods: readonly FactorMethod[] | null;
  readonly geofences: CompiledGeofences | null;
  readonly maxAccuracyM: number;
  readonly limits: PolicyLimits;
}

/** What a check knows of the request. */
export interface AccessRequest {
  ip: string;
  now: number;
  /** Whether the request's device is bound to the user; asked only when a policy requires it. */
  deviceBound: boolean;
  /** The reported location; `'not_checked'` skips geofences (a check that has no location to look at: see the engine). */
  location: LocationFix | undefined | 'not_checked';
}

const RULE_KEYS = [
  'allow_channel', 'ip', 'schedule', 'require_bound_device', 'require_second_factor', 'second_factor_methods', 'geofences', 'max_location_accuracy_m',
  'max_failed_attempts', 'lockout_minutes', 'session_inactivity_minutes', 'max_concurrent_sessions',
];

/** A whole number in [min, max], or undefined when absent; `InvalidRuleError` otherwise. */
function count(rules: PolicyRules, key: 'max_failed_attempts' | 'lockout_minutes' | 'session_inactivity_minutes' | 'max_concurrent_sessions', min: number, max: number): number | undefined {
  const v = rules[key];
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min || v > max) throw new InvalidRuleError(`rules.${key}`, `must be a whole number from ${min} to ${max}`);
  return v;
}

function compileLimits(rules: PolicyRules, role: string | null): PolicyLimits {
  const maxFailedAttempts = count(rules, 'max_failed_attempts', 1, 100);
  const lockoutMinutes = count(rules, 'lockout_minutes', 1, 24 * 60);
  if (role !== null && (maxFailedAttempts !== undefined || lockoutMinutes !== undefined)) {
    throw new InvalidRuleError(maxFailedAttempts !== undefined ? 'rules.max_failed_attempts' : 'rules.lockout_minutes', 'applies to a whole channel: set it on a policy without a role (attempts are counted before the account is known, and an unknown name must lock like a known one)');
  }
  const inactivity = count(rules, 'session_inactivity_minutes', 1, 24 * 60);
  const maxConcurrentSessions = count(rules, 'max_concurrent_sessions', 1, 100);
  return {
    ...(maxFailedAttempts !== undefined ? { maxFailedAttempts } : {}),
    ...(lockoutMinutes !== undefined ? { lockoutMinutes } : {}),
    ...(inactivity !== undefined ? { inactivitySec: inactivity * 60 } : {}),
    ...(maxConcurrentSessions !== undefined ? { maxConcurrentSessions } : {}),
  };
}

function compileFactorMethods(methods: unknown): readonly FactorMethod[] | null {
  if (methods === undefined) return null;
  if (!Array.isArray(methods) || methods.length === 0 || methods.some((m) => !(FACTOR_METHODS as readonly unknown[]).includes(m)) || new Set(methods).size !== methods.length) {
    throw new InvalidRuleError('rules.second_factor_methods', `must list one or more of ${FACTOR_METHODS.join(', ')}, each once`);
  }
  return methods as FactorMethod[];
}

/** Compiles and validates a rules document; throws `InvalidRuleError` naming the field. */
export function compileRules(rules: PolicyRules, role: string | null = null): Omit<CompiledPolicy, 'id' | 'channel' | 'role'> {
  for (const key of Object.keys(rules)) if (!RULE_KEYS.includes(key)) throw new InvalidRuleError(`rules.${key}`, `is not a rule (${RULE_KEYS.join(', ')})`);
  const ip = rules.ip === undefined ? null : {
    ...(rules.ip.allow !== undefined ? { allow: compileCidrs(rules.ip.allow, 'rules.ip.allow') } : {}),
    ...(rules.ip.deny !== undefined ? { deny: compileCidrs(rules.ip.deny, 'rules.ip.deny') } : {}),
  };
  const accuracy = rules.max_location_accuracy_m ?? DEFAULT_MAX_ACCURACY_M;
  if (!Number.isFinite(accuracy) || accuracy <= 0 || accuracy > 10_000) throw new InvalidRuleError('rules.max_location_accuracy_m', 'must be a number of metres above 0 and at most 10000');
  return {
    allowChannel: rules.allow_channel ?? true,
    ip,
    schedule: rules.schedule === undefined ? null : compileSchedule(rules.schedule, 'rules.schedule'),
    requireBoundDevice: rules.require_bound_device ?? false,
    requireSecondFactor: (rules.require_second_factor ?? false) || rules.second_factor_methods !== undefined,
    factorMethods: compileFactorMethods(rules.second_factor_methods),
    geofences: rules.geofences === undefined ? null : compileGeofences(rules.geofences, 'rules.geofences'),
    maxAccuracyM: accuracy,
    limits: compileLimits(rules, role),
  };
}

/** The first rule of `p` the request breaks, or null. */
export function brokenRule(p: CompiledPolicy, r: AccessRequest): PolicyRule | null {
  if (!p.allowChannel) return 'channel';
  if (p.ip && !ipAllowed(p.ip, r.ip)) return 'ip';
  if (p.schedule && !scheduleAllows(p.schedule, r.now)) return 'schedule';
  if (p.requireBoundDevice && !r.deviceBound) return 'device';
  if (p.geofences && r.location !== 'not_checked' && locationCheck(p.geofences, r.location, p.maxAccuracyM) !== 'inside') return 'geofence';
  return null;
}

/** A policy that refuses everyone it covers: what a stored policy that no longer compiles becomes (fail closed). */
export function refuseAll(id: string, channel: Channel, role: string | null): CompiledPolicy {
  return { id, channel, role, allowChannel: false, ip: null, schedule: null, requireBoundDevice: false, requireSecondFactor: false, factorMethods: null, geofences: null, maxAccuracyM: DEFAULT_MAX_ACCURACY_M, limits: {} };
}
