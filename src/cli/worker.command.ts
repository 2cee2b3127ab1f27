import { loadConfig } from '../config.js';
import { createContainer } from '../container.js';
import { createLogger } from '../logger.js';
import { ignoreClosedStdio, shutdownBudget, shutdownRequested } from '../shutdown.js';
import { startWorkerRuntime } from '../worker-runtime.js';

/**
 * `npx tenure worker`: the delivery worker and expiry sweeper without the HTTP server, for
 * dedicated worker nodes (run API nodes with TENURE_WORKER=false then). Embedded storage allows
 * one process, so with PGlite this is for when no server runs on the same DATA_DIR. Logs are JSON
 * lines on stdout, as the server's; SIGTERM or SIGINT stops it after attempts in flight finish,
 * and it ends within TENURE_SHUTDOWN_TIMEOUT_MS whatever happens (src/shutdown.ts): a stop that
 * hangs, a dead stdout pipe. `env`: where the configuration is read from (default: the process's).
 */
export async function runWorker(env?: NodeJS.ProcessEnv): Promise<void> {
  ignoreClosedStdio();
  const config = loadConfig(env);
  const logger = createLogger(config.log.level);
  // Heard from before the start, as the server's (src/server.ts): a signal while it starts stops it once started.
  const stopRequested = shutdownRequested({ logger, timeoutMs: config.ops.shutdownTimeoutMs });
  const container = await createContainer({ config, logger, open: { lockWaitMs: 0 } });
  try {
    const runtime = await startWorkerRuntime(container, { stopGraceMs: shutdownBudget(config.ops.shutdownTimeoutMs).drainMs });
    logger.info({ storage: container.database.kind }, 'webhook worker running');
    const signal = await stopRequested;
    logger.info({ signal }, 'webhook worker stopping');
    await runtime.stop();
  } finally {
    await container.close();
  }
}
