/**
 * `/api/v1/admin/channels`: who may use each channel (permission `policies.manage`). Bodies are
 * docs/decisions.md "Who may use a channel".
 */
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { App } from '../platform/http/app.js';
import { NO_NUL } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { DEFAULT_CHANNEL_ROLES, type ChannelAccess, type ChannelAccessStore } from './channels.js';
import type { AccessPolicyAdmin } from './service.js';

const ISO = { format: 'date-time' } as const;
const ChannelName = Type.Union([Type.Literal('web'), Type.Literal('mobile'), Type.Literal('ussd'), Type.Literal('agent')], { examples: ['agent'] });
const AllowedRoles = Type.Union([
  Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL }), { minItems: 1, maxItems: 50, uniqueItems: true }),
  Type.Null(),
], { description: 'Holders of any of these roles may sign in and keep sessions on the channel; `null`: anyone.', examples: [['agent']] });

const ChannelView = Type.Object({
  channel: ChannelName,
  allowed_roles: AllowedRoles,
  default: Type.Boolean({ description: '`true`: the built-in default is in force (no administrator has set this channel).' }),
  default_allowed_roles: AllowedRoles,
  updated_at: Type.Union([Type.String(ISO), Type.Null()]),
  updated_by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The administrator who last set it.' }),
}, { examples: [{ channel: 'agent', allowed_roles: ['agent'], default: true, default_allowed_roles: ['agent'], updated_at: null, updated_by: null }] });

function present(c: ChannelAccess) {
  return {
    channel: c.channel, allowed_roles: c.allowedRoles === null ? null : [...c.allowedRoles], default: !c.configured,
    default_allowed_roles: DEFAULT_CHANNEL_ROLES[c.channel] === null ? null : [...DEFAULT_CHANNEL_ROLES[c.channel]!],
    updated_at: c.updatedAt?.toISOString() ?? null, updated_by: c.updatedBy,
  };
}

export interface ChannelRouteDeps {
  accessAdmin: AccessPolicyAdmin;
  channels: ChannelAccessStore;
  users: UserStore;
  guard: Guard;
}

export function registerChannelRoutes(instance: FastifyInstance, s: ChannelRouteDeps): void {
  const app = instance as unknown as App;
  const tags = ['Access policy'];
  const security = [{ bearer: [] }];
  const onRequest = s.guard.requirePermission('policies.manage');
  const HOW = 'Who may use a channel: its sign-ins (any route or identity provider that names the channel) and every request of its sessions. Anyone else is `403 POLICY_RESTRICTED` with `details.rule` `channel`, after the password and before any session is opened; after a change here, sessions whose users no longer qualify are refused from their next request. Requests are judged by the roles in their access token, refresh by the user\'s roles now: a user who loses a role is refused at the latest when their access token expires (`ACCESS_TOKEN_EXPIRE_MINUTES`). By default the web, mobile and USSD channels are open to anyone and the agent channel to holders of `agent` only, so that nobody can sign in on the agent channel to escape the policies of their own. Access policies then narrow each channel further.';

  app.get('/api/v1/admin/channels', {
    schema: {
      tags, security, summary: 'Who may use each channel (permission policies.manage)', description: HOW,
      response: { 200: Type.Object({ channels: Type.Array(ChannelView) }) },
    },
    onRequest,
  }, async () => ({ channels: (await s.channels.list()).map(present) }));

  app.put('/api/v1/admin/channels/:channel', {
    schema: {
      tags, security, summary: 'Set who may use a channel (permission policies.manage)',
      description: `${HOW} The change is audited (\`CHANNEL_ACCESS_CHANGED\`, with what it replaced) and reaches every node at once. \`422 VALIDATION_ERROR\` (field \`allowed_roles\`): a role that does not exist, or a setting that would refuse the session you make it from. To go back to the default, set the default's value.`,
      params: Type.Object({ channel: ChannelName }),
      body: Type.Object({ allowed_roles: AllowedRoles }, { additionalProperties: false, examples: [{ allowed_roles: ['agent', 'operator'] }, { allowed_roles: null }] }),
      response: { 200: Type.Object({ channel: ChannelView }) },
    },
    onRequest,
  }, async (request) => {
    const auth = request.auth!;
    const after = await s.accessAdmin.setChannelRoles(
      request.params.channel, request.body.allowed_roles, { roles: auth.claims.roles, channel: auth.session.channel },
      await requestActor(request, s.users), requestAuditContext(request),
    );
    return { channel: present(after) };
  });
}
