import { defineConfig } from 'vitest/config';

/**
 * The suite runs on embedded PGlite always, and again on PostgreSQL when DATABASE_URL is set
 * (CI sets it). The PostgreSQL project creates a fresh database for the run and drops it after,
 * so concurrent runs never collide.
 */
const projects = [
  { extends: true as const, test: { name: 'pglite', env: { TENURE_TEST_STORAGE: 'pglite' }, globalSetup: ['test/support/pglite.global-setup.ts'] } },
];
if (process.env.DATABASE_URL) {
  projects.push({
    extends: true as const,
    test: {
      name: 'postgres',
      // Pure unit tests (src/**) do not touch storage; they run once, in the PGlite project.
      include: ['test/**/*.test.ts'],
      env: { TENURE_TEST_STORAGE: 'postgres' },
      globalSetup: ['test/support/postgres.global-setup.ts'],
    } as never,
  });
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects,
  },
});
