/**
 * The directory connection test's time budget (src/settings/ldap-test.ts): a server that accepts
 * StartTLS and then never does the handshake used to hold the request forever (ldapts limits the
 * extended request, not the handshake). Threat: an admin request, and its socket, hung by a
 * stalled directory. A tiny server here answers the StartTLS request with success (BER by hand,
 * as test/ldap/directory.test.ts does) and then says nothing; the configured timeout is short.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LdapSettings } from '../ldap/settings.js';
import { testDirectory } from './ldap-test.js';

const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer((socket) => {
    sockets.push(socket);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

const settings = (port: number): LdapSettings => ({
  uri: `ldap://127.0.0.1:${port}`, bindDn: 'cn=service,dc=example,dc=org', bindPassword: 'Service-Password-1', baseDn: 'dc=example,dc=org',
  userFilter: '(uid={username})', attrMail: 'mail', attrName: 'cn', groupMemberAttr: 'memberOf', startTls: true, caCert: undefined,
  groupRoles: {}, groupsBaseDn: undefined,
});

const outcomes = (steps: Array<{ step: string; outcome: string; reason: string | null }>) => steps.map((s) => `${s.step}:${s.outcome}${s.reason ? `:${s.reason}` : ''}`);

describe('testDirectory: one time budget', () => {
  it('threat: a server that accepts StartTLS and stalls the handshake: the tls step fails as timeout within the budget', async () => {
    const port = await listen((socket) => {
      socket.once('data', (request) => {
        const messageId = request[4] ?? 1; // 30 LL 02 01 <id> 77 ...
        // ExtendedResponse, resultCode success; then silence.
        socket.write(Buffer.from([0x30, 0x0c, 0x02, 0x01, messageId, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]));
      });
    });
    const began = performance.now();
    const result = await testDirectory(settings(port), 'alice', 300);
    expect(performance.now() - began).toBeLessThan(2_000);
    expect(result.ok).toBe(false);
    expect(outcomes(result.steps)).toEqual(['connect:passed', 'tls:failed:timeout', 'bind:skipped:earlier_step_failed', 'search:skipped:earlier_step_failed', 'groups:skipped:earlier_step_failed']);
    expect(result.steps[1]!.detail).toMatch(/timed out|ran out|no answer/);
  });

  it('a server that accepts the connection and never answers: the StartTLS request times out, the test still ends within the budget', async () => {
    const port = await listen(() => undefined);
    const began = performance.now();
    const result = await testDirectory(settings(port), undefined, 300);
    expect(performance.now() - began).toBeLessThan(2_000);
    expect(outcomes(result.steps)).toEqual(['connect:passed', 'tls:failed:timeout', 'bind:skipped:earlier_step_failed', 'search:skipped:earlier_step_failed', 'groups:skipped:earlier_step_failed']);
  });
});
