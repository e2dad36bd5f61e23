/**
 * Deletes old records in batches, so that a clean-up job never holds one long transaction (nor
 * its locks) over a large backlog: each batch is its own statement; the run ends when a batch
 * comes back short, or when the scheduler stops.
 */
export const PURGE_BATCH = 2000;

/** `deleteBatch(limit)` deletes at most `limit` rows and says how many; returns the total. */
export async function purgeInBatches(deleteBatch: (limit: number) => Promise<number>, stopping?: AbortSignal, limit = PURGE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteBatch(limit);
    total += n;
    if (n < limit || stopping?.aborted) return total;
  }
}
