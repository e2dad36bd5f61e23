/** What `strongroom roles ...` does (the rest of the CLI: commands.ts). Output for people, on stdout. */
import type { Registry } from '../app.js';
import type { RoleView } from '../roles/store.js';
import type { Who } from '../sessions/guard.js';
import type { RolesCommand } from './roles-args.js';
import type { Print } from './usage.js';

function describeRole(print: Print, r: RoleView, descriptions: Map<string, string>): void {
  print(`${r.name}${r.builtIn ? ' (built in: cannot be deleted, its permissions cannot change)' : ''}`);
  print(`  description: ${r.description}`);
  print(`  holders:     ${r.holders} user${r.holders === 1 ? '' : 's'}`);
  print(r.permissions.length === 0 ? '  permissions: (none)' : '  permissions:');
  for (const p of r.permissions) print(`    ${p.padEnd(26)} ${descriptions.get(p) ?? ''}`);
}

/** Rows as aligned columns, the first row the header; the last column is not padded. */
export function table(print: Print, rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) print(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

export async function runRoles(s: Registry, cmd: RolesCommand, print: Print, who: Who): Promise<void> {
  const admin = s.roleAdmin;
  const descriptions = async () => new Map((await admin.permissionsList()).map((p) => [p.name, p.description]));
  switch (cmd.name) {
    case 'roles list': {
      const roles = await admin.list();
      table(print, [['NAME', 'BUILT-IN', 'HOLDERS', 'PERMISSIONS', 'DESCRIPTION'], ...roles.map((r) => [r.name, r.builtIn ? 'yes' : 'no', String(r.holders), String(r.permissions.length), r.description])]);
      print();
      print('strongroom roles show NAME lists a role\'s permissions; strongroom roles permissions lists them all.');
      return;
    }
    case 'roles permissions': {
      const permissions = await admin.permissionsList();
      table(print, [['PERMISSION', 'ALLOWS', 'ROLES'], ...permissions.map((p) => [p.name, p.description, p.roles.join(', ')])]);
      return;
    }
    case 'roles show':
      return describeRole(print, await admin.get(cmd.role), await descriptions());
    case 'roles create': {
      const role = await admin.create({ name: cmd.role, description: cmd.description, permissions: cmd.permissions }, who);
      print(`Created role "${role.name}". Give it to users through their roles (the user administration routes or commands).`);
      return describeRole(print, role, await descriptions());
    }
    case 'roles update': {
      const { role, usersSignedOut } = await admin.update(cmd.role, { description: cmd.description, permissions: cmd.permissions, add: cmd.add, remove: cmd.remove }, who);
      print(`Updated role "${role.name}".${usersSignedOut > 0 ? ` ${usersSignedOut} holder${usersSignedOut === 1 ? ' lost a permission and was' : 's lost a permission and were'} signed out.` : ''}`);
      return describeRole(print, role, await descriptions());
    }
    case 'roles delete': {
      const role = await admin.delete(cmd.role, who);
      print(`Deleted role "${role.name}" (it granted: ${role.permissions.join(', ') || 'nothing'}).`);
      return;
    }
  }
}
