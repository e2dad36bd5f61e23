import { defineConfig } from 'vitest/config';

/**
 * unit: pure logic beside the code (src/**). http-*: the HTTP suites whose behaviour depends on
 * the database (reservations, locks, NOTIFY between nodes, SQL the two engines run, migrations,
 * concurrency), once on PGlite and once on a real PostgreSQL the harness starts. api: HTTP suites
 * that do not (transport encryption, headers, configuration, parsing, tokens, input validation),
 * once, on PostgreSQL: a suite belongs in test/http only when PGlite could answer differently.
 * system: multi-node and process-level checks, on the built service (test/harness/global-build.ts).
 *
 * The HTTP and API suites share one module graph per worker (`isolate: false`): each file builds
 * its own app, databases and registries (no module-level state, no module mocks), so importing
 * the whole server once instead of once per file is safe, and it takes their time from about
 * 400 s to about 250 s per project (docs/decisions.md "Test suite speed").
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    reporters: ['default', './test/harness/summary-reporter.ts'],
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      { extends: true, test: { name: 'http-pglite', isolate: false, include: ['test/http/**/*.test.ts'], env: { TEST_DB: 'pglite' }, globalSetup: ['test/harness/global-pglite.ts'] } },
      { extends: true, test: { name: 'http-postgres', isolate: false, include: ['test/http/**/*.test.ts'], env: { TEST_DB: 'postgres' }, globalSetup: ['test/harness/global-postgres.ts'] } },
      { extends: true, test: { name: 'api', isolate: false, include: ['test/api/**/*.test.ts'], env: { TEST_DB: 'postgres' }, globalSetup: ['test/harness/global-postgres.ts'] } },
      { extends: true, test: { name: 'client', include: ['packages/client/test/**/*.test.ts'], globalSetup: ['test/harness/global-pglite.ts'] } },
      { extends: true, test: { name: 'ldap', include: ['test/ldap/**/*.test.ts'] } },
      { extends: true, test: { name: 'saml', include: ['test/saml/**/*.test.ts'], env: { TEST_DB: 'postgres' }, globalSetup: ['test/harness/global-postgres.ts'] } },
      { extends: true, test: { name: 'system', include: ['test/system/**/*.test.ts'], env: { TEST_DB: 'postgres' }, globalSetup: ['test/harness/global-postgres.ts', 'test/harness/global-build.ts'], fileParallelism: false, testTimeout: 90_000 } },
    ],
  },
});
