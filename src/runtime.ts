/** Opens everything a process needs (server or CLI) from a config. */
import type { Logger } from 'pino';
import { createStrongroom, type Strongroom } from './app.js';
import { systemClock, type Clock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import { resolveSecrets } from './platform/crypto/secrets.js';
import { openDatabase, type DatabaseTarget } from './platform/db/database.js';

export function databaseTarget(config: Config): DatabaseTarget {
  return config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl, preparedStatements: config.databasePreparedStatements } : { kind: 'pglite', dataDir: config.dataDir };
}

export async function openRuntime(config: Config, log: Logger, opts: { clock?: Clock; defaultMetrics?: boolean } = {}): Promise<{ strongroom: Strongroom; generated: string[]; fromDataDir: string[]; migrated: string[] }> {
  const secrets = resolveSecrets(config);
  const database = await openDatabase(databaseTarget(config), log);
  try {
    const migrated = await database.migrate();
    const strongroom = createStrongroom({ config, secrets, database, clock: opts.clock ?? systemClock, log, defaultMetrics: opts.defaultMetrics });
    await strongroom.init();
    return { strongroom, generated: secrets.generated, fromDataDir: secrets.fromDataDir, migrated };
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }
}
