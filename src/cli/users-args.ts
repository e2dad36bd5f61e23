/**
 * `strongroom users list|show|update|disable|enable|delete|sessions|end-sessions`: parses the
 * user lifecycle commands' arguments (`users create` and `users unlock`: args.ts). A user is
 * named by `--username` (a username or an email address) or `--id` (the uuid).
 */
import { parseArgs } from 'node:util';
import { EMAIL_MAX_LENGTH, PHONE_PATTERN } from '../users/rules.js';
import { UsageError } from './usage.js';

/** Who a command is about: a username (or email) or a uuid. */
export type UserRef = { username: string } | { uuid: string };

export type UserLifecycleCommand =
  | { name: 'users list'; search?: string; role?: string; entity?: string; status?: 'active' | 'disabled' | 'locked' | 'deleted'; limit: number; cursor?: string }
  | { name: 'users show'; user: UserRef }
  | { name: 'users update'; user: UserRef; change: { fullName?: string | null; email?: string | null; phone?: string | null; language?: 'en' | 'pt' | 'fr' | null; roles?: string[]; entities?: string[] } }
  | { name: 'users disable' | 'users enable' | 'users delete' | 'users sessions'; user: UserRef }
  | { name: 'users end-sessions'; user: UserRef; sessionId?: string };

export const USER_LIFECYCLE_SUBCOMMANDS = ['list', 'show', 'update', 'disable', 'enable', 'delete', 'sessions', 'end-sessions'] as const;

const TOPIC = 'users';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = new RegExp(PHONE_PATTERN);
const STATUSES = ['active', 'disabled', 'locked', 'deleted'] as const;
const LANGUAGES = ['en', 'pt', 'fr'] as const;

type Values = Record<string, string | boolean | string[] | undefined>;
type Spec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

const WHO: Spec = { username: { type: 'string' }, id: { type: 'string' } };

function parse(args: string[], options: Spec): Values | null {
  if (args.some((a) => a === '--password' || a.startsWith('--password='))) throw new UsageError('--password is not accepted here.', TOPIC);
  try {
    const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, ...options }, strict: true, allowPositionals: false });
    return values.help ? null : (values as Values);
  } catch (err) {
    throw new UsageError((err as Error).message, TOPIC);
  }
}

function text(v: Values, name: string): string | undefined {
  const raw = v[name];
  if (typeof raw !== 'string') return undefined;
  const value = raw.trim();
  if (value === '') throw new UsageError(`--${name} must not be empty.`, TOPIC);
  return value;
}

function userRef(sub: string, v: Values): UserRef {
  const username = text(v, 'username');
  const id = text(v, 'id');
  if ((username === undefined) === (id === undefined)) throw new UsageError(`users ${sub} needs the user: --username NAME (or email) or --id UUID, one of them.`, TOPIC);
  if (id !== undefined && !UUID.test(id)) throw new UsageError(`--id must be the user's uuid (the id printed by users list and users show), got "${id}".`, TOPIC);
  return id !== undefined ? { uuid: id.toLowerCase() } : { username: username! };
}

/** A comma-separated (or repeated) list; undefined when the option is absent. */
function list(v: Values, name: string): string[] | undefined {
  const raw = v[name] as string[] | undefined;
  return raw === undefined ? undefined : [...new Set(raw.flatMap((r) => r.split(',')).map((r) => r.trim()).filter(Boolean))];
}

function oneOf<T extends string>(v: Values, name: string, allowed: readonly T[]): T | undefined {
  const value = text(v, name);
  if (value !== undefined && !(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')} (got "${value}").`, TOPIC);
  return value as T | undefined;
}

function parseList(rest: string[]): UserLifecycleCommand | null {
  const v = parse(rest, { search: { type: 'string' }, role: { type: 'string' }, entity: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } });
  if (!v) return null;
  const rawLimit = text(v, 'limit');
  const limit = rawLimit === undefined ? 50 : Number(rawLimit);
  if (!/^[0-9]+$/.test(rawLimit ?? '50') || limit < 1 || limit > 200) throw new UsageError(`--limit must be a whole number from 1 to 200 (got "${rawLimit}").`, TOPIC);
  return { name: 'users list', search: text(v, 'search'), role: text(v, 'role'), entity: text(v, 'entity'), status: oneOf(v, 'status', STATUSES), limit, cursor: text(v, 'cursor') };
}

function parseUpdate(rest: string[]): UserLifecycleCommand | null {
  const v = parse(rest, {
    ...WHO, 'full-name': { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' }, language: { type: 'string' },
    roles: { type: 'string', multiple: true }, entities: { type: 'string', multiple: true }, clear: { type: 'string', multiple: true },
  });
  if (!v) return null;
  const change: Extract<UserLifecycleCommand, { name: 'users update' }>['change'] = {};
  const fullName = text(v, 'full-name');
  if (fullName !== undefined) change.fullName = fullName.length > 200 ? fail('--full-name must be at most 200 characters.') : fullName;
  const email = text(v, 'email');
  if (email !== undefined) change.email = EMAIL.test(email) && email.length <= EMAIL_MAX_LENGTH ? email : fail(`--email must be an email address (got "${email}").`);
  const phone = text(v, 'phone');
  if (phone !== undefined) change.phone = PHONE.test(phone) ? phone : fail(`--phone must be an E.164 number such as +254700000012 (got "${phone}").`);
  const language = oneOf(v, 'language', LANGUAGES);
  if (language !== undefined) change.language = language;
  const roles = list(v, 'roles');
  if (roles !== undefined) change.roles = roles.length === 0 || roles.length > 10 ? fail('--roles takes 1 to 10 roles, comma-separated.') : roles;
  const entities = list(v, 'entities');
  if (entities !== undefined) change.entities = entities;
  for (const field of list(v, 'clear') ?? []) {
    if (field === 'full-name') change.fullName = null;
    else if (field === 'email' || field === 'phone' || field === 'language') change[field] = null;
    else if (field === 'entities') change.entities = [];
    else fail(`--clear takes full-name, email, phone, language or entities (got "${field}").`);
  }
  if (Object.keys(change).length === 0) fail('users update needs a change: --full-name, --email, --phone, --language, --roles, --entities or --clear.');
  return { name: 'users update', user: userRef('update', v), change };
}

function fail(message: string): never {
  throw new UsageError(message, TOPIC);
}

/** `sub` is one of USER_LIFECYCLE_SUBCOMMANDS; `rest` what follows it. Null: help was asked for. */
export function parseUserLifecycle(sub: (typeof USER_LIFECYCLE_SUBCOMMANDS)[number], rest: string[]): UserLifecycleCommand | null {
  switch (sub) {
    case 'list':
      return parseList(rest);
    case 'update':
      return parseUpdate(rest);
    case 'end-sessions': {
      const v = parse(rest, { ...WHO, session: { type: 'string' } });
      if (!v) return null;
      const sessionId = text(v, 'session');
      if (sessionId !== undefined && !UUID.test(sessionId)) fail(`--session must be a session id (a uuid, as users sessions prints it), got "${sessionId}".`);
      return { name: 'users end-sessions', user: userRef(sub, v), sessionId };
    }
    default: {
      const v = parse(rest, WHO);
      return v ? { name: `users ${sub}`, user: userRef(sub, v) } : null;
    }
  }
}
