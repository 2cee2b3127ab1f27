import { AccessWorker } from './access/access.worker.js';
import { AccessPlanner, EMBEDDED_PLAN_BATCH, PLAN_BATCH, PLAN_POLL_MS } from './access/planner.js';
import type { TelegramClient } from './access/telegram/client.js';
import { startTelegramUpdates, telegramUpdatesDeps, type TelegramUpdatesHandle } from './access/telegram/updates-runner.js';
import { createAccessWorker, createConfirmationJob, createDiscordGateways, createReconciler, createTelegramAccessWorker, createTelegramReconciler } from './platform-jobs.js';
import { checkJobs, job, startJobs, stopJobs, type JobEntry, type JobsByName } from './background-jobs.js';
import type { Container } from './container.js';
import { MISSING_KEY_MESSAGE } from './domain/integrations/encryption-key.js';
import { BulkExtendResumer } from './domain/memberships/bulk-extend.resumer.js';
import { ExpirySweeper } from './domain/memberships/expiry.sweeper.js';
import { DEFAULT_REMINDERS_OPTIONS, RemindersJob } from './domain/lifecycle/reminders.job.js';
import { StripeReconciler } from './domain/payments/stripe.reconciler.js';
import { EMBEDDED_VACUUM_THRESHOLDS, EmbeddedVacuumer } from './domain/retention/embedded.vacuumer.js';
import { HistoryPruner } from './domain/retention/history.pruner.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from './webhooks/delivery.worker.js';
import { HttpSender } from './webhooks/http-sender.js';
import { createGuildJoinJob } from './web/guild-join-job.js';

/**
 * The background half of tenure: the jobs of JOB_NAMES, built from the container and registered
 * in one list (`jobList`), from which they are started, stopped and exposed (src/background-jobs.ts):
 * the webhook delivery worker, the access planner and the access workers, woken by commits, and
 * the loops on a timer. The server runs it in process (TENURE_WORKER, default on); `npx tenure
 * worker` runs it alone.
 */

export const SWEEP_INTERVAL_MS = 5_000;
export const SWEEP_BATCH = 5_000;
/** History past TENURE_HISTORY_RETENTION is pruned this often, this many events a batch (docs/operations.md, "Retention"). */
export const PRUNE_INTERVAL_MS = 10 * 60_000;
export const PRUNE_BATCH = 1_000;
/**
 * Embedded storage looks for tables due a vacuum this often (docs/operations.md, "Embedded storage
 * maintenance"): half a minute's churn at a few hundred writes a second, ~10,000 dead rows, is a
 * vacuum of about 10 ms. A constant, as the pruner's interval is.
 */
export const VACUUM_INTERVAL_MS = 30_000;
/**
 * Embedded storage runs one statement at a time on its one connection: a smaller batch, one at
 * a time, so API requests waiting behind a sweep wait for 1,000 rows, not 2 × 5,000.
 */
export const EMBEDDED_SWEEP_BATCH = 1_000;

export interface WorkerRuntimeOptions {
  random?: () => number;
  /** Per attempt (default TENURE_WEBHOOK_TIMEOUT_SECONDS, 10 s). */
  timeoutMs?: number;
  /** The worker's safety poll (default 5 s). */
  pollMs?: number;
  sweepIntervalMs?: number;
  /** How often the reminders' pass runs (default 5 s). */
  remindersIntervalMs?: number;
  /** How long stopping waits for attempts in flight before aborting them (default TENURE_SHUTDOWN_TIMEOUT_MS). */
  stopGraceMs?: number;
}

/**
 * Every job a worker process runs, each under the name the runtime exposes it by. Each is in
 * `jobList` once, null where it is off in this process: a job under another name does not compile,
 * and a name without a job, or with two, stops the start (checkJobs).
 */
export const JOB_NAMES = [
  'worker',
  'sweeper',
  'pruner',
  'vacuumer',
  'payments',
  'planner',
  'discordGateway',
  'access',
  'telegramUpdates',
  'telegram',
  'reconciler',
  'telegramReconciler',
  'bulkResumer',
  'confirmations',
  'guildJoins',
  'reminders',
] as const;

