/** Turns argv into one typed command (node:util parseArgs), or throws a UsageError. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isHelpTopic, UsageError, type HelpTopic } from './usage.js';
import { EMAIL_MAX_LENGTH, PHONE_PATTERN, USERNAME_PATTERN } from '../users/rules.js';
import { parseAudit, type AuditCommand } from './audit-args.js';
import { parseBench, type BenchSeedCommand } from './bench-seed-args.js';
import { parseGdpr, type GdprCommand } from './gdpr-args.js';
import { parsePasswords, type PasswordsCommand } from './passwords-args.js';
import { parseRoles, type RolesCommand } from './roles-args.js';
import { parseUserLifecycle, USER_LIFECYCLE_SUBCOMMANDS, type UserLifecycleCommand } from './users-args.js';

export type Command =
  | { name: 'help'; topic: HelpTopic }
  | { name: 'migrate' }
  | { name: 'rotate-keys' }
  | { name: 'rotate-field-key'; batchSize: number; checkOnly: boolean }
  | { name: 'rotate-transport-key'; revokePrevious: boolean }
  | { name: 'rotate-saml-sp-key' }
  | { name: 'create-admin'; username: string; email: string | null; passwordStdin: boolean }
  | { name: 'users create'; username: string; roles: string[]; email: string | null; phone: string | null; fullName: string | null; serviceAccount: boolean }
  | { name: 'users unlock'; username: string }
  | UserLifecycleCommand
  | { name: 'faq seed' }
  | RolesCommand
  | AuditCommand
  | BenchSeedCommand
  | GdprCommand
  | PasswordsCommand;

// The same rules as the admin API's request schema (src/users/rules.ts).
const USERNAME = new RegExp(USERNAME_PATTERN);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = new RegExp(PHONE_PATTERN);

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const HELP: Options = { help: { type: 'boolean', short: 'h' } };

function parse(args: string[], options: Options, topic: HelpTopic): Values | null {
  // A secret in argv is visible to every user of the machine (ps) and lands in shell history.
  if (args.some((a) => a === '--password' || a.startsWith('--password='))) {
    throw new UsageError('--password is not accepted: a password on the command line shows in process lists and shell history. Use --password-stdin or STRONGROOM_ADMIN_PASSWORD (create-admin).', topic);
  }
  try {
    const { values } = parseArgs({ args, options: { ...HELP, ...options }, strict: true, allowPositionals: false });
    return values.help ? null : (values as Values);
  } catch (err) {
    throw new UsageError((err as Error).message, topic);
  }
}

function str(v: Values, name: string, topic: HelpTopic, opts: { required?: boolean; pattern?: RegExp; what?: string; max?: number } = {}): string | null {
  const raw = v[name];
  const value = typeof raw === 'string' ? raw.trim() : undefined;
  if (value === undefined || value === '') {
    if (opts.required) throw new UsageError(`--${name} is required.`, topic);
    if (value === '') throw new UsageError(`--${name} must not be empty.`, topic);
    return null;
  }
  if (opts.pattern && !opts.pattern.test(value)) throw new UsageError(`--${name} must be ${opts.what} (got "${value}").`, topic);
  if (opts.max !== undefined && value.length > opts.max) throw new UsageError(`--${name} must be at most ${opts.max} characters.`, topic);
  return value;
}

const USERNAME_RULE = { required: true, pattern: USERNAME, what: '3 to 64 characters: letters, digits, ".", "_", "@", "-", starting with a letter or digit' };
const EMAIL_RULE = { pattern: EMAIL, what: 'an email address', max: EMAIL_MAX_LENGTH };

/** Other names of commands. */
const ALIASES: Record<string, string> = { reencrypt: 'rotate-field-key' };

