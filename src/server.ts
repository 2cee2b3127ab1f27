import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { createLogger } from './logger.js';
import { ignoreClosedStdio, shutdownBudget, shutdownRequested } from './shutdown.js';
import { DataDirLockedError } from './database/data-dir-lock.js';
import { startLiveUpdates } from './live/live-updates.js';
import { startWorkerRuntime, type WorkerRuntime } from './worker-runtime.js';

/** What `npm start` and `npx tenure serve` run: open storage, migrate, listen. */
export interface RunningServer {
  app: FastifyInstance;
  container: Container;
  address: string;
  close(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const container = await createContainer({
    config,
    logger,
    open: {
      // A lock left by a process that was killed goes stale (TENURE_DATA_DIR_LOCK_STALE_SECONDS,
      // 10 s by default); a server waits that out.
      lockWaitMs: (config.storage.kind === 'pglite' ? config.storage.lockStaleMs : 0) + 5_000,
      onLockCompromised: (err) => {
        logger.fatal({ err }, 'lost the data directory lock; stopping to protect the database');
        process.exit(1);
      },
    },
  });
  // The webhook delivery worker and expiry sweeper run in process unless TENURE_WORKER=false.
  let runtime: WorkerRuntime | null = null;
  try {
    if (container.database.kind === 'pglite' && config.demoProject) await createDemoProject(container);
    // A key revoked on any node stops working here at once, not when its cache entry expires.
    await container.listen();
    const app = await buildApp(container);
    // Live updates share the API's HTTP server; their sockets close before it (preClose), since
    // an open WebSocket would hold the server's close until the deadline.
    const live = await startLiveUpdates(app.server, container);
    app.metrics.setLiveConnectionsSource(() => live.connectionCount());
    app.addHook('preClose', () => live.close());
    const address = await app.listen({ port: config.http.port, host: config.http.host });
    const { drainMs } = shutdownBudget(config.ops.shutdownTimeoutMs);
    if (config.webhooks.worker) runtime = await startWorkerRuntime(container, { stopGraceMs: drainMs });
    return {
      app,
      container,
      address,
      async close() {
        // HTTP and the delivery worker stop taking work at once; each finishes what it holds
        // until the deadline (the worker aborts its attempts then and gives their leases back).
        await Promise.all([runtime?.stop(), closeHttp(app, drainMs, logger)]);
        await container.close();
      },
    };
  } catch (err) {
    await runtime?.stop();
    await container.close();
    throw err;
  }
}

/**
 * Stops accepting connections and waits for requests in flight, then runs the app's onClose
 * hooks (live sockets). A keep-alive connection that finishes its request would otherwise stay
 * open for the keep-alive timeout, so idle ones are closed as they appear; at the deadline every
 * connection left is cut.
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

/**
 * On the first start of an empty embedded database, create a demo project so a newcomer can call
 * the API at once. Its key goes to a file readable by the owner only, never into the logs.
 */
async function createDemoProject({ services: { projects }, config, logger }: Container): Promise<void> {
  if ((await projects.count()) > 0) return;
  const project = await projects.createProject('Demo project');
  if (!project.ok) throw project.error;
  const key = await projects.createKey(project.value.id, 'demo', 'tenure serve');
  if (!key.ok) throw key.error;
  const file = path.join(config.storage.dataDir, 'demo-key.json');
  await writeFile(file, JSON.stringify({ project_id: project.value.id, key: key.value.key }, null, 2) + '\n', { mode: 0o600 });
  await chmod(file, 0o600);
  logger.info({ project_id: project.value.id, key_file: path.resolve(file) }, 'created a demo project; its API key is in key_file');
}

/** `npm start` and `tenure serve`: serve until SIGTERM or SIGINT, then close cleanly and exit 0. */
export async function serve(): Promise<void> {
  ignoreClosedStdio();
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
  // Heard from before the start: a SIGTERM while it starts (a deploy stopped at once, an
  // orchestrator that saw /healthz answer before the worker runtime was up) stops the server once
  // it has started, within the same deadline, instead of killing it half-started.
  const timeoutMs = config.ops.shutdownTimeoutMs;
  const stopRequested = shutdownRequested({ logger, timeoutMs });
  let server;
  try {
    server = await startServer(config, logger);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`tenure: ${err.message}\n`);
      process.exit(1);
    }
    // Settings read as the container starts (the encryption key) fail as loadConfig's do.
    if (err instanceof ConfigError) {
      process.stderr.write(`tenure: ${err.message}\n`);
      process.exit(2);
    }
    logger.fatal({ err }, 'tenure could not start');
    process.exit(1);
  }
  const running = server;
  void stopRequested.then(async (signal) => {
    logger.info({ signal, deadline_ms: timeoutMs }, 'shutting down: finishing requests and webhook attempts in flight');
    try {
      await running.close();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  });
}

