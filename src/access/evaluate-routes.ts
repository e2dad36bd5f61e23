/**
 * `POST /api/v1/admin/access-policies/evaluate`: "would this sign-in be allowed?" (permission
 * `policies.manage`; naming a user by `username` also needs `users.read`, or the tester would tell
 * a policies-only administrator whether an account exists and what roles it holds). The answer
 * is the engine's own (`AccessPolicyEngine.simulate`, the rules and order of the sign-in check,
 * on the policies in force on this node), for a request the administrator describes; nothing is
 * changed, recorded or audited, as for the other reads.
 */
import { isIP } from 'node:net';
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import { CommonErrors } from '../platform/errors.js';
import type { Clock } from '../platform/clock.js';
import type { App } from '../platform/http/app.js';
import { NO_NUL } from '../platform/http/schemas.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import type { AccessPolicyEngine } from './engine.js';
import { AccessErrors } from './errors.js';
import { CHANNELS, type PolicyRule } from './policy.js';
import type { PolicyRow } from './store.js';

const EvaluateBody = Type.Object({
  channel: Type.Union(CHANNELS.map((c) => Type.Literal(c)), { examples: ['agent'] }),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 254, pattern: NO_NUL, description: 'A user (username or email): their roles now are used (needs `users.read` besides `policies.manage`). Give this or `roles`, not both.', examples: ['amina.agent'] })),
  roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL }), { maxItems: 50, uniqueItems: true, description: 'The roles of the person signing in, when no user is named; absent with no `username`: a user holding no role.', examples: [['agent']] })),
  ip: Type.String({ minLength: 2, maxLength: 100, description: 'The client address, IPv4 or IPv6.', examples: ['203.0.113.9'] }),
  location: Type.Optional(Type.Object({
    latitude: Type.Number({ minimum: -90, maximum: 90, examples: [-1.2864] }),
    longitude: Type.Number({ minimum: -180, maximum: 180, examples: [36.8172] }),
    accuracy_m: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, default: 0, description: 'The reported accuracy, metres (default 0: the exact point).', examples: [20] })),
  }, { additionalProperties: false, description: 'The location the app reports; absent: none (a geofence refuses a sign-in without one).' })),
  at: Type.Optional(Type.String({ format: 'date-time', description: 'When the sign-in happens; absent: now.', examples: ['2026-11-23T09:00:00Z'] })),
  device_bound: Type.Optional(Type.Boolean({ default: false, description: 'Whether the device is one an administrator bound to the user (asked only by a policy that requires a bound device).' })),
}, { additionalProperties: false });

const EXAMPLE = { channel: 'agent', username: 'amina.agent', ip: '203.0.113.9', location: { latitude: -1.2864, longitude: 36.8172, accuracy_m: 20 }, at: '2026-11-23T09:00:00Z', device_bound: true };

const Verdict = Type.Object({
  allowed: Type.Boolean(),
  rule: Type.Union([Type.Literal('channel'), Type.Literal('ip'), Type.Literal('schedule'), Type.Literal('device'), Type.Literal('geofence'), Type.Null()], { description: 'The first rule broken (what a refused sign-in\'s `details.rule` says); null when allowed.' }),
  refusal: Type.Union([Type.Object({ status_code: Type.Literal(403), error_code: Type.Literal('POLICY_RESTRICTED') }), Type.Null()], { description: 'What the sign-in would be answered; null when allowed.' }),
  policy: Type.Union([Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), Type.Null()], { description: 'The policy that has the rule; null when allowed or refused by who may use the channel.' }),
  roles: Type.Array(Type.String(), { description: 'The roles judged.' }),
  second_factor: Type.Object({
    required: Type.Boolean({ description: 'Whether a policy covering these roles requires a second factor on the channel.' }),
    methods: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The factors that count there; null: any.' }),
  }),
  at: Type.String({ format: 'date-time' }),
}, { examples: [{ allowed: false, rule: 'ip', refusal: { status_code: 403, error_code: 'POLICY_RESTRICTED' }, policy: { id: 'c2a7e4b1-5d3f-4e8a-9b6c-1f0d2e3a4b5c', name: 'Agents: branch networks' }, roles: ['agent'], second_factor: { required: true, methods: ['totp'] }, at: '2026-11-23T09:00:00.000Z' }] });

