import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { Database } from '../store/db.js';
import { DeliveriesStore } from '../store/deliveries.store.js';
import { ExpiryStore } from '../store/expiry.store.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from './delivery.worker.js';
import { ExpirySweeper } from './expiry.sweeper.js';
import { HttpSender } from './http-sender.js';
import { listenForDeliveries, type Notifier } from './notifier.js';
import { systemResolver, type Resolver } from './ssrf-guard.js';

/**
 * The background half of tenure: the delivery worker, its wake-ups and the expiry sweeper. The
 * server runs it in process (TENURE_WORKER, default on); `npx tenure worker` runs it alone.
 */

export const SWEEP_INTERVAL_MS = 5_000;
const SWEEP_BATCH = 1_000;

export interface WebhookRuntimeOptions {
  database: Database;
  config: Config;
  logger: Logger;
  /** PostgreSQL URL for LISTEN; null on embedded storage. */
  postgresUrl: string | null;
  clock?: Clock;
  resolve?: Resolver;
  random?: () => number;
  /** Overrides for tests: attempt timeout, idle poll, sweep interval, stop grace, projects served. */
  timeoutMs?: number;
  pollMs?: number;
  sweepIntervalMs?: number;
  /** How long stopping waits for attempts in flight before aborting them (default 5 s). */
  stopGraceMs?: number;
  projectIds?: () => readonly string[] | null;
}

export interface WebhookRuntime {
  worker: DeliveryWorker;
  sweeper: ExpirySweeper;
  stop(): Promise<void>;
}

export async function startWebhookRuntime(o: WebhookRuntimeOptions): Promise<WebhookRuntime> {
  const clock = o.clock ?? systemClock;
  const projectIds = o.projectIds ?? (() => null);
  const sender = new HttpSender();
  const { webhooks } = o.config;
  const worker = new DeliveryWorker(
    {
      store: new DeliveriesStore(o.database.db),
      sender,
      resolve: o.resolve ?? systemResolver,
      clock,
      random: o.random ?? Math.random,
      logger: o.logger,
    },
    {
      concurrency: webhooks.concurrency,
      perEndpoint: webhooks.endpointConcurrency,
      leaseMs: webhooks.leaseMs,
      allowPrivate: webhooks.allowPrivate,
      timeoutMs: o.timeoutMs ?? DEFAULT_WORKER_OPTIONS.timeoutMs,
      pollMs: o.pollMs ?? DEFAULT_WORKER_OPTIONS.pollMs,
      batchSize: DEFAULT_WORKER_OPTIONS.batchSize,
      projectIds,
    },
  );
  const sweeper = new ExpirySweeper(new ExpiryStore(o.database.db), clock, o.logger, {
    intervalMs: o.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
    batchSize: SWEEP_BATCH,
    projectIds,
  });
  let notifier: Notifier;
  try {
    notifier = await listenForDeliveries(o.database, o.postgresUrl, () => worker.wake(), o.logger);
  } catch (err) {
    await sender.close();
    throw err;
  }
  worker.start();
  sweeper.start();
  return {
    worker,
    sweeper,
    async stop() {
      await Promise.all([worker.stop(o.stopGraceMs), sweeper.stop()]);
      await notifier.close();
      await sender.close();
    },
  };
}
