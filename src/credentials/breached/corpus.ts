/**
 * The breach corpus a node answers from: the filter file BREACHED_PASSWORDS_FILTER names, read
 * whole into memory before the first request and checked (header, size, checksum of every
 * byte). A background job on every node looks at the file's identity (inode, size,
 * modification time) every few seconds; a replaced file is loaded and checked beside the one
 * answering, then swapped in whole. A replacement that does not load leaves the previous
 * filter answering and is reported once, until the file changes again. Without the setting
 * nothing is loaded and no password is ever reported breached.
 */
import { EventEmitter, once } from 'node:events';
import { open, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { Logger } from 'pino';
import { BREACHED_SETTING } from '../../platform/config-breached.js';
import { BlockedBloomFilter, sha1Of } from './filter.js';
import { decodeHeader, FilterFormatError, HEADER_BYTES, type FilterHeader } from './format.js';

/**
 * Whether a password is in the breach corpus, without any network call: the SHA-1 of the
 * password looked up in the filter (a few microseconds). `false` when no corpus is loaded.
 * A `true` may be a false positive at the rate the filter states (1 in 1,000 by default).
 */
export interface BreachedPasswords {
  isBreached(password: string): boolean;
}

/** A filter file that cannot be used: names the setting and the path, and why. */
export class BreachedFilterError extends Error {
  constructor(readonly path: string, readonly reason: string) {
    super(`${BREACHED_SETTING}: ${path} ${reason}`);
    this.name = 'BreachedFilterError';
  }
}

export interface LoadedFilter {
  header: FilterHeader;
  filter: BlockedBloomFilter;
  /** Device, inode, size and modification time when it was read. */
  identity: string;
}

type Stats = { dev: bigint; ino: bigint; size: bigint; mtimeNs: bigint };
const identityOf = (s: Stats): string => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;

const READ_CHUNK = 64 * 1024 * 1024;

/**
 * Reads and checks a filter file. The identity comes from the open file, so it describes the
 * bytes read even when the file is replaced meanwhile. The bits are read in chunks, each
 * checksummed as it arrives: a 2 GB filter never holds the event loop for long.
 */
export async function loadFilterFile(file: string): Promise<LoadedFilter> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new BreachedFilterError(file, code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`);
  }
  try {
    const s = await handle.stat({ bigint: true });
    if (s.isDirectory()) throw new BreachedFilterError(file, 'is a directory, not a file');
    const head = Buffer.alloc(Math.min(HEADER_BYTES, Number(s.size)));
    await handle.read(head, 0, head.length, 0);
    const header = decodeHeader(head, Number(s.size));
    const bits = Buffer.allocUnsafeSlow(header.bodyBytes);
    let crc = 0;
    for (let at = 0; at < bits.length;) {
      const { bytesRead } = await handle.read(bits, at, Math.min(READ_CHUNK, bits.length - at), HEADER_BYTES + at);
      if (bytesRead === 0) throw new FilterFormatError('became shorter while it was read: copy it again');
      crc = crc32(bits.subarray(at, at + bytesRead), crc);
      at += bytesRead;
    }
    if (crc !== header.bodyCrc32) throw new FilterFormatError('is damaged (the checksum of its bits does not match its header): copy it again, or import the Pwned Passwords file again with `strongroom passwords import-breached`');
    return { header, filter: new BlockedBloomFilter(bits, header.blocks, header.probes), identity: identityOf(s) };
  } catch (err) {
    if (err instanceof FilterFormatError) throw new BreachedFilterError(file, err.reason);
    throw err;
  } finally {
    await handle.close();
  }
}

/** What one check of the file did: loaded a replacement, refused it, or found the file gone. */
export interface BreachedReload {
  outcome: 'reloaded' | 'failed' | 'missing';
  /** Entries of the filter now answering. */
  entries: number;
  reason?: string;
}

const day = (d: Date): string => d.toISOString().slice(0, 10);

/** What the log says about a loaded filter. */
export function describeFilter(h: FilterHeader): string {
  return `${h.entries.toLocaleString('en-US')} entries (--min-count ${h.minCount}), false positives 1 in ${Math.round(1 / h.falsePositiveRate).toLocaleString('en-US')}, ${(h.bodyBytes / 1048576).toFixed(1)} MiB, imported ${day(h.createdAt)}`;
}

/** The breach corpus of this node: the `BreachedPasswords` the password rules and the sign-in risk signal use. */
export class BreachedPasswordFilter implements BreachedPasswords {
  private current: LoadedFilter | undefined;
  /** The identity of a replacement that did not load (or 'missing'): reported once, retried when it changes. */
  private refused: string | undefined;
  private readonly events = new EventEmitter();
  private refreshing: Promise<BreachedReload | undefined> | undefined;

  constructor(private readonly o: { path: string | undefined; log: Logger }) {}

  /** A corpus answering from a filter already in memory (tests, benchmarks). */
  static of(filter: BlockedBloomFilter, log: Logger): BreachedPasswordFilter {
    const corpus = new BreachedPasswordFilter({ path: undefined, log });
    corpus.current = {
      filter, identity: 'memory',
      header: { probes: filter.probes, blocks: filter.blocks, entries: 0, minCount: 1, falsePositiveRate: 0, bitsPerEntry: 0, createdAt: new Date(0), bodyBytes: filter.bits.length, bodyCrc32: 0 },
    };
    return corpus;
  }

  /** Whether a corpus is loaded: without one `isBreached` is always false. */
  get enabled(): boolean {
    return this.current !== undefined;
  }

  /** The loaded filter's header (entries, rate, import date), or undefined. */
  get header(): FilterHeader | undefined {
    return this.current?.header;
  }

  isBreached(password: string): boolean {
    const f = this.current;
    return f !== undefined && f.filter.has(sha1Of(password));
  }

  /** Loads the configured file (nothing without the setting); throws a BreachedFilterError naming the setting, the path and why. */
  async load(): Promise<void> {
    if (this.o.path !== undefined) this.current = await loadFilterFile(this.o.path);
  }

  /** The one start-up line: the corpus loaded, or that the check is off. */
  announce(production: boolean): void {
    const h = this.current?.header;
    if (h) this.o.log.info({ breached_passwords: { path: this.o.path, entries: h.entries, false_positive_rate: h.falsePositiveRate } }, `Breached passwords: ${describeFilter(h)}, from ${this.o.path}`);
    else {
      const text = `Breached passwords: off (${BREACHED_SETTING} unset): new passwords are not checked against a breach corpus, and sign-in has no breached-password signal`;
      if (production) this.o.log.warn({ breached_passwords: 'off' }, text);
      else this.o.log.info({ breached_passwords: 'off' }, text);
    }
  }

  /** Checks the file once; loads it when it was replaced. Concurrent calls share one check. */
  refresh(): Promise<BreachedReload | undefined> {
    this.refreshing ??= this.check().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Resolves with the outcome of the next check that found the file replaced or gone. */
  async nextReload(): Promise<BreachedReload> {
    const [r] = (await once(this.events, 'reload')) as [BreachedReload];
    return r;
  }

  private async check(): Promise<BreachedReload | undefined> {
    const file = this.o.path;
    const current = this.current;
    if (file === undefined || current === undefined) return undefined;
    const identity = await stat(file, { bigint: true }).then(identityOf, () => 'missing');
    if (identity === current.identity) {
      this.refused = undefined; // the file answering is back in place
      return undefined;
    }
    if (identity === this.refused) return undefined;
    const r = await this.replace(file, current, identity);
    this.events.emit('reload', r);
    return r;
  }

  private async replace(file: string, current: LoadedFilter, identity: string): Promise<BreachedReload> {
    const since = `still answering from the filter imported ${day(current.header.createdAt)}`;
    if (identity === 'missing') {
      this.refused = identity;
      this.o.log.warn({ setting: BREACHED_SETTING, path: file }, `Breached passwords: ${file} is gone; ${since}`);
      return { outcome: 'missing', entries: current.header.entries, reason: 'the file is gone' };
    }
    try {
      const next = await loadFilterFile(file);
      this.current = next;
      this.refused = undefined;
      this.o.log.info({ setting: BREACHED_SETTING, path: file, entries: next.header.entries }, `Breached passwords: reloaded ${file}: ${describeFilter(next.header)}`);
      return { outcome: 'reloaded', entries: next.header.entries };
    } catch (err) {
      const reason = err instanceof BreachedFilterError ? err.reason : String(err);
      this.refused = identity;
      this.o.log.error({ setting: BREACHED_SETTING, path: file }, `Breached passwords: ${file} was replaced but ${reason}; ${since}`);
      return { outcome: 'failed', entries: current.header.entries, reason };
    }
  }
}
