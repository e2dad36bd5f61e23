/**
 * Runs the operator CLI as an operator does: a child process with only the configuration it is
 * given in its environment. In a project that built the service (test/harness/global-build.ts),
 * the shipped `dist/src/cli.js`; elsewhere the sources (`node --import tsx src/cli.ts`).
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import type { Secrets } from '../../src/platform/crypto/secrets.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The command line that starts `entry` (`cli` or `server`): the built JavaScript when there is one. */
export function serviceCommand(entry: 'cli' | 'server'): string[] {
  const dist = inject('builtDist') as string | undefined;
  return dist === undefined ? ['--import', 'tsx', path.join(ROOT, 'src', `${entry}.ts`)] : [path.join(dist, 'src', `${entry}.js`)];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion; `input` is written to its stdin (else stdin is empty). */
export function runCli(args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // A clean environment: only what an operator would set, nothing inherited from the test run.
    const child = spawn(process.execPath, [...serviceCommand('cli'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // A hung CLI fails its test (code null) instead of spinning on. A first run on the embedded
      // PGlite creates and migrates its database: 11 s of CPU, over 25 s on a busy 2-core machine.
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** The environment of a CLI run with these secrets (previous field keys included when given). */
export function cliEnv(secrets: Secrets, dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    BCRYPT_COST: '4',
    FIELD_ENCRYPTION_KEY: secrets.fieldKey.toString('base64'),
    ...(secrets.previousFieldKeys?.length ? { FIELD_ENCRYPTION_KEYS_PREVIOUS: secrets.previousFieldKeys.map((k) => k.toString('base64')).join(',') } : {}),
    IP_HASH_KEY: secrets.ipHashKey.toString('base64'),
    TRANSPORT_PRIVATE_KEY: secrets.transportPrivateKeyPem,
    DATA_DIR: dataDir,
    ...extra,
  };
}
