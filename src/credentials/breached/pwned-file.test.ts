import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pwnedFile, sha1Hex } from '../../../test/harness/pwned.js';
import { PwnedFormatError, scanPwnedFile } from './pwned-file.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-pwned-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(text: string | Buffer): string {
  const f = path.join(dir, `f${n++}.txt`);
  writeFileSync(f, text);
  return f;
}

async function entries(text: string | Buffer, minCount = 1, chunkBytes?: number): Promise<{ hex: string[]; scan: Awaited<ReturnType<typeof scanPwnedFile>> }> {
  const hex: string[] = [];
  const scan = await scanPwnedFile(file(text), { minCount, chunkBytes, onEntry: (d) => hex.push(Buffer.from(d).toString('hex').toUpperCase()) });
  return { hex, scan };
}

async function refusal(text: string | Buffer): Promise<PwnedFormatError> {
  const err = await scanPwnedFile(file(text), { minCount: 1 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PwnedFormatError);
  return err as PwnedFormatError;
}

describe('reading a Pwned Passwords file', () => {
  it('reads CRLF lines in order, across chunk edges, skipping lines under --min-count and count-0 padding', async () => {
    const text = pwnedFile([['alpha', 3], ['bravo', 1], ['charlie', 0]], { random: 200, seed: 's' });
    const all = await entries(text, 1, 130); // 130-byte chunks: lines straddle every edge
    expect(all.scan).toMatchObject({ lines: 203, entries: 202, skipped: 1, bytes: Buffer.byteLength(text) });
    expect(all.hex).toContain(sha1Hex('alpha'));
    expect(all.hex).toContain(sha1Hex('bravo'));
    expect(all.hex).not.toContain(sha1Hex('charlie'));
    expect((await entries(text, 1)).hex).toEqual(all.hex);
    const frequent = await entries(text, 3);
    expect(frequent.hex).toContain(sha1Hex('alpha'));
    expect(frequent.hex).not.toContain(sha1Hex('bravo'));
  });

  it('takes LF line ends, lower-case hex, a last line without a line end, and blank lines', async () => {
    const text = `${sha1Hex('one').toLowerCase()}:5\n\n${sha1Hex('two')}:12`;
    const r = await entries(text);
    expect(r.hex).toEqual([sha1Hex('one'), sha1Hex('two')]);
    expect(r.scan).toMatchObject({ lines: 3, entries: 2, skipped: 0 });
    expect((await entries('')).scan).toMatchObject({ lines: 0, entries: 0 });
  });

  it('refuses a malformed line, naming its number and what is wrong', async () => {
    const good = `${sha1Hex('a')}:1\r\n${sha1Hex('b')}:2\r\n`;
    const cases: Array<[string, RegExp]> = [
      [`${'8846F7EAEE8FB117AD06BDD830B7586C'}:5\r\n`, /^line 3: has a 32-character hash: this is the NTLM file/],
      [`${sha1Hex('c')}\r\n`, /^line 3: has a hash and no ":COUNT"/],
      [`${sha1Hex('c')}:\r\n`, /^line 3: has no count after the colon/],
      [`${sha1Hex('c')}:12x\r\n`, /^line 3: has a count that is not a whole number/],
      [`${sha1Hex('c')}:1\r2\r\n`, /^line 3: has a carriage return inside it/],
      [`${sha1Hex('c').slice(0, 39)}G:3\r\n`, /^line 3: has a character that is not hexadecimal at position 40/],
      [`${sha1Hex('c').slice(1)}:3\r\n`, /^line 3: has 39 hexadecimal characters before the colon, not 40/],
      [`${sha1Hex('c').slice(5)}:3\r\n`, /^line 3: has a 35-character hash: this looks like range-API answers/],
      [`${sha1Hex('c')}:${'9'.repeat(16)}\r\n`, /^line 3: has a count of more than 15 digits/],
      ['password123\r\n', /^line 3: is not SHA1HEX:COUNT/],
    ];
    for (const [bad, message] of cases) expect((await refusal(good + bad + good)).message).toMatch(message);
  });

  it('refuses a file that is not text lines at all (no line end in the first bytes)', async () => {
    const err = await refusal(Buffer.alloc(4096, 0x50));
    expect(err.line).toBe(1);
    expect(err.message).toMatch(/more than 64 bytes long without a line end: this is not a Pwned Passwords text file/);
  });
});
