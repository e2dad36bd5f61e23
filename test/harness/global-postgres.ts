/** Vitest global setup for the suites that run on PostgreSQL: one server, one migrated template. */
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/platform/db/database.js';
import { startPostgres } from './postgres.js';

export const TEMPLATE_DB = 'strongroom_template';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const server = await startPostgres();
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  const handle = await openDatabase({ kind: 'postgres', url: server.url(TEMPLATE_DB) }, pino({ level: 'silent' }));
  await handle.migrate();
  await handle.close();
  project.provide('pgAdminUrl', server.url('postgres'));
  project.provide('pgTemplate', TEMPLATE_DB);
  return () => server.stop();
}
