import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Clock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { createServices, type Services } from '../../src/services.js';
import { openDatabase, type Database, type StorageOptions } from '../../src/store/db.js';

/**
 * The test harness: the real app in-process (`app.inject`) on a real database — an in-memory
 * PGlite per test file, or this run's own PostgreSQL database when the suite runs on PostgreSQL.
 * Every test seeds its own project and key (`harness.tenant()`), so tests never share state.
 */

export const onPostgres = process.env.TENURE_TEST_STORAGE === 'postgres';

export async function testStorage(): Promise<StorageOptions> {
  if (onPostgres) return { kind: 'postgres', url: inject('databaseUrl'), poolSize: 5 };
  return { kind: 'pglite-memory', seed: new Blob([await readFile(inject('pgliteSeed'))]) };
}

export interface Tenant {
  projectId: string;
  key: string;
  keyId: string;
  headers: { authorization: string };
  /** Sends a request with this tenant's key (override `headers` to change or drop it). */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** `/v2/projects/<projectId>` */
  base: string;
}

export interface Harness {
  app: FastifyInstance;
  database: Database;
  services: Services;
  config: Config;
  tenant(): Promise<Tenant>;
  close(): Promise<void>;
}

export async function createHarness(options: { env?: Record<string, string>; clock?: Clock } = {}): Promise<Harness> {
  // Injected requests all come from one address: limits are raised unless a test sets its own.
  const config = loadConfig({
    TENURE_WEBHOOK_ALLOW_PRIVATE: 'false',
    TENURE_RATE_LIMIT_KEY: '1000000000',
    TENURE_RATE_LIMIT_IP: '1000000000',
    TENURE_RATE_LIMIT_BURST: '1000000000',
    ...options.env,
  });
  const database = await openDatabase(await testStorage());
  await database.migrate();
  const services = createServices(database, config, options.clock);
  const app = await buildApp({ config, database, logger: createLogger('silent'), clock: options.clock });
  await app.ready();
  return {
    app,
    database,
    services,
    config,
    async tenant() {
      const project = await services.projects.createProject(`test ${randomUUID()}`);
      if (!project.ok) throw project.error;
      const key = await services.projects.createKey(project.value.id, 'test', 'test');
      if (!key.ok) throw key.error;
      const headers = { authorization: `Bearer ${key.value.key}` };
      return {
        projectId: project.value.id,
        key: key.value.key,
        keyId: key.value.metadata.id,
        headers,
        base: `/v2/projects/${project.value.id}`,
        request: (o) => app.inject({ ...o, headers: { ...headers, ...o.headers } }),
      };
    },
    async close() {
      await app.close();
      await database.close();
    },
  };
}

/** A future instant `days` from now, in both accepted forms. */
export function future(days = 30): { ms: number; iso: string } {
  const ms = Date.now() + days * 86_400_000;
  return { ms, iso: new Date(ms).toISOString() };
}

/** A random numeric user id, Discord-style. */
export const userId = (): string => String(100_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