/**
 * The stages of a stop (docs/operations.md, "Shutdown"), one after the other: drift repair and the
 * confirmations first (their calls use the bots' clients, which the access workers close: a
 * message out finishes rather than being cut off, delivered yet unrecorded), then each Telegram bot's
 * updates and each Discord bot's gateway (the same clients), then the rest together: webhook attempts and platform calls in
 * flight get the stop's grace.
 */
const STOP = { driftRepair: 0, confirmations: 0, telegramUpdates: 1, discordGateway: 1, rest: 2 } as const;

/**
 * The one list of background jobs, in the order they start: the access workers before their
 * drift repair, a Telegram bot's updates runner before the worker that takes the bots (it hears
 * each bot taken).
 */
function jobList(c: Container, o: WorkerRuntimeOptions, sender: HttpSender) {
  const { webhooks } = c.config;
  const embedded = c.database.kind === 'pglite';
  const stopGraceMs = o.stopGraceMs ?? c.config.ops.shutdownTimeoutMs;
  const worker = new DeliveryWorker(
    { store: c.stores.deliveries, sender, resolve: c.resolve, clock: c.clock, random: o.random ?? Math.random, logger: c.logger, secrets: c.webhookSecrets },
    {
      concurrency: webhooks.concurrency,
      perEndpoint: webhooks.endpointConcurrency,
      leaseMs: webhooks.leaseMs,
      allowPrivate: webhooks.allowPrivate,
      timeoutMs: o.timeoutMs ?? webhooks.timeoutMs,
      pollMs: o.pollMs ?? DEFAULT_WORKER_OPTIONS.pollMs,
      batchSize: DEFAULT_WORKER_OPTIONS.batchSize,
    },
  );
  const access = createAccessWorker(c, o);
  const telegram = createTelegramAccessWorker(c, o);
  return [
    job('worker', worker, { stopStage: STOP.rest, stop: () => worker.stop(stopGraceMs) }),
    job(
      'sweeper',
      new ExpirySweeper(c.stores.expiry, c.clock, c.logger, {
        intervalMs: o.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
        ...(embedded ? { batchSize: EMBEDDED_SWEEP_BATCH, lanes: 1 } : { batchSize: SWEEP_BATCH }),
      }),
      { stopStage: STOP.rest },
    ),
    job(
      'pruner',
      new HistoryPruner(c.stores.retention, c.clock, c.logger, { retentionMs: c.config.retention.historyMs, intervalMs: PRUNE_INTERVAL_MS, batchSize: PRUNE_BATCH }),
      { stopStage: STOP.rest },
    ),
    // Embedded storage runs no autovacuum; on PostgreSQL it is autovacuum's job.
    job('vacuumer', embedded ? new EmbeddedVacuumer(c.stores.maintenance, c.logger, { intervalMs: VACUUM_INTERVAL_MS, thresholds: EMBEDDED_VACUUM_THRESHOLDS }) : null, {
      stopStage: STOP.rest,
    }),
    // Stripe events the webhook missed (docs/payments.md, "Reconciliation").
    job(
      'payments',
      new StripeReconciler(c.stores.merchantAccounts, c.services.stripeEvents, c.stripe, c.secretBox, c.clock, c.logger, { intervalMs: c.config.payments.reconcileMs }),
      { stopStage: STOP.rest },
    ),
    job('planner', new AccessPlanner(c.stores.accessPlan, c.logger, { pollMs: PLAN_POLL_MS, batchSize: embedded ? EMBEDDED_PLAN_BATCH : PLAN_BATCH }), { stopStage: STOP.rest }),
    // Each Discord bot's gateway connection, opened by the process holding it (src/access/discord/gateway.ts).
    job('discordGateway', access ? createDiscordGateways(c, access) : null, { stopStage: STOP.discordGateway }),
    job('access', access, { stopStage: STOP.rest, stop: async () => access?.stop(stopGraceMs) }),
    // Each Telegram bot's updates, received and handled by the process holding it (src/access/telegram/updates-runner.ts).
    job('telegramUpdates', telegram ? telegramUpdatesJob(telegram, c) : null, { stopStage: STOP.telegramUpdates }),
    job('telegram', telegram, { stopStage: STOP.rest, stop: async () => telegram?.stop(stopGraceMs) }),
    job('reconciler', access ? createReconciler(c, access) : null, { stopStage: STOP.driftRepair }),
    job('telegramReconciler', telegram ? createTelegramReconciler(c, telegram) : null, { stopStage: STOP.driftRepair }),
    job('bulkResumer', new BulkExtendResumer(c.services.memberships, c.logger), { stopStage: STOP.rest }),
    // The members' confirmations after a payment (docs/front-desk.md, "Confirmations"), sent with the access workers' bots; off without them.
    job('confirmations', createConfirmationJob(c, { discord: access, telegram }, o), { stopStage: STOP.confirmations }),
    // Members who logged in with Discord on the web, added to the plan's guilds after paying (docs/web.md); off without a secret box.
    job('guildJoins', createGuildJoinJob(c), { stopStage: STOP.rest }),
    // Reminders before memberships end (docs/lifecycle.md): their events and the messages the confirmations job sends.
    job('reminders', new RemindersJob(c.stores.reminders, c.clock, c.logger, {
        intervalMs: o.remindersIntervalMs ?? DEFAULT_REMINDERS_OPTIONS.intervalMs,
        // Embedded storage: one connection, so smaller batches, as the sweeper's.
        batchSize: embedded ? EMBEDDED_SWEEP_BATCH : DEFAULT_REMINDERS_OPTIONS.batchSize,
      }), { stopStage: STOP.rest }),
  ] as const satisfies readonly JobEntry<(typeof JOB_NAMES)[number]>[];
}

