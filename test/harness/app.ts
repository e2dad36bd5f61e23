/**
 * Builds a whole Strongroom (services + Fastify app) for a test, on PGlite in memory or on a
 * fresh PostgreSQL database cloned from the migrated template, with a frozen clock.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll, inject } from 'vitest';
import { createStrongroom, type Registry } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig, type Config } from '../../src/platform/config.js';
import { RATE_GROUPS, rateLimitVar } from '../../src/platform/config-rate-limits.js';
import type { Secrets } from '../../src/platform/crypto/secrets.js';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/database.js';
import type { App } from '../../src/platform/http/app.js';
import type { Mailer } from '../../src/mail/mailer.js';
import type { Scheduler } from '../../src/platform/scheduler.js';

let transportPem: string | undefined;

export function testSecrets(): Secrets {
  transportPem ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { fieldKey: randomBytes(32), ipHashKey: randomBytes(32), transportPrivateKeyPem: transportPem, generated: [], fromDataDir: [] };
}

export type DbKind = 'pglite' | 'postgres';

export function dbKind(): DbKind {
  return process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/** A fresh PostgreSQL database cloned from the migrated template; returns its URL. */
export async function freshPostgresDatabase(): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
  await admin.end();
  return adminUrl.replace(/\/postgres$/, `/${name}`);
}

let pgliteImage: Blob | undefined;

/** The migrated data directory test/harness/global-pglite.ts wrote, when the project has it. */
function migratedPgliteImage(): Blob | undefined {
  const file = inject('pgliteImage');
  if (file) pgliteImage ??= new Blob([readFileSync(file)]);
  return pgliteImage;
}

/** An empty PostgreSQL database (no migrations) named `<prefix>_<random>`; returns its URL. */
export async function emptyPostgresDatabase(prefix = 'empty'): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `${prefix}_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return adminUrl.replace(/\/postgres$/, `/${name}`);
}

export async function openTestDatabase(kind: DbKind = dbKind(), url?: string): Promise<DatabaseHandle> {
  const log = pino({ level: 'silent' });
  if (kind === 'postgres') return openDatabase({ kind: 'postgres', url: url ?? (await freshPostgresDatabase()), poolSize: 5 }, log);
  const handle = await openDatabase({ kind: 'pglite-memory', image: migratedPgliteImage() }, log);
  await handle.migrate();
  return handle;
}

export interface TestApp {
  app: App;
  /** What the modules provide, by name. */
  s: Registry;
  /** The modules' background jobs (not started: `runNow(name)` runs one). */
  scheduler: Scheduler;
  clock: ManualClock;
  /** The management listener's app (MANAGEMENT_PORT), not started; the caller closes it. */
  buildManagementApp(): Promise<App>;
  /** Closes the app and its modules, not the database (a second node sharing a handle). */
  closeApp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Every test client is one address, and suites sign the same accounts in many times: the route
 * groups' limits are lifted unless a test sets them (test/http/rate-limits.test.ts does). The
 * sign-in limit per address stays at SIGNIN_RATE_LIMIT_PER_MINUTE, which tests lower by name.
 */
export const UNLIMITED_ROUTES: Record<string, string> = Object.fromEntries(
  RATE_GROUPS.flatMap((g) => (['ip', 'account'] as const).map((d) => [rateLimitVar(g, d), '100000/1m'] as const)).filter(([name]) => name !== rateLimitVar('signin', 'ip')),
);

/**
 * `log`: a logger to capture what the service logs (silent by default, or TEST_LOG's level).
 * `configure`: adjusts the loaded configuration, for settings no environment of a test can
 * reach (such as production's behaviour without production's secrets).
 */
export async function createTestApp(opts: { env?: Record<string, string>; database?: DatabaseHandle; secrets?: Secrets; clock?: ManualClock; mailer?: Mailer; log?: Logger; configure?: (config: Config) => Config } = {}): Promise<TestApp> {
  // PUSH_DEV_OUTBOX=0: a test without a push provider meets what production does (503 PUSH_NOT_CONFIGURED) unless it asks for the outbox.
  const loaded = loadConfig({ NODE_ENV: 'test', BCRYPT_COST: '4', SIGNIN_RATE_LIMIT_PER_MINUTE: '1000', PUSH_DEV_OUTBOX: '0', ...UNLIMITED_ROUTES, ...opts.env });
  const config = opts.configure ? opts.configure(loaded) : loaded;
  const database = opts.database ?? (await openTestDatabase());
  const clock = opts.clock ?? new ManualClock(Date.now());
  const strongroom = createStrongroom({ config, secrets: opts.secrets ?? testSecrets(), database, clock, log: opts.log ?? pino({ level: process.env.TEST_LOG ?? 'silent' }), mailer: opts.mailer });
  await strongroom.init();
  const app = await strongroom.buildApp();
  await app.ready();
  const closeApp = async (): Promise<void> => {
    await app.close();
    await strongroom.close();
  };
  return {
    app, s: strongroom.registry, scheduler: strongroom.scheduler, clock,
    buildManagementApp: () => strongroom.buildManagementApp(),
    closeApp,
    async close() {
      await closeApp();
      await database.close();
    },
  };
}

export interface TwoNodes {
  a: TestApp;
  b: TestApp;
  close(): Promise<void>;
}

/**
 * Two nodes on one database with shared secrets and one clock: on PostgreSQL two connection
 * pools on one database; on PGlite (one process) two apps sharing the handle.
 */
export async function createTwoNodes(opts: { env?: Record<string, string> } = {}): Promise<TwoNodes> {
  const secrets = testSecrets();
  const clock = new ManualClock(Date.now());
  const env = opts.env;
  if (dbKind() === 'postgres') {
    const url = await freshPostgresDatabase();
    const a = await createTestApp({ env, database: await openTestDatabase('postgres', url), secrets, clock });
    const b = await createTestApp({ env, database: await openTestDatabase('postgres', url), secrets, clock });
    return { a, b, close: async () => { await b.close(); await a.close(); } };
  }
  const a = await createTestApp({ env, secrets, clock });
  const b = await createTestApp({ env, database: a.s.database, secrets, clock });
  // b shares a's database: close b's app and modules, then a (which closes the database).
  return { a, b, close: async () => { await b.closeApp(); await a.close(); } };
}

/**
 * Two nodes for the enclosing `describe`: started before its tests, closed after them. Read
 * `a` and `b` inside the tests (they are set once the suite has started).
 */
export function useTwoNodes(opts: { env?: Record<string, string> } = {}): { a: TestApp; b: TestApp } {
  const nodes = {} as { a: TestApp; b: TestApp };
  let pair: TwoNodes | undefined;
  beforeAll(async () => {
    pair = await createTwoNodes(opts);
    nodes.a = pair.a;
    nodes.b = pair.b;
  });
  afterAll(async () => pair?.close());
  return nodes;
}

