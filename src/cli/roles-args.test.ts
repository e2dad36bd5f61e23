import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { UsageError, usage } from './usage.js';

describe('parseCommand: roles', () => {
  it('list, permissions, show and delete', () => {
    expect(parseCommand(['roles', 'list'])).toEqual({ name: 'roles list' });
    expect(parseCommand(['roles', 'permissions'])).toEqual({ name: 'roles permissions' });
    expect(parseCommand(['roles', 'show', 'teller.supervisor'])).toEqual({ name: 'roles show', role: 'teller.supervisor' });
    expect(parseCommand(['roles', 'delete', 'teller.supervisor'])).toEqual({ name: 'roles delete', role: 'teller.supervisor' });
    expect(parseCommand(['roles', '--help'])).toEqual({ name: 'help', topic: 'roles' });
    expect(parseCommand(['roles', 'create', '--help'])).toEqual({ name: 'help', topic: 'roles' });
    expect(parseCommand(['help', 'roles'])).toEqual({ name: 'help', topic: 'roles' });
  });

  it('create takes a name, a description and permissions, comma-separated or repeated', () => {
    expect(parseCommand(['roles', 'create', 'teller.supervisor', '--description', ' Teller supervisor ', '--permissions', 'users.read,users.update', '--permissions', 'audit.read'])).toEqual({
      name: 'roles create', role: 'teller.supervisor', description: 'Teller supervisor', permissions: ['users.read', 'users.update', 'audit.read'],
    });
    expect(parseCommand(['roles', 'create', 'empty.role', '--description', 'Nothing yet'])).toMatchObject({ permissions: [] });
  });

  it('update takes --description, --permissions, or --add/--remove', () => {
    expect(parseCommand(['roles', 'update', 'auditor', '--add', 'audit.read', '--remove', 'users.read'])).toEqual({ name: 'roles update', role: 'auditor', add: ['audit.read'], remove: ['users.read'] });
    expect(parseCommand(['roles', 'update', 'auditor', '--description', 'Auditors'])).toEqual({ name: 'roles update', role: 'auditor', description: 'Auditors' });
    expect(parseCommand(['roles', 'update', 'auditor', '--permissions', 'audit.read'])).toEqual({ name: 'roles update', role: 'auditor', permissions: ['audit.read'] });
  });

  it.each([
    [['roles'], 'needs a subcommand'],
    [['roles', 'grant'], 'Unknown roles subcommand'],
    [['roles', 'show'], 'needs the role\'s name'],
    [['roles', 'show', 'a.role', 'b.role'], 'takes one role name'],
    [['roles', 'list', 'admin'], 'takes no role name'],
    [['roles', 'create', 'Teller', '--description', 'x'], 'lower-case letters'],
    [['roles', 'create', 'teller'], '--description is required'],
    [['roles', 'create', 'teller', '--description', 'x', '--permissions', 'Users Read'], 'is not a permission name'],
    [['roles', 'update', 'teller'], 'needs --description, --permissions, --add or --remove'],
    [['roles', 'update', 'teller', '--permissions', 'a.b', '--add', 'c.d'], 'not both'],
    [['roles', 'delete', 'teller', '--force'], 'Unknown option'],
  ])('refuses %j with a usage error saying what to change', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });

  it('the usage names every roles subcommand', () => {
    for (const s of ['roles list', 'roles permissions', 'roles show', 'roles create', 'roles update', 'roles delete']) expect(usage()).toContain(s);
    expect(usage('roles')).toContain('--remove');
  });
});
