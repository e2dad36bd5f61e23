/**
 * Roles and permissions under `/api/v1/admin/roles` and `/api/v1/admin/permissions`: read with
 * `roles.read`, change with `roles.manage`. A role is named by its name in the path: its stable
 * public id.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import { requestWho, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { RoleErrors } from './errors.js';
import { PERMISSION_NAME_PATTERN, ROLE_DESCRIPTION_MAX, ROLE_NAME_PATTERN, ROLE_NAME_RULE, ROLE_PERMISSIONS_MAX } from './rules.js';
import type { RoleService } from './service.js';
import type { PermissionView, RoleView } from './store.js';

export interface RoleRouteDeps {
  roles: RoleService;
  users: UserStore;
  guard: Guard;
}

const tags = ['Roles'];
const security = [{ bearer: [] }];

const TELLER = {
  name: 'teller.supervisor', description: 'Branch teller supervisor: reads users and unlocks accounts', built_in: false,
  permissions: ['users.read', 'users.update'], holders: 3,
};

const RoleName = Type.String({ pattern: ROLE_NAME_PATTERN, description: ROLE_NAME_RULE, examples: ['teller.supervisor'] });
const Description = Type.String({ minLength: 1, maxLength: ROLE_DESCRIPTION_MAX, pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$', description: 'What the role is for, for people: not blank.', examples: [TELLER.description] });
const PermissionNames = Type.Array(Type.String({ pattern: PERMISSION_NAME_PATTERN, maxLength: 64 }), {
  maxItems: ROLE_PERMISSIONS_MAX, uniqueItems: true,
  description: 'The whole set of permissions the role grants, by name (`GET /api/v1/admin/permissions` lists them).', examples: [TELLER.permissions],
});

const Role = Type.Object({
  name: Type.String({ description: 'The role\'s public id, used in paths and in users\' `roles`.', examples: [TELLER.name] }),
  description: Type.String({ examples: [TELLER.description] }),
  built_in: Type.Boolean({ description: 'Shipped with the service (admin, staff, customer, operator, agent): cannot be deleted, and its permissions cannot be changed.', examples: [false] }),
  permissions: Type.Array(Type.String(), { description: 'Sorted by name.', examples: [TELLER.permissions] }),
  holders: Type.Integer({ minimum: 0, description: 'How many users hold the role (deleted accounts aside).', examples: [TELLER.holders] }),
}, { title: 'Role', description: 'A role and the permissions it grants.', examples: [TELLER] });

const RoleList = Type.Object({ roles: Type.Array(Role, { description: 'Sorted by name.' }) }, { title: 'RoleList', description: 'Every role.', examples: [{ roles: [TELLER] }] });

const Permission = Type.Object({
  name: Type.String({ examples: ['users.read'] }),
  description: Type.String({ description: 'What the permission allows.', examples: ['List and read users'] }),
  roles: Type.Array(Type.String(), { description: 'The roles that grant it, sorted.', examples: [['admin', 'teller.supervisor']] }),
}, { title: 'Permission', description: 'A permission and what it allows.' });
const PermissionList = Type.Object({ permissions: Type.Array(Permission, { description: 'Sorted by name.' }) }, {
  title: 'PermissionList', description: 'Every permission there is.',
  examples: [{ permissions: [{ name: 'users.read', description: 'List and read users', roles: ['admin', 'teller.supervisor'] }] }],
});

const CreateRole = Type.Object({ name: RoleName, description: Description, permissions: PermissionNames }, {
  additionalProperties: false, title: 'NewRole', description: 'A role to create.', examples: [{ name: TELLER.name, description: TELLER.description, permissions: TELLER.permissions }],
});
const ChangeRole = Type.Object({ description: Type.Optional(Description), permissions: Type.Optional(PermissionNames) }, {
  additionalProperties: false, minProperties: 1, title: 'RoleChange', description: 'Either or both fields; `permissions` replaces the whole set.',
  examples: [{ permissions: ['users.read'] }, { description: 'Branch teller supervisor' }],
});
const RoleChanged = Type.Object({
  role: Role,
  users_signed_out: Type.Integer({ minimum: 0, description: 'Holders whose sessions ended because they lost a permission (they hold it through no other role).', examples: [3] }),
}, { title: 'RoleChanged', description: 'The role as changed, and who was signed out.', examples: [{ role: { ...TELLER, permissions: ['users.read'] }, users_signed_out: 3 }] });
const RoleDeleted = Type.Object({ status: Type.Literal('deleted'), role: Role }, {
  title: 'RoleDeleted', description: 'The role as it was.', examples: [{ status: 'deleted', role: { ...TELLER, holders: 0 } }],
});
const NameParams = Type.Object({ name: Type.String({ maxLength: 64, pattern: NO_NUL, description: 'The role\'s name.', examples: [TELLER.name] }) });

const presentRole = (r: RoleView) => ({ name: r.name, description: r.description, built_in: r.builtIn, permissions: r.permissions, holders: r.holders });
const presentPermission = (p: PermissionView) => ({ name: p.name, description: p.description, roles: p.roles });

const TOKENS_TEXT = 'A permission the role gains reaches its holders at their next token refresh or sign-in; a permission it loses ends at once every session of each holder who no longer holds it through another role (`users_signed_out`).';

export function roleRoutes(s: RoleRouteDeps): FastifyPluginAsync {
  const read = s.guard.requirePermission('roles.read');
  const manage = s.guard.requirePermission('roles.manage');
  return async (instance) => {
    const app = instance as unknown as App;

    app.get('/api/v1/admin/roles', {
      schema: { tags, security, summary: 'List roles with their permissions (permission roles.read)', response: { 200: RoleList } },
      onRequest: read,
    }, async () => ({ roles: (await s.roles.list()).map(presentRole) }));

    app.get('/api/v1/admin/roles/:name', {
      schema: { tags, security, summary: 'Read a role (permission roles.read)', description: '`404 ROLE_NOT_FOUND` for a name no role has.', params: NameParams, response: { 200: Role, ...errors(RoleErrors.ROLE_NOT_FOUND) } },
      onRequest: read,
    }, async (request) => presentRole(await s.roles.get(request.params.name)));

    app.get('/api/v1/admin/permissions', {
      schema: { tags, security, summary: 'List permissions and what each allows (permission roles.read)', response: { 200: PermissionList } },
      onRequest: read,
    }, async () => ({ permissions: (await s.roles.permissionsList()).map(presentPermission) }));

    app.post('/api/v1/admin/roles', {
      schema: {
        tags, security, summary: 'Create a role from permissions (permission roles.manage)',
        description: `Audited as ROLE_CREATED. \`409 ROLE_EXISTS\` when the name is taken; \`422 UNKNOWN_PERMISSION\` names the permissions that do not exist (\`details.unknown_permissions\`); \`403 PERMISSION_NOT_HELD\` when it would grant a permission you do not hold yourself (\`details.permissions\`). Assign it to users with the user routes.`,
        body: CreateRole,
        response: { 201: Role, ...errors(RoleErrors.ROLE_EXISTS, RoleErrors.UNKNOWN_PERMISSION, RoleErrors.PERMISSION_NOT_HELD) },
      },
      onRequest: manage,
    }, async (request, reply) => {
      const b = request.body;
      const role = await s.roles.create({ name: b.name, description: b.description.trim(), permissions: b.permissions }, await requestWho(request, s.users));
      return reply.status(201).send(presentRole(role));
    });

    app.patch('/api/v1/admin/roles/:name', {
      schema: {
        tags, security, summary: 'Change a role\'s description or permissions (permission roles.manage)',
        description: `Audited as ROLE_UPDATED. ${TOKENS_TEXT} \`409 ROLE_BUILT_IN\` for the permissions of a built-in role (its description may change); \`403 PERMISSION_NOT_HELD\` when it would add a permission you do not hold; \`422 UNKNOWN_PERMISSION\`; \`404 ROLE_NOT_FOUND\`.`,
        params: NameParams, body: ChangeRole,
        response: { 200: RoleChanged, ...errors(RoleErrors.ROLE_NOT_FOUND, RoleErrors.ROLE_BUILT_IN, RoleErrors.UNKNOWN_PERMISSION, RoleErrors.PERMISSION_NOT_HELD) },
      },
      onRequest: manage,
    }, async (request) => {
      const b = request.body;
      const r = await s.roles.update(request.params.name, { description: b.description?.trim(), permissions: b.permissions }, await requestWho(request, s.users));
      return { role: presentRole(r.role), users_signed_out: r.usersSignedOut };
    });

    app.delete('/api/v1/admin/roles/:name', {
      schema: {
        tags, security, summary: 'Delete a role (permission roles.manage)',
        description: 'Audited as ROLE_DELETED. `409 ROLE_BUILT_IN` for a built-in role; `409 ROLE_IN_USE` while users hold it (`details.holders`; a deleted account does not count, and loses the role with it) or a setting names it (`details.references`: access policies, channel access rules, LDAP group mappings), since a name left there would apply to any later role of that name; `404 ROLE_NOT_FOUND`.',
        params: NameParams,
        response: { 200: RoleDeleted, ...errors(RoleErrors.ROLE_NOT_FOUND, RoleErrors.ROLE_BUILT_IN, RoleErrors.ROLE_IN_USE) },
      },
      onRequest: manage,
    }, async (request) => {
      const role = await s.roles.delete(request.params.name, await requestWho(request, s.users));
      return { status: 'deleted' as const, role: presentRole(role) };
    });
  };
}
