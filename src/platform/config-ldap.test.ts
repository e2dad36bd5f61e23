import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { LDAP_POOL_SIZE, readLdapEnv } from './config-ldap.js';

const read = (env: Record<string, string>, production = false) => {
  const problems: string[] = [];
  return { settings: readLdapEnv((n) => env[n], problems, production), problems };
};
const BASE = { LDAP_BIND_DN: 'cn=svc,dc=bank', LDAP_BIND_PASSWORD: 'pw', LDAP_BASE_DN: 'dc=bank' };

describe('LDAP_* variables', () => {
  it('are off without LDAP_URI or LDAP_SERVER, and build the URI from LDAP_SERVER and LDAP_PORT', () => {
    expect(read({}).settings).toBeUndefined();
    expect(read({ ...BASE, LDAP_SERVER: 'ldap.bank.example', LDAP_PORT: '3389' }).settings?.uri).toBe('ldap://ldap.bank.example:3389');
  });

  it('take SPEC\'s defaults for the filter and attributes, and a JSON group map', () => {
    const { settings, problems } = read({ ...BASE, LDAP_URI: 'ldaps://ldap.bank.example', LDAP_GROUP_ROLES: '{"tellers":["staff"]}' });
    expect(problems).toEqual([]);
    expect(settings).toMatchObject({ userFilter: '(uid={username})', attrMail: 'mail', attrName: 'cn', groupMemberAttr: 'memberOf', startTls: false, groupRoles: { tellers: ['staff'] } });
  });

  it('name each problem: a bad URI, a filter without {username}, a group map that is not JSON, missing bind settings, plain ldap:// in production', () => {
    expect(read({ LDAP_URI: 'http://x', LDAP_USER_FILTER: '(uid=x)', LDAP_GROUP_ROLES: 'tellers=staff' }).problems).toEqual([
      expect.stringContaining('LDAP_USER_FILTER must contain'), expect.stringContaining('LDAP_GROUP_ROLES must be'),
      expect.stringContaining('LDAP_BIND_DN, LDAP_BIND_PASSWORD, LDAP_BASE_DN'), expect.stringContaining('LDAP_URI must be ldap:// or ldaps://'),
    ]);
    expect(read({ ...BASE, LDAP_URI: 'ldap://ldap.bank.example' }, true).problems).toEqual([expect.stringContaining('LDAP_URI plain ldap:// would send the bind password in clear')]);
    expect(read({ ...BASE, LDAP_URI: 'ldaps://ldap.bank.example', LDAP_START_TLS: '1' }).problems).toEqual([expect.stringContaining('LDAP_START_TLS is for ldap://')]);
    expect(read({ ...BASE, LDAP_URI: 'ldap://ldap.bank.example', LDAP_START_TLS: '1' }, true).problems).toEqual([]);
  });
});

describe('LDAP_POOL_SIZE', () => {
  it('defaults to 4 connections, takes 1 to 64, and refuses anything else naming the variable', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).ldap.poolSize).toBe(LDAP_POOL_SIZE.default);
    expect(LDAP_POOL_SIZE.default).toBe(4);
    expect(loadConfig({ NODE_ENV: 'test', LDAP_POOL_SIZE: '1' }).ldap.poolSize).toBe(1);
    expect(loadConfig({ NODE_ENV: 'test', LDAP_POOL_SIZE: '64' }).ldap.poolSize).toBe(64);
    for (const bad of ['0', '65', 'four', '2.5']) expect(() => loadConfig({ NODE_ENV: 'test', LDAP_POOL_SIZE: bad })).toThrow(/LDAP_POOL_SIZE/);
  });
});
