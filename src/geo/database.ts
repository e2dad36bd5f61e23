/**
 * One MaxMind-format database file in memory: read whole (a country or ASN file is a few MB, a
 * city file about 130 MB), checked before anything is answered from it, and answered from with
 * mmdb-lib's reader. A file's identity (inode, size, modification time) tells a later check
 * whether the operator replaced it.
 */
import { readFile, stat } from 'node:fs/promises';
import { Reader, type Response } from 'mmdb-lib';
import type { GeoDatabaseSource } from '../platform/config-geo.js';
import { MMDB_MARKER, MMDB_METADATA_MAX_BYTES, mmdbTailProblem } from './format.js';
import { TwoGenerationCache } from './cache.js';

/** A database file that cannot be used: names the setting and the path, and why. */
export class GeoDatabaseError extends Error {
  constructor(readonly source: GeoDatabaseSource, readonly reason: string) {
    super(`${source.bundled ? `The bundled geolocation database (${source.setting} unset)` : source.setting}: ${source.path} ${reason}`);
    this.name = 'GeoDatabaseError';
  }
}

export interface LoadedDatabase {
  source: GeoDatabaseSource;
  reader: Reader<Response>;
  /** The metadata's `build_epoch`. */
  builtAt: Date;
  /** The metadata's `database_type`, e.g. `GeoLite2-City` or `DBIP-ASN-Lite (compat=GeoLite2-ASN)`. */
  type: string;
  ipVersion: 4 | 6;
  identity: string;
}

/** Inode, size and modification time: a file moved over this one, or rewritten, has others. */
export async function fileIdentity(path: string): Promise<string> {
  const s = await stat(path, { bigint: true });
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
}

/** Why a whole file, read by `reader` (undefined: its metadata did not decode), is not a usable MaxMind DB, or undefined. */
function problemOf(db: Buffer, reader: Reader<Response> | undefined): string | undefined {
  if (!reader) return 'is not a readable MaxMind DB file (its metadata does not decode)';
  const m = reader.metadata;
  if (m.binaryFormatMajorVersion !== 2) return `is MaxMind DB format version ${String(m.binaryFormatMajorVersion)}, not 2`;
  if (m.ipVersion !== 4 && m.ipVersion !== 6) return `has ip_version ${String(m.ipVersion)} in its metadata (4 or 6 expected)`;
  // The tree, the 16-byte separator and the marker must fit in the file: a truncated copy does not.
  if (!Number.isInteger(m.nodeCount) || m.nodeCount < 1 || m.searchTreeSize + 16 > db.lastIndexOf(MMDB_MARKER)) return 'is truncated or corrupt (its search tree does not fit in the file)';
  if (Number.isNaN(m.buildEpoch.getTime())) return 'has no build date (build_epoch) in its metadata';
  return undefined;
}

/**
 * Reads and checks the file. `cacheSize`: decoded records kept per database (a city record is
 * a nested map; decoding it again for the next client of the same network is most of a lookup).
 */
export async function loadDatabase(source: GeoDatabaseSource, cacheSize: number): Promise<LoadedDatabase> {
  let identity: string;
  let db: Buffer;
  try {
    identity = await fileIdentity(source.path);
    db = await readFile(source.path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new GeoDatabaseError(source, code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`);
  }
  // The marker first: the reader would otherwise search a file of anything for it, byte by byte.
  const tailProblem = mmdbTailProblem(db.subarray(Math.max(0, db.length - MMDB_METADATA_MAX_BYTES)), db.subarray(0, 2));
  if (tailProblem !== undefined) throw new GeoDatabaseError(source, tailProblem);
  let reader: Reader<Response> | undefined;
  try {
    reader = new Reader<Response>(db, { cache: new TwoGenerationCache<number, unknown>(cacheSize) });
  } catch {
    reader = undefined;
  }
  const problem = problemOf(db, reader);
  if (problem !== undefined || !reader) throw new GeoDatabaseError(source, problem ?? 'is not a readable MaxMind DB file');
  const m = reader.metadata;
  return { source, reader, builtAt: m.buildEpoch, type: typeof m.databaseType === 'string' ? m.databaseType : 'unknown', ipVersion: m.ipVersion as 4 | 6, identity };
}
