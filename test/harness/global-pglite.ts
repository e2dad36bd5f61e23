/**
 * Vitest global setup for the suites that run on PGlite: migrates one in-memory database and
 * writes its data directory to a file, which every test database then opens (under a second)
 * instead of running initdb and the migrations again (seconds each).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/platform/db/database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data directory (tarball), for `pglite-memory`'s `image`. */
    pgliteImage: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-pglite-'));
  const file = path.join(dir, 'migrated.tar');
  const handle = await openDatabase({ kind: 'pglite-memory' }, pino({ level: 'silent' }));
  await handle.migrate();
  writeFileSync(file, Buffer.from(await (await handle.snapshot()).arrayBuffer()));
  await handle.close();
  project.provide('pgliteImage', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
