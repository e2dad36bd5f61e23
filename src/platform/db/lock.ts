/** The embedded database's lock file: one process at a time on a PGlite data directory. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class DatabaseLockedError extends Error {}

/**
 * PGlite is single-process: a lock file keeps a second server or a CLI from opening the same
 * data directory at once, which would corrupt it. A lock left by a dead process is taken over.
 */
export function takeLock(dir: string): () => void {
  const file = path.join(dir, 'strongroom.lock');
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) { // empty file: Number("") is 0, a process group
      try {
        process.kill(pid, 0);
        throw new DatabaseLockedError(
          `The embedded database in ${dir} is in use by process ${pid}. Stop that process first, or set DATABASE_URL to use PostgreSQL.`,
        );
      } catch (err) {
        if (err instanceof DatabaseLockedError) throw err;
        // ESRCH: the process is gone; the lock is stale. EPERM: it lives, under another user.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') {
          throw new DatabaseLockedError(`The embedded database in ${dir} is in use by process ${pid} (another user's). Stop that process first, or set DATABASE_URL to use PostgreSQL.`);
        }
      }
    }
  } catch (err) {
    if (err instanceof DatabaseLockedError) throw err;
  }
  writeFileSync(file, String(process.pid));
  return () => rmSync(file, { force: true });
}
