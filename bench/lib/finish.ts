/** The end of every bench script, whether it succeeded or threw. */
import { closeIdle } from './client.js';
import { stopAll } from './proc.js';

/**
 * Closes the load generator's idle sockets, stops every child process the script started, then runs
 * each cleanup in the order given (databases, directories). A failing cleanup is printed and the
 * others still run: a bench never leaves a server or a PostgreSQL behind.
 */
export async function finishBench(...cleanups: Array<() => unknown>): Promise<void> {
  closeIdle();
  await stopAll();
  for (const cleanup of cleanups) {
    try {
      await cleanup();
    } catch (err) {
      console.error('bench cleanup:', err);
    }
  }
}
