/** `strongroom roles ...`: parses the role commands' arguments (the rest of the CLI: args.ts). */
import { parseArgs } from 'node:util';
import { PERMISSION_NAME_PATTERN, ROLE_DESCRIPTION_MAX, ROLE_NAME_PATTERN } from '../roles/rules.js';
import { UsageError } from './usage.js';

export type RolesCommand =
  | { name: 'roles list' }
  | { name: 'roles permissions' }
  | { name: 'roles show'; role: string }
  | { name: 'roles create'; role: string; description: string; permissions: string[] }
  | { name: 'roles update'; role: string; description?: string; permissions?: string[]; add?: string[]; remove?: string[] }
  | { name: 'roles delete'; role: string };

const TOPIC = 'roles';
const ROLE_NAME = new RegExp(ROLE_NAME_PATTERN);
const PERMISSION = new RegExp(PERMISSION_NAME_PATTERN);
const SUBCOMMANDS = 'list, permissions, show, create, update or delete';

type Parsed = { role: string | undefined; values: Record<string, string | boolean | string[] | undefined> } | null;

function parse(sub: string, args: string[], options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>): Parsed {
  try {
    const { values, positionals } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, ...options }, strict: true, allowPositionals: true });
    if (values.help) return null;
    if (positionals.length > 1) throw new UsageError(`roles ${sub} takes one role name (got ${positionals.length}: ${positionals.join(' ')}).`, TOPIC);
    return { role: positionals[0], values: values as Record<string, string | boolean | string[] | undefined> };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message, TOPIC);
  }
}

function roleName(sub: string, role: string | undefined, mustBeNew = false): string {
  if (role === undefined) throw new UsageError(`roles ${sub} needs the role's name, e.g. strongroom roles ${sub} teller.supervisor.`, TOPIC);
  if (mustBeNew && !ROLE_NAME.test(role)) throw new UsageError(`The role name must be 2 to 64 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter (got "${role}").`, TOPIC);
  return role;
}

/** A comma-separated (or repeated) list of permission names; undefined when the option is absent. */
function permissionList(values: Record<string, unknown>, option: string): string[] | undefined {
  const raw = values[option] as string[] | undefined;
  if (raw === undefined) return undefined;
  const names = [...new Set(raw.flatMap((r) => r.split(',')).map((r) => r.trim()).filter(Boolean))];
  const bad = names.filter((n) => !PERMISSION.test(n));
  if (bad.length > 0) throw new UsageError(`--${option}: ${bad.map((b) => `"${b}"`).join(', ')} is not a permission name (strongroom roles permissions lists them).`, TOPIC);
  return names;
}

function description(values: Record<string, unknown>, required: boolean): string | undefined {
  const raw = typeof values.description === 'string' ? values.description.trim() : undefined;
  if (raw === undefined && required) throw new UsageError('--description is required: what the role is for.', TOPIC);
  if (raw === '') throw new UsageError('--description must not be empty.', TOPIC);
  if (raw !== undefined && raw.length > ROLE_DESCRIPTION_MAX) throw new UsageError(`--description must be at most ${ROLE_DESCRIPTION_MAX} characters.`, TOPIC);
  return raw;
}

const LIST = { type: 'string', multiple: true } as const;

/** `argv`: what follows `roles`. */
export function parseRoles(argv: string[]): RolesCommand | { name: 'help'; topic: 'roles' } {
  const [sub, ...rest] = argv;
  const help = { name: 'help', topic: TOPIC } as const;
  if (sub === undefined) throw new UsageError(`roles needs a subcommand: ${SUBCOMMANDS}.`, TOPIC);
  if (sub === '--help' || sub === '-h' || sub === 'help') return help;
  switch (sub) {
    case 'list':
    case 'permissions': {
      const p = parse(sub, rest, {});
      if (p?.role !== undefined) throw new UsageError(`roles ${sub} takes no role name.`, TOPIC);
      return p ? { name: `roles ${sub}` } : help;
    }
    case 'show':
    case 'delete': {
      const p = parse(sub, rest, {});
      return p ? { name: `roles ${sub}`, role: roleName(sub, p.role) } : help;
    }
    case 'create': {
      const p = parse(sub, rest, { description: { type: 'string' }, permissions: LIST });
      if (!p) return help;
      return { name: 'roles create', role: roleName(sub, p.role, true), description: description(p.values, true)!, permissions: permissionList(p.values, 'permissions') ?? [] };
    }
    case 'update': {
      const p = parse(sub, rest, { description: { type: 'string' }, permissions: LIST, add: LIST, remove: LIST });
      if (!p) return help;
      const cmd = {
        name: 'roles update' as const, role: roleName(sub, p.role), description: description(p.values, false),
        permissions: permissionList(p.values, 'permissions'), add: permissionList(p.values, 'add'), remove: permissionList(p.values, 'remove'),
      };
      if (cmd.permissions !== undefined && (cmd.add !== undefined || cmd.remove !== undefined)) throw new UsageError('Give either --permissions (the whole set) or --add/--remove, not both.', TOPIC);
      if (cmd.description === undefined && cmd.permissions === undefined && cmd.add === undefined && cmd.remove === undefined) {
        throw new UsageError('roles update needs --description, --permissions, --add or --remove.', TOPIC);
      }
      return Object.fromEntries(Object.entries(cmd).filter(([, v]) => v !== undefined)) as Extract<RolesCommand, { name: 'roles update' }>;
    }
    default:
      throw new UsageError(`Unknown roles subcommand "${sub}": use ${SUBCOMMANDS}.`, TOPIC);
  }
}
