/**
 * `strongroom users list|show|update|disable|enable|delete|sessions|end-sessions`: the user
 * lifecycle as the API's administrators have it (src/admin/lifecycle.ts), with the same rules
 * and audit trail; the actor is the CLI and the operating-system account that ran it.
 */
import { AdminErrors } from '../admin/errors.js';
import type { DirectoryUser } from '../admin/user-directory.js';
import type { Registry } from '../app.js';
import type { Who } from '../sessions/guard.js';
import type { UserLifecycleCommand, UserRef } from './users-args.js';
import type { Print } from './usage.js';

const iso = (d: Date | string | null): string => (d === null ? '-' : new Date(d).toISOString());

/** `"username" (id <uuid>)`: users are named by their uuid, the one id the API takes. */
export function describe(u: { username: string; uuid: string }): string {
  return `"${u.username}" (id ${u.uuid})`;
}

async function uuidOf(s: Registry, ref: UserRef): Promise<string> {
  if ('uuid' in ref) return ref.uuid;
  const user = await s.users.findByLogin(ref.username);
  if (!user) throw AdminErrors.USER_NOT_FOUND({ username: ref.username });
  return user.uuid;
}

function printUser(print: Print, u: DirectoryUser): void {
  print(`${describe(u)}`);
  print(`  status:        ${u.status}${u.locked_until !== null ? ` (locked until ${iso(u.locked_until)})` : ''}`);
  print(`  full name:     ${u.full_name ?? '-'}`);
  print(`  email:         ${u.email ?? '-'}`);
  print(`  phone:         ${u.phone ?? '-'}`);
  print(`  language:      ${u.language ?? 'en (default)'}`);
  print(`  roles:         ${u.roles.join(', ') || '-'}`);
  print(`  branches:      ${u.entities.join(', ') || '-'}`);
  print(`  last sign-in:  ${iso(u.last_login_at)}`);
  print(`  created:       ${iso(u.created_at)}`);
  if (u.deleted_at !== null) print(`  deleted:       ${iso(u.deleted_at)}`);
}

async function list(s: Registry, cmd: Extract<UserLifecycleCommand, { name: 'users list' }>, print: Print): Promise<void> {
  const page = await s.userLifecycle.find({ search: cmd.search, role: cmd.role, entity: cmd.entity, status: cmd.status, cursor: cmd.cursor, limit: cmd.limit });
  if (page.users.length === 0) print('No users match.');
  for (const u of page.users) print(`${u.uuid}  ${u.username}  ${u.status}  roles: ${u.roles.join(',') || '-'}${u.entities.length > 0 ? `  branches: ${u.entities.join(',')}` : ''}`);
  if (page.nextCursor !== null) print(`More: run again with --cursor ${page.nextCursor}`);
}

async function sessions(s: Registry, ref: UserRef, print: Print): Promise<void> {
  const r = await s.userLifecycle.sessionsOf(await uuidOf(s, ref));
  if (r.sessions.length === 0) {
    print(`${describe(r.user)} has no active session.`);
    return;
  }
  print(`Active sessions of ${describe(r.user)}, oldest first:`);
  for (const x of r.sessions) print(`  ${x.sessionId}  ${x.channel}  since ${iso(new Date(x.createdAt))}  last activity ${iso(new Date(x.lastActivity))}  expires ${iso(new Date(x.expiresAt))}`);
}

/** Runs one lifecycle command. */
export async function runUserLifecycle(s: Registry, cmd: UserLifecycleCommand, print: Print, who: Who): Promise<void> {
  const life = s.userLifecycle;
  switch (cmd.name) {
    case 'users list':
      return list(s, cmd, print);
    case 'users show':
      return printUser(print, await life.get(await uuidOf(s, cmd.user)));
    case 'users sessions':
      return sessions(s, cmd.user, print);
    case 'users update': {
      const r = await life.update(await uuidOf(s, cmd.user), cmd.change, who);
      print(`Changed ${describe(r.user)}.${r.sessionsEnded > 0 ? ` Ended ${r.sessionsEnded} session(s): the roles changed.` : ''}`);
      return printUser(print, r.user);
    }
    case 'users disable':
    case 'users enable': {
      const r = await life.update(await uuidOf(s, cmd.user), { active: cmd.name === 'users enable' }, who);
      print(cmd.name === 'users enable' ? `Enabled ${describe(r.user)}: it can sign in again.` : `Disabled ${describe(r.user)}; ended ${r.sessionsEnded} session(s).`);
      return;
    }
    case 'users delete': {
      const r = await life.delete(await uuidOf(s, cmd.user), who);
      print(`Deleted ${describe(r.user)} (soft: disabled for good, kept for the audit trail); ended ${r.sessionsEnded} session(s).`);
      return;
    }
    case 'users end-sessions': {
      const uuid = await uuidOf(s, cmd.user);
      const ended = await life.endSessions(uuid, cmd.sessionId, who);
      print(`Ended ${ended.length} session(s) of ${describe(await life.get(uuid))}${ended.length > 0 ? `: ${ended.join(', ')}` : ''}.`);
    }
  }
}