/** The updates runner of the Telegram bots `telegram` holds, as a job: the runner is made on start. */
function telegramUpdatesJob(telegram: AccessWorker<TelegramClient>, c: Container) {
  let running: TelegramUpdatesHandle | null = null;
  return {
    /** The bots whose updates this process handles now, by project (empty until started). */
    get bots(): TelegramUpdatesHandle['bots'] {
      return running?.bots ?? new Map();
    },
    start() {
      running = startTelegramUpdates(telegram, telegramUpdatesDeps(c));
    },
    async stop() {
      await running?.stop();
    },
  };
}

/**
 * The jobs of a started runtime by name (`runtime.planner.idle()`, `runtime.access?.state`), each
 * as the list built it: null where it is off in this process (embedded storage's vacuumer on
 * PostgreSQL; the access workers and their drift repair without a secret box).
 */
export type WorkerRuntime = JobsByName<ReturnType<typeof jobList>> & {
  /** The list, in start order. */
  readonly jobs: ReturnType<typeof jobList>;
  stop(): Promise<void>;
};

export async function startWorkerRuntime(c: Container, o: WorkerRuntimeOptions = {}): Promise<WorkerRuntime> {
  // PostgreSQL without TENURE_ENCRYPTION_KEY: no bot token can be opened, said once per process.
  if (!c.secretBox) c.logger.warn({ variable: 'TENURE_ENCRYPTION_KEY' }, MISSING_KEY_MESSAGE);
  const sender = new HttpSender();
  const jobs = jobList(c, o, sender);
  const byName = Object.fromEntries(jobs.map((j) => [j.name, j.runs])) as JobsByName<typeof jobs>;
  const { worker, planner, access, telegram, confirmations } = byName;
  const unsubscribe: (() => void)[] = [];
  try {
    checkJobs(JOB_NAMES, jobs);
    // New deliveries committed by any process (a reconnection of the listener wakes it too).
    unsubscribe.push(await c.database.wakeups.subscribe('deliveries', () => worker.wake()));
    // New events committed by any process: the access planner reads them; a payment's confirmation
    // and a Telegram invite link are committed with events too.
    unsubscribe.push(
      await c.database.wakeups.subscribe('events', () => {
        planner.wake();
        confirmations?.wake();
      }),
    );
    // Access rows made pending by any process (the planner, drift repair): the access workers call the platforms.
    if (access || telegram) {
      unsubscribe.push(
        await c.database.wakeups.subscribe('access', () => {
          access?.wake();
          telegram?.wake();
        }),
      );
    }
  } catch (err) {
    for (const stop of unsubscribe) stop();
    await sender.close();
    throw err;
  }
  startJobs(jobs);
  return {
    ...byName,
    jobs,
    async stop() {
      await stopJobs(jobs);
      for (const stop of unsubscribe) stop();
      await sender.close();
    },
  };
}
