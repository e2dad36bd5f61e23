/** The profile routes' bodies and answers. */
import Type from 'typebox';
import { NO_NUL } from '../../platform/http/schemas.js';
import { USER_UUID_EXAMPLE } from '../../users/public-id.js';
import { EMAIL_MAX_LENGTH, PHONE_PATTERN } from '../../users/rules.js';
import type { IdentityProviderType } from '../../credentials/external.js';
import type { Profile } from './store.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Language = Type.Union([Type.Literal('en'), Type.Literal('pt'), Type.Literal('fr')], { description: 'The language of your notifications: `en`, `pt` or `fr`.', examples: ['pt'] });
const Kind = Type.Union([Type.Literal('email'), Type.Literal('phone')], { description: '`email` or `phone`.', examples: ['email'] });

const PendingChange = Type.Object({
  kind: Kind,
  destination: Type.String({ description: 'The new address, masked: it is not known to be yours until its code is entered.', examples: ['n***@bank.example'] }),
  requested_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time', description: 'After this the code no longer works: ask again.' }),
});

export const ProfileView = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Your account\'s id.', examples: [USER_UUID_EXAMPLE] }),
  username: Type.String({ description: 'Not changeable here.', examples: ['amina.otieno'] }),
  full_name: Nullable(Type.String({ examples: ['Amina Otieno'] })),
  email: Nullable(Type.String({ examples: ['amina@bank.example'] })),
  phone: Nullable(Type.String({ description: 'E.164.', examples: ['+254700000012'] })),
  language: Language,
  date_of_birth: Nullable(Type.String({ format: 'date', examples: ['1988-04-17'] })),
  managed_by: Type.Union([Type.Literal('LDAP'), Type.Literal('SAML'), Type.Null()], { description: 'A directory (LDAP) or identity-provider (SAML) account: name, email and phone are the provider\'s, and only language and date of birth change here. null: a local account.', examples: [null] }),
  pending_contact_changes: Type.Array(PendingChange, { description: 'New addresses waiting for their code (at most one per kind).' }),
}, { title: 'Profile', description: 'Your own profile.' });

export const PROFILE_EXAMPLE = {
  id: USER_UUID_EXAMPLE, username: 'amina.otieno', full_name: 'Amina Otieno', email: 'amina@bank.example', phone: '+254700000012', language: 'en',
  date_of_birth: '1988-04-17', managed_by: null, pending_contact_changes: [{ kind: 'email', destination: 'n***@bank.example', requested_at: '2026-11-20T08:15:00.000Z', expires_at: '2026-11-20T08:20:00.000Z' }],
} as const;

export const ProfileRead = Type.Object({ profile: ProfileView }, { title: 'ProfileRead', examples: [{ profile: PROFILE_EXAMPLE }] });

export const ProfileUpdateBody = Type.Object({
  full_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'Changes at once.', examples: ['Amina W. Otieno'] })),
  language: Type.Optional(Language),
  date_of_birth: Type.Optional(Type.Union([Type.String({ format: 'date', description: 'ISO date `YYYY-MM-DD`, a real day between 1900-01-01 and today.' }), Type.Null()], { description: 'Changes at once; null clears it.', examples: ['1988-04-17'] })),
  email: Type.Optional(Type.String({ format: 'email', maxLength: EMAIL_MAX_LENGTH, description: 'Takes effect once the code sent to it is entered (POST /api/v1/auth/profile/verify-contact). Needs `current_password`.', examples: ['amina.new@bank.example'] })),
  phone: Type.Optional(Type.String({ pattern: PHONE_PATTERN, description: 'E.164. Takes effect once the code sent to it by text message is entered. Needs `current_password`.', examples: ['+254700000013'] })),
  current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Required with a new email or phone; counts toward the account lockout when wrong.', examples: ['Vt7#qLm2!xRp9$'] })),
}, {
  additionalProperties: false, minProperties: 1, title: 'ProfileUpdate', description: 'Any of the fields; an absent one stays as it is.',
  examples: [{ full_name: 'Amina W. Otieno', language: 'pt', date_of_birth: '1988-04-17' }, { email: 'amina.new@bank.example', current_password: 'Vt7#qLm2!xRp9$' }],
});

const Sent = Type.Object({
  kind: Kind,
  destination: Type.String({ description: 'Where the code went, masked.', examples: ['a***@bank.example'] }),
  expires_in: Type.Integer({ description: 'Seconds the code stays valid.', examples: [300] }),
  resend_after: Type.Integer({ description: 'Seconds before another code may be asked for this kind (by sending the change again).', examples: [60] }),
});

export const ProfileUpdated = Type.Object({
  profile: ProfileView,
  changed: Type.Array(Type.String(), { description: 'The fields changed at once (`full_name`, `language`, `date_of_birth`); a field sent with its current value is not listed.', examples: [['language']] }),
  codes_sent: Type.Array(Sent, { description: 'A code sent to each new address; the change takes effect when it is entered.' }),
}, { title: 'ProfileUpdated', examples: [{ profile: PROFILE_EXAMPLE, changed: ['language'], codes_sent: [{ kind: 'email', destination: 'n***@bank.example', expires_in: 300, resend_after: 60 }] }] });

export const VerifyContactBody = Type.Object({
  kind: Kind,
  code: Type.String({ pattern: '^[0-9]{6}$', description: 'The 6 digits sent to the new address.', examples: ['042917'] }),
}, { additionalProperties: false, title: 'VerifyContact', examples: [{ kind: 'email', code: '042917' }] });

export const ContactVerified = Type.Object({
  profile: ProfileView,
  changed: Kind,
}, { title: 'ContactVerified', examples: [{ profile: { ...PROFILE_EXAMPLE, email: 'amina.new@bank.example', pending_contact_changes: [] }, changed: 'email' }] });

const iso = (d: Date): string => d.toISOString();

export function presentProfile(p: Profile, managedBy: IdentityProviderType | null) {
  const u = p.user;
  return {
    id: u.uuid, username: u.username, full_name: u.full_name, email: u.email, phone: u.phone, language: u.language ?? 'en' as const,
    date_of_birth: p.dateOfBirth, managed_by: managedBy,
    pending_contact_changes: p.pending.map((c) => ({ kind: c.kind, destination: c.destination, requested_at: iso(c.requested_at), expires_at: iso(c.expires_at) })),
  };
}

