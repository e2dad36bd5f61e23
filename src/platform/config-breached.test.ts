import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pwnedFile } from '../../test/harness/pwned.js';
import { importBreached } from '../credentials/breached/import.js';
import { readBreachedEnv } from './config-breached.js';
import { ConfigError, loadConfig } from './config.js';

let dir: string;
let filter: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-breached-config-'));
  writeFileSync(path.join(dir, 'pwned.txt'), pwnedFile(['Summer2024!'], { random: 10 }));
  filter = path.join(dir, 'breached.filter');
  await importBreached({ file: path.join(dir, 'pwned.txt'), output: filter, minCount: 1, falsePositiveRate: 0.001 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function read(env: Record<string, string>) {
  const problems: string[] = [];
  return { config: readBreachedEnv((n) => env[n], problems), problems };
}

describe('BREACHED_PASSWORDS_FILTER', () => {
  it('unset: the check is off', () => {
    expect(read({})).toEqual({ config: { filter: undefined }, problems: [] });
  });

  it('a filter file: its absolute path', () => {
    expect(read({ BREACHED_PASSWORDS_FILTER: path.relative(process.cwd(), filter) })).toEqual({ config: { filter }, problems: [] });
  });

  it('a missing file, the Pwned text file or another version stops start-up, naming the setting, the path and what to do', () => {
    const missing = path.join(dir, 'nowhere.filter');
    expect(read({ BREACHED_PASSWORDS_FILTER: missing }).problems).toEqual([
      `BREACHED_PASSWORDS_FILTER: ${missing} does not exist: point it at the filter \`strongroom passwords import-breached\` wrote; or unset it to turn the check off`,
    ]);
    expect(read({ BREACHED_PASSWORDS_FILTER: path.join(dir, 'pwned.txt') }).problems[0]).toMatch(/^BREACHED_PASSWORDS_FILTER: .*pwned\.txt is a Pwned Passwords text file, not a filter/);
    const v9 = path.join(dir, 'v9.filter');
    const b = readFileSync(filter);
    b.writeUInt16LE(9, 8);
    writeFileSync(v9, b);
    expect(read({ BREACHED_PASSWORDS_FILTER: v9 }).problems[0]).toMatch(/^BREACHED_PASSWORDS_FILTER: .*v9\.filter is filter format version 9; this Strongroom reads version 1/);
    expect(() => loadConfig({ NODE_ENV: 'test', BREACHED_PASSWORDS_FILTER: missing })).toThrow(ConfigError);
    expect(loadConfig({ NODE_ENV: 'test', BREACHED_PASSWORDS_FILTER: filter }).breachedPasswords).toEqual({ filter });
  });
});
