/** The administration answers' user: named by its uuid (`id`), with roles, branches and state. */
import Type from 'typebox';
import { USER_UUID_EXAMPLE } from '../users/public-id.js';
import type { DirectoryUser } from './user-directory.js';

export const ISO = { format: 'date-time' } as const;
export const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const USER_STATUS_TEXT = '`active`; `disabled` (cannot sign in; an administrator may enable it again); `locked` (active, but the password or the PIN is locked after failed attempts until `locked_until`; `POST .../unlock` clears it); `deleted` (soft-deleted: disabled for good, kept for the audit trail).';

export const UserStatusSchema = Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('locked'), Type.Literal('deleted')], { description: USER_STATUS_TEXT, examples: ['active'] });

export const AdminUser = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The user\'s one public id (a uuid): what every route that names a user takes.', examples: [USER_UUID_EXAMPLE] }),
  uuid: Type.String({ format: 'uuid', deprecated: true, description: 'Deprecated: the same value as `id`; read `id`.', examples: [USER_UUID_EXAMPLE] }),
  username: Type.String({ examples: ['amina.otieno'] }),
  email: Nullable(Type.String({ examples: ['amina@bank.example'] })),
  phone: Nullable(Type.String({ examples: ['+254700000012'] })),
  full_name: Nullable(Type.String({ examples: ['Amina Otieno'] })),
  language: Nullable(Type.String({ description: 'The language of the user\'s notifications (`en`, `pt`, `fr`); null: en.', examples: ['en'] })),
  roles: Type.Array(Type.String(), { examples: [['staff']] }),
  entities: Type.Array(Type.String(), { description: 'The codes of the user\'s branches.', examples: [['NBO-001']] }),
  status: UserStatusSchema,
  is_active: Type.Boolean({ description: 'False when disabled or deleted: the account cannot sign in.' }),
  is_service_account: Type.Boolean(),
  must_change_password: Type.Boolean(),
  locked_until: Nullable(Type.String({ ...ISO, description: 'Until when the password or the PIN is locked after failed attempts; null: not locked.' })),
  last_login_at: Nullable(Type.String(ISO)),
  created_at: Type.String(ISO),
  updated_at: Type.String(ISO),
  deleted_at: Nullable(Type.String({ ...ISO, description: 'When the account was deleted; null: not deleted.' })),
}, { title: 'AdminUser', description: 'A user as administrators see it.' });

export const ADMIN_USER_EXAMPLE = {
  id: USER_UUID_EXAMPLE, uuid: USER_UUID_EXAMPLE, username: 'amina.otieno', email: 'amina@bank.example', phone: '+254700000012', full_name: 'Amina Otieno', language: 'en',
  roles: ['staff'], entities: ['NBO-001'], status: 'active', is_active: true, is_service_account: false, must_change_password: false, locked_until: null,
  last_login_at: '2026-11-20T08:15:00.000Z', created_at: '2026-01-15T09:00:00.000Z', updated_at: '2026-11-20T08:15:00.000Z', deleted_at: null,
} as const;

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The answer's user: the uuid as `id`; the internal integer never leaves the service. */
export function presentUser(u: DirectoryUser) {
  return {
    id: u.uuid, uuid: u.uuid, username: u.username, email: u.email, phone: u.phone, full_name: u.full_name, language: u.language,
    roles: u.roles, entities: u.entities, status: u.status, is_active: u.is_active, is_service_account: u.is_service_account,
    must_change_password: u.must_change_password, locked_until: iso(u.locked_until), last_login_at: iso(u.last_login_at),
    created_at: iso(u.created_at)!, updated_at: iso(u.updated_at)!, deleted_at: iso(u.deleted_at),
  };
}
