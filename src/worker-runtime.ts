import type { Container } from './container.js';
import { startBulkExtendResumer } from './domain/memberships/bulk-extend.resumer.js';
import { ExpirySweeper } from './domain/memberships/expiry.sweeper.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from './webhooks/delivery.worker.js';
import { HttpSender } from './webhooks/http-sender.js';

/**
 * The background half of tenure: the webhook delivery worker with its wake-ups, and the expiry
 * sweeper. The server runs it in process (TENURE_WORKER, default on); `npx tenure worker` runs it
 * alone. Everything it needs comes from the container.
 */

export const SWEEP_INTERVAL_MS = 5_000;
export const SWEEP_BATCH = 5_000;
/**
 * Embedded storage runs one statement at a time on its one connection: a smaller batch, one at
 * a time, so API requests waiting behind a sweep wait for 1,000 rows, not 2 × 5,000.
 */
export const EMBEDDED_SWEEP_BATCH = 1_000;

export interface WorkerRuntimeOptions {
  random?: () => number;
  /** Per attempt (default 10 s, DESIGN.md). */
  timeoutMs?: number;
  /** The worker's safety poll (default 5 s). */
  pollMs?: number;
  sweepIntervalMs?: number;
  /** How long stopping waits for attempts in flight before aborting them (default TENURE_SHUTDOWN_TIMEOUT_MS). */
  stopGraceMs?: number;
}

export interface WorkerRuntime {
  worker: DeliveryWorker;
  sweeper: ExpirySweeper;
  stop(): Promise<void>;
}

export async function startWorkerRuntime(c: Container, o: WorkerRuntimeOptions = {}): Promise<WorkerRuntime> {
  const sender = new HttpSender();
  const { webhooks } = c.config;
  const worker = new DeliveryWorker(
    { store: c.stores.deliveries, sender, resolve: c.resolve, clock: c.clock, random: o.random ?? Math.random, logger: c.logger },
    {
      concurrency: webhooks.concurrency,
      perEndpoint: webhooks.endpointConcurrency,
      leaseMs: webhooks.leaseMs,
      allowPrivate: webhooks.allowPrivate,
      timeoutMs: o.timeoutMs ?? DEFAULT_WORKER_OPTIONS.timeoutMs,
      pollMs: o.pollMs ?? DEFAULT_WORKER_OPTIONS.pollMs,
      batchSize: DEFAULT_WORKER_OPTIONS.batchSize,
    },
  );
  const sweeper = new ExpirySweeper(c.stores.expiry, c.clock, c.logger, {
    intervalMs: o.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
    ...(c.database.kind === 'pglite' ? { batchSize: EMBEDDED_SWEEP_BATCH, lanes: 1 } : { batchSize: SWEEP_BATCH }),
  });
  let unsubscribe: () => void;
  try {
    // New deliveries committed by any process (a reconnection of the listener wakes it too).
    unsubscribe = await c.database.wakeups.subscribe('deliveries', () => worker.wake());
  } catch (err) {
    await sender.close();
    throw err;
  }
  worker.start();
  sweeper.start();
  const bulkResumer = startBulkExtendResumer(c.services.memberships, c.logger);
  const stopGraceMs = o.stopGraceMs ?? c.config.ops.shutdownTimeoutMs;
  return {
    worker,
    sweeper,
    async stop() {
      await Promise.all([worker.stop(stopGraceMs), sweeper.stop(), bulkResumer.stop()]);
      unsubscribe();
      await sender.close();
    },
  };
}
