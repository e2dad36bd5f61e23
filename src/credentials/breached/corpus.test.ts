import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pwnedFile } from '../../../test/harness/pwned.js';
import { BreachedPasswordFilter } from './corpus.js';
import { importBreached } from './import.js';
import { PwnedFormatError } from './pwned-file.js';
import { captureLog } from '../../../test/harness/log-capture.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-breached-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const capture = () => captureLog();

let n = 0;
/** Imports a Pwned file of these passwords (and seeded random hashes) to `output`. */
async function imported(passwords: Array<string | [string, number]>, output: string, opts: { minCount?: number; random?: number } = {}) {
  const input = path.join(dir, `pwned-${n++}.txt`);
  writeFileSync(input, pwnedFile(passwords, { random: opts.random ?? 300, seed: `s${n}` }));
  return importBreached({ file: input, output, minCount: opts.minCount ?? 1, falsePositiveRate: 0.001 });
}

describe('import', () => {
  it('builds a filter from a Pwned file: the passwords in it are found, others are not, --min-count drops the rare ones', async () => {
    const output = path.join(dir, 'import.filter');
    const summary = await imported([['Summer2024!', 40], ['Kenya#2019', 1]], output, { minCount: 2, random: 1000 });
    // The seeded random hashes are seen 1 to 50 times: 1 in 50 of them once.
    expect(summary).toMatchObject({ output, lines: 1002, entries: 1002 - 1 - 20, skipped: 21, fileBytes: statSync(output).size });
    expect(summary.falsePositiveRate).toBeLessThanOrEqual(0.001);
    const corpus = new BreachedPasswordFilter({ path: output, log: pino({ level: 'silent' }) });
    await corpus.load();
    expect(corpus.isBreached('Summer2024!')).toBe(true);
    expect(corpus.isBreached('Kenya#2019')).toBe(false);
    expect(corpus.isBreached('summer2024!')).toBe(false);
  });

  it('refuses a malformed file and leaves the filter already there untouched', async () => {
    const output = path.join(dir, 'kept.filter');
    await imported(['Summer2024!'], output);
    const before = readFileSync(output);
    const bad = path.join(dir, 'bad.txt');
    writeFileSync(bad, `${pwnedFile(['x'], { random: 3 })}8846F7EAEE8FB117AD06BDD830B7586C:5\r\n`);
    const err = await importBreached({ file: bad, output, minCount: 1, falsePositiveRate: 0.001 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PwnedFormatError);
    expect((err as PwnedFormatError).line).toBe(5);
    expect(readFileSync(output).equals(before)).toBe(true);
  });
});

describe('the corpus a node answers from', () => {
  let file: string;
  beforeAll(async () => {
    file = path.join(dir, 'live.filter');
    await imported(['Summer2024!'], file);
  });

  it('without the setting: off, nothing is breached, and start-up says so once', async () => {
    const { log, lines } = capture();
    const corpus = new BreachedPasswordFilter({ path: undefined, log });
    await corpus.load();
    corpus.announce(false);
    expect(corpus.enabled).toBe(false);
    expect(corpus.isBreached('Summer2024!')).toBe(false);
    expect(await corpus.refresh()).toBeUndefined();
    expect(lines.map((l) => l.msg)).toEqual(['Breached passwords: off (BREACHED_PASSWORDS_FILTER unset): new passwords are not checked against a breach corpus, and sign-in has no breached-password signal']);
    const prod = capture();
    new BreachedPasswordFilter({ path: undefined, log: prod.log }).announce(true);
    expect(prod.lines[0]!.level).toBe(40); // a warning in production
  });

  it('announces what it loaded', async () => {
    const { log, lines } = capture();
    const corpus = new BreachedPasswordFilter({ path: file, log });
    await corpus.load();
    corpus.announce(true);
    expect(corpus.enabled).toBe(true);
    expect(lines[0]!.msg).toMatch(new RegExp(`^Breached passwords: 301 entries \\(--min-count 1\\), false positives 1 in 1,\\d{3}, 0\\.0 MiB, imported \\d{4}-\\d\\d-\\d\\d, from ${file}$`));
  });

  it('reloads a filter moved over the old one; a damaged replacement is refused once and the old filter keeps answering', async () => {
    const target = path.join(dir, 'reload.filter');
    await imported(['Summer2024!'], target);
    const { log, lines } = capture();
    const corpus = new BreachedPasswordFilter({ path: target, log });
    await corpus.load();
    expect(await corpus.refresh()).toBeUndefined(); // nothing replaced

    // A new import written elsewhere and moved over it (what the runbook says to do).
    const next = path.join(dir, 'next.filter');
    await imported(['Winter2025!'], next);
    renameSync(next, target);
    const reloaded = corpus.nextReload();
    void corpus.refresh(); // what the every-node job does
    expect(await reloaded).toEqual({ outcome: 'reloaded', entries: 301 });
    expect(corpus.isBreached('Winter2025!')).toBe(true);
    expect(corpus.isBreached('Summer2024!')).toBe(false);

    // A damaged copy: refused, reported once, the filter in memory still answers.
    const damaged = readFileSync(target);
    damaged[damaged.length - 1]! ^= 0xff;
    writeFileSync(path.join(dir, 'damaged.filter'), damaged);
    renameSync(path.join(dir, 'damaged.filter'), target);
    expect(await corpus.refresh()).toEqual({ outcome: 'failed', entries: 301, reason: expect.stringMatching(/^is damaged/) as string });
    expect(await corpus.refresh()).toBeUndefined(); // reported once
    expect(corpus.isBreached('Winter2025!')).toBe(true);
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual([expect.stringMatching(new RegExp(`^Breached passwords: ${target} was replaced but is damaged .*; still answering from the filter imported`))]);

    // The file gone: the copy in memory still answers.
    rmSync(target);
    expect(await corpus.refresh()).toMatchObject({ outcome: 'missing', entries: 301 });
    expect(corpus.isBreached('Winter2025!')).toBe(true);
  });
});