export interface EvaluateRouteDeps {
  engine: AccessPolicyEngine;
  policyStore: { get(uuid: string): Promise<PolicyRow | undefined> };
  users: UserStore;
  guard: Guard;
  clock: Clock;
}

const invalid = (field: string, message: string) => CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field, message }] });

export function registerEvaluateRoute(instance: FastifyInstance, s: EvaluateRouteDeps): void {
  const app = instance as unknown as App;
  app.post('/api/v1/admin/access-policies/evaluate', {
    schema: {
      tags: ['Access policy'], security: [{ bearer: [] }],
      summary: 'Would this sign-in be allowed? (permission policies.manage)',
      description: 'Runs the sign-in\'s access-policy check (who may use the channel, then every enabled policy covering the roles: `channel`, `ip`, `schedule`, `device`, `geofence`) on a sign-in described here, and answers what the sign-in would be: allowed, or refused with `403 POLICY_RESTRICTED` and the rule, naming the policy that has it. Changes nothing and audits nothing. Other steps of a sign-in (the password, a lock, a risk decision) are not looked at. Naming a user by `username` (whose existence and roles the answer reveals) also requires `users.read`; `roles` given directly need nothing more. `403 PERMISSION_DENIED`: the caller lacks `policies.manage`, or gives a `username` without `users.read` (whatever the username, before any look-up). `422 VALIDATION_ERROR`: an address that is not IPv4 or IPv6, both `username` and `roles`, or a user that does not exist (field `username`).',
      body: { ...EvaluateBody, examples: [EXAMPLE] },
      response: { 200: Verdict },
    },
    onRequest: s.guard.requirePermission('policies.manage'),
  }, async (request) => {
    const b = request.body;
    // Naming a user reveals whether the account exists and its roles: that is reading users,
    // checked before anything else so every username is answered alike.
    if (b.username !== undefined && !request.auth!.claims.permissions.includes('users.read')) {
      throw CommonErrors.PERMISSION_DENIED({ required_permission: 'users.read' });
    }
    if (isIP(b.ip) === 0) throw invalid('ip', 'must be an IPv4 or IPv6 address such as 192.0.2.10 or 2001:db8::10');
    if (b.username !== undefined && b.roles !== undefined) throw invalid('roles', 'give a username or roles, not both');
    let roles = b.roles ?? [];
    if (b.username !== undefined) {
      const user = await s.users.findByLogin(b.username);
      if (!user) throw invalid('username', `no user is named ${JSON.stringify(b.username)}`);
      roles = (await s.users.grants(user.id)).roles;
    }
    const now = b.at === undefined ? s.clock.now() : Date.parse(b.at);
    const location = b.location ? { latitude: b.location.latitude, longitude: b.location.longitude, accuracy_m: b.location.accuracy_m ?? 0 } : undefined;
    const broken = await s.engine.simulate(b.channel, roles, { ip: b.ip, now, deviceBound: b.device_bound ?? false, location });
    const methods = s.engine.factorMethods(b.channel, roles);
    const policy = broken?.policyId ? await s.policyStore.get(broken.policyId) : undefined;
    return {
      allowed: broken === null,
      rule: broken ? broken.rule as Exclude<PolicyRule, 'factor'> /* decided later, at the second factor */ : null,
      refusal: broken ? { status_code: AccessErrors.POLICY_RESTRICTED.status as 403, error_code: 'POLICY_RESTRICTED' as const } : null,
      policy: broken?.policyId ? { id: broken.policyId, name: policy?.name ?? '' } : null,
      roles,
      second_factor: { required: s.engine.requiresSecondFactor(b.channel, roles), methods: methods ? [...methods] : null },
      at: new Date(now).toISOString(),
    };
  });
}
