import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { DataDirLockedError } from './store/data-dir-lock.js';
import { createServices } from './services.js';
import { openDatabase, type Database } from './store/db.js';
import { startLiveUpdates } from './live/live-updates.js';
import { startWebhookRuntime, type WebhookRuntime } from './webhooks/runtime.js';

/** What `npm start` and `npx tenure serve` run: open storage, migrate, listen. */
export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  address: string;
  close(): Promise<void>;
}

export function storageOf(config: Config) {
  return config.storage.kind === 'postgres'
    ? ({ kind: 'postgres', url: config.storage.url, poolSize: config.storage.poolSize } as const)
    : ({ kind: 'pglite', dataDir: config.storage.dataDir } as const);
}

export const postgresUrlOf = (config: Config): string | null => (config.storage.kind === 'postgres' ? config.storage.url : null);

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const database = await openDatabase(storageOf(config), {
    // A lock left by a process that was killed goes stale after ~10 s; a server waits that out.
    lockWaitMs: 15_000,
    onLockCompromised: (err) => {
      logger.fatal({ err }, 'lost the data directory lock; stopping to protect the database');
      process.exit(1);
    },
  });
  // The webhook delivery worker and expiry sweeper run in process unless TENURE_WORKER=false.
  let runtime: WebhookRuntime | null = null;
  try {
    await database.migrate();
    if (database.kind === 'pglite' && config.demoProject) await createDemoProject(database, config, logger);
    const app = await buildApp({ config, database, logger });
    // Live updates share the API's HTTP server; their sockets close before it (preClose), since
    // an open WebSocket would hold the server's close until the deadline.
    const live = await startLiveUpdates({ server: app.server, database, config, logger, ...liveServices(database, config) });
    app.metrics.setLiveConnectionsSource(() => live.connectionCount());
    app.addHook('preClose', () => live.close());
    const address = await app.listen({ port: config.http.port, host: config.http.host });
    if (config.webhooks.worker) {
      runtime = await startWebhookRuntime({
        database,
        config,
        logger,
        postgresUrl: postgresUrlOf(config),
        stopGraceMs: config.ops.shutdownTimeoutMs,
      });
    }
    return {
      app,
      database,
      address,
      async close() {
        // HTTP and the delivery worker stop taking work at once; each finishes what it holds
        // until the deadline (the worker aborts its attempts then and gives their leases back).
        await Promise.all([runtime?.stop(), closeHttp(app, config.ops.shutdownTimeoutMs, logger)]);
        await database.close();
      },
    };
  } catch (err) {
    await runtime?.stop();
    await database.close();
    throw err;
  }
}

/**
 * Stops accepting connections and waits for requests in flight, then runs the app's onClose
 * hooks (rate limiter, live sockets). A keep-alive connection that finishes its request would
 * otherwise stay open for the keep-alive timeout, so idle ones are closed as they appear; at the
 * deadline every connection left is cut.
 */
async function closeHttp(app: FastifyInstance, deadlineMs: number, logger: Logger): Promise<void> {
  const idle = setInterval(() => app.server.closeIdleConnections(), 100);
  const deadline = setTimeout(() => {
    logger.warn({ deadline_ms: deadlineMs }, 'shutdown deadline reached; closing the connections still open');
    app.server.closeAllConnections();
  }, deadlineMs);
  try {
    await app.close();
  } finally {
    clearInterval(idle);
    clearTimeout(deadline);
  }
}

function liveServices(database: Database, config: Config) {
  const { auth, liveTokens } = createServices(database, config);
  return { auth, liveTokens };
}

/**
 * On the first start of an empty embedded database, create a demo project so a newcomer can call
 * the API at once. Its key goes to a file readable by the owner only, never into the logs.
 */
async function createDemoProject(database: Database, config: Config, logger: Logger): Promise<void> {
  const services = createServices(database, config);
  if ((await services.projects.count()) > 0) return;
  const project = await services.projects.createProject('Demo project');
  if (!project.ok) throw project.error;
  const key = await services.projects.createKey(project.value.id, 'demo', 'tenure serve');
  if (!key.ok) throw key.error;
  const file = path.join(config.storage.dataDir, 'demo-key.json');
  await writeFile(file, JSON.stringify({ project_id: project.value.id, key: key.value.key }, null, 2) + '\n', { mode: 0o600 });
  await chmod(file, 0o600);
  logger.info({ project_id: project.value.id, key_file: path.resolve(file) }, 'created a demo project; its API key is in key_file');
}

/** `npm start` and `tenure serve`: serve until SIGTERM or SIGINT, then close cleanly and exit 0. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tenure: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.log.level);
  let server;
  try {
    server = await startServer(config, logger);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`tenure: ${err.message}\n`);
      process.exit(1);
    }
    logger.fatal({ err }, 'tenure could not start');
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C means "now": the data directory lock goes stale by itself.
      logger.warn({ signal }, 'second signal during shutdown; exiting at once');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, deadline_ms: config.ops.shutdownTimeoutMs }, 'shutting down: finishing requests and webhook attempts in flight');
    server
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

