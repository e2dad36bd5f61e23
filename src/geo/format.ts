/**
 * What makes a file a MaxMind DB (MMDB, format 2): its metadata sits at the end, after the last
 * "\xab\xcd\xefMaxMind.com" marker, within the last 128 KiB. The configuration checks the marker
 * at start-up (reading only the tail of the file); the locator checks the whole file before it
 * answers from it, at start-up and at every reload.
 */
export const MMDB_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');
/** The metadata, marker included, is at most this long (the format's own limit). */
export const MMDB_METADATA_MAX_BYTES = 128 * 1024;

/**
 * Why the tail of a file (its last `MMDB_METADATA_MAX_BYTES` bytes, or all of a smaller file)
 * is not a MaxMind DB's, in words an operator can act on; undefined when it looks like one.
 * `head` is the file's first two bytes (a gzip download starts 1f 8b).
 */
export function mmdbTailProblem(tail: Buffer, head: Buffer): string | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) {
    return 'is compressed (gzip): unpack the download (tar xzf or gunzip) and point the setting at the .mmdb file inside';
  }
  if (tail.length === 0) return 'is empty';
  if (tail.lastIndexOf(MMDB_MARKER) < 0) {
    return 'is not a MaxMind DB (.mmdb) file: it has no MaxMind DB metadata at its end (a CSV edition, or a file still being copied?)';
  }
  return undefined;
}
