import { defineConfig } from 'vitest/config';

/**
 * The suite runs on embedded PGlite always, and again on PostgreSQL when DATABASE_URL is set
 * (CI sets it). The PostgreSQL project creates a fresh database for the run and drops it after,
 * so concurrent runs never collide.
 */
const projects = [
  {
    extends: true as const,
    test: {
      name: 'pglite',
      // The typed client's tests run against a real tenure server, here on embedded storage.
      include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'clients/typescript/**/*.test.ts'],
      exclude: ['test/cluster/**', '**/node_modules/**'],
      env: { TENURE_TEST_STORAGE: 'pglite' },
      globalSetup: ['test/support/pglite.global-setup.ts'],
    },
  },
];
if (process.env.DATABASE_URL) {
  projects.push({
    extends: true as const,
    test: {
      name: 'postgres',
      // Pure unit tests (src/**) do not touch storage; they run once, in the PGlite project.
      include: ['test/**/*.test.ts'],
      exclude: ['test/cluster/**', 'node_modules/**'],
      env: { TENURE_TEST_STORAGE: 'postgres' },
      globalSetup: ['test/support/postgres.global-setup.ts'],
    } as never,
  });
}

// Cluster tests start real server processes sharing PostgreSQL and Redis; they need both URLs.
if (process.env.DATABASE_URL && process.env.REDIS_URL) {
  projects.push({
    extends: true as const,
    test: {
      name: 'cluster',
      include: ['test/cluster/**/*.test.ts'],
      env: { TENURE_TEST_STORAGE: 'postgres' },
      globalSetup: ['test/support/postgres.global-setup.ts'],
    } as never,
  });
}

export default defineConfig({
  test: {
    // No include here: project arrays are merged with the root's, so each project names its own.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default on a 2-core machine is one worker; much of the suite waits on PostgreSQL,
    // Redis and child processes, so two files at a time overlap those waits.
    maxWorkers: 2,
    minWorkers: 1,
    projects,
  },
});