export function parseCommand(argv: string[]): Command {
  const [given, ...rest] = argv;
  const first = given !== undefined && Object.hasOwn(ALIASES, given) ? ALIASES[given] : given;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    const named = first === 'help' ? rest.find((a) => !a.startsWith('-')) : undefined;
    const topic = named !== undefined && Object.hasOwn(ALIASES, named) ? ALIASES[named] : named;
    if (!topic) return { name: 'help', topic: 'main' };
    if (!isHelpTopic(topic)) throw new UsageError(`Unknown command "${topic}".`);
    return { name: 'help', topic };
  }
  switch (first) {
    case 'migrate':
    case 'rotate-keys':
    case 'rotate-saml-sp-key':
      return parse(rest, {}, first) ? { name: first } : { name: 'help', topic: first };
    case 'rotate-field-key': {
      const v = parse(rest, { 'batch-size': { type: 'string' }, check: { type: 'boolean' } }, first);
      if (!v) return { name: 'help', topic: first };
      const raw = str(v, 'batch-size', first, { pattern: /^[0-9]+$/, what: 'a whole number from 1 to 10000' });
      const batchSize = raw === null ? 200 : Number(raw);
      if (batchSize < 1 || batchSize > 10_000) throw new UsageError(`--batch-size must be a whole number from 1 to 10000 (got "${raw}").`, first);
      return { name: first, batchSize, checkOnly: v.check === true };
    }
    case 'rotate-transport-key': {
      const v = parse(rest, { 'revoke-previous': { type: 'boolean' } }, first);
      return v ? { name: first, revokePrevious: v['revoke-previous'] === true } : { name: 'help', topic: first };
    }
    case 'create-admin': {
      const v = parse(rest, { username: { type: 'string' }, email: { type: 'string' }, 'password-stdin': { type: 'boolean' } }, first);
      if (!v) return { name: 'help', topic: first };
      return { name: first, username: str(v, 'username', first, USERNAME_RULE)!, email: str(v, 'email', first, EMAIL_RULE), passwordStdin: v['password-stdin'] === true };
    }
    case 'users':
      return parseUsers(rest);
    case 'roles':
      return parseRoles(rest);
    case 'audit':
      return parseAudit(rest);
    case 'gdpr':
      return parseGdpr(rest);
    case 'bench':
      return parseBench(rest) ?? { name: 'help', topic: 'bench' };
    case 'passwords':
      return parsePasswords(rest);
    case 'faq': {
      const [sub, ...more] = rest;
      if (sub === undefined) throw new UsageError('faq needs a subcommand: seed.', 'faq');
      if (sub === '--help' || sub === '-h' || sub === 'help') return { name: 'help', topic: 'faq' };
      if (sub !== 'seed') throw new UsageError(`Unknown faq subcommand "${sub}": use seed.`, 'faq');
      return parse(more, {}, 'faq') ? { name: 'faq seed' } : { name: 'help', topic: 'faq' };
    }
    default:
      throw new UsageError(first.startsWith('-') ? `Unknown option "${first}": give a command first.` : `Unknown command "${first}".`);
  }
}

const USERS_SUBCOMMANDS = `create, unlock, ${USER_LIFECYCLE_SUBCOMMANDS.join(', ')}`;

function parseUsers(argv: string[]): Command {
  const [sub, ...rest] = argv;
  const topic = 'users';
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    if (sub === undefined) throw new UsageError(`users needs a subcommand: ${USERS_SUBCOMMANDS}.`, topic);
    return { name: 'help', topic };
  }
  if (sub === 'unlock') {
    const v = parse(rest, { username: { type: 'string' } }, topic);
    return v ? { name: 'users unlock', username: str(v, 'username', topic, { required: true })! } : { name: 'help', topic };
  }
  if (sub === 'create') {
    const v = parse(rest, {
      username: { type: 'string' }, roles: { type: 'string', multiple: true }, email: { type: 'string' }, phone: { type: 'string' },
      'full-name': { type: 'string' }, 'service-account': { type: 'boolean' },
    }, topic);
    if (!v) return { name: 'help', topic };
    const roles = [...new Set(((v.roles ?? []) as string[]).flatMap((r) => r.split(',')).map((r) => r.trim()).filter(Boolean))];
    if (roles.length === 0) throw new UsageError('--roles is required: one or more roles, comma-separated (e.g. --roles staff,operator).', topic);
    if (roles.length > 10) throw new UsageError('--roles takes at most 10 roles.', topic);
    return {
      name: 'users create',
      username: str(v, 'username', topic, USERNAME_RULE)!,
      roles,
      email: str(v, 'email', topic, EMAIL_RULE),
      phone: str(v, 'phone', topic, { pattern: PHONE, what: 'an E.164 number such as +254700000012' }),
      fullName: str(v, 'full-name', topic, { max: 200 }),
      serviceAccount: v['service-account'] === true,
    };
  }
  const lifecycle = USER_LIFECYCLE_SUBCOMMANDS.find((x) => x === sub);
  if (lifecycle) return parseUserLifecycle(lifecycle, rest) ?? { name: 'help', topic };
  throw new UsageError(`Unknown users subcommand "${sub}": use ${USERS_SUBCOMMANDS}.`, topic);
}
