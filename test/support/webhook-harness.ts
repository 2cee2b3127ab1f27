import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { systemClock, type Clock } from '../../src/domain/clock.js';
import { rowsOf } from '../../src/database/db.js';
import { webhookBody } from '../../src/store/outbox.js';
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker } from '../../src/webhooks/delivery.worker.js';
import { HttpSender } from '../../src/webhooks/http-sender.js';
import type { Resolver } from '../../src/webhooks/ssrf-guard.js';
import { startWorkerRuntime, type WorkerRuntime } from '../../src/worker-runtime.js';
import { createHarness, type Harness, type Tenant } from './harness.js';

/**
 * The webhook suites' harness, on top of `createHarness`: the real app and its own database, plus
 * a delivery worker wired as the server wires it (from the same container).
 *
 * With `manualClock` the worker, the services and the app share a clock that moves only when
 * the test says; it starts ten minutes ahead of the wall clock so that deliveries the database
 * stamps with its own `now()` are already due for it.
 */

export class ManualClock implements Clock {
  private at: number;
  constructor(start: Date) {
    this.at = start.getTime();
  }
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at += ms;
  }
  set(to: Date): void {
    this.at = to.getTime();
  }
}

export interface WebhookHarnessOptions {
  /** TENURE_WEBHOOK_ALLOW_PRIVATE (default true: the receiver is on 127.0.0.1). */
  allowPrivate?: boolean;
  manualClock?: boolean;
  /** Name resolution for the SSRF guard, in the services and the worker. */
  resolve?: Resolver;
  random?: () => number;
  timeoutMs?: number;
  env?: Record<string, string>;
  /** The container's logger (the worker's too): a test may read what it logged. */
  logger?: Logger;
}

export interface WebhookHarness {
  h: Harness;
  clock: ManualClock | Clock;
  worker: DeliveryWorker;
  tenant(): Promise<Tenant>;
  /** Advances the manual clock. */
  advance(ms: number): void;
  /** The whole runtime (worker loop, wake-ups, sweeper) as the server starts it. */
  startRuntime(options?: { pollMs?: number; sweepIntervalMs?: number; timeoutMs?: number; stopGraceMs?: number }): Promise<WorkerRuntime>;
  close(): Promise<void>;
}

export async function createWebhookHarness(o: WebhookHarnessOptions = {}): Promise<WebhookHarness> {
  const clock = o.manualClock ? new ManualClock(new Date(Date.now() + 10 * 60_000)) : systemClock;
  const h = await createHarness({
    env: { TENURE_WEBHOOK_ALLOW_PRIVATE: String(o.allowPrivate ?? true), ...o.env },
    clock,
    resolve: o.resolve,
    logger: o.logger,
  });
  const { stores, resolve, logger } = h.container;
  const sender = new HttpSender();
  const random = o.random ?? Math.random;
  const timeoutMs = o.timeoutMs ?? DEFAULT_WORKER_OPTIONS.timeoutMs;
  const worker = new DeliveryWorker(
    { store: stores.deliveries, sender, resolve, clock, random, logger, secrets: h.container.webhookSecrets },
    {
      concurrency: h.config.webhooks.concurrency,
      perEndpoint: h.config.webhooks.endpointConcurrency,
      leaseMs: h.config.webhooks.leaseMs,
      allowPrivate: h.config.webhooks.allowPrivate,
      timeoutMs,
      pollMs: DEFAULT_WORKER_OPTIONS.pollMs,
      batchSize: DEFAULT_WORKER_OPTIONS.batchSize,
    },
  );
  const runtimes: WorkerRuntime[] = [];
  return {
    h,
    clock,
    worker,
    tenant: () => h.tenant(),
    advance(ms) {
      if (!(clock instanceof ManualClock)) throw new Error('advance needs manualClock');
      clock.advance(ms);
    },
    async startRuntime(options = {}) {
      const runtime = await startWorkerRuntime(h.container, { random, timeoutMs, stopGraceMs: 0, ...options });
      runtimes.push(runtime);
      return runtime;
    },
    async close() {
      await Promise.all(runtimes.map((r) => r.stop()));
      await worker.stop(0);
      await sender.close();
      await h.close();
    },
  };
}

// ── Direct looks at the delivery tables ──────────────────────────────────────────────────────

const isoCol = (column: string) => sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  leased_by: string | null;
}

/** A project's deliveries, in event order then webhook id. */
export async function deliveryRows(h: Harness, projectId: string): Promise<DeliveryRow[]> {
  return rowsOf<DeliveryRow>(
    await h.database.db.execute(sql`
      SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts,
             ${isoCol('d.next_attempt_at')} AS next_attempt_at, d.leased_by
      FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.project_id = ${projectId} ORDER BY e.seq, d.webhook_id, d.created_at`),
  );
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error_class: string | null;
  error_message: string | null;
  response_excerpt: string | null;
  outcome: string;
  next_attempt_at: string | null;
}

export async function attemptRows(h: Harness, deliveryId: string): Promise<AttemptRow[]> {
  return rowsOf<AttemptRow>(
    await h.database.db.execute(sql`
      SELECT delivery_id, attempt, ${isoCol('attempted_at')} AS attempted_at, status_code, error_class, error_message,
             response_excerpt, outcome, ${isoCol('next_attempt_at')} AS next_attempt_at
      FROM webhook_delivery_attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt, attempted_at`),
  );
}

/** The body every attempt of a delivery of the event sends, rendered as the claim renders it. */
export async function webhookBodyOf(h: Harness, eventId: string): Promise<string> {
  const [row] = rowsOf<{ body: string }>(await h.database.db.execute(sql`SELECT ${webhookBody('e')} AS body FROM events e WHERE e.id = ${eventId}`));
  expect(row, `no event ${eventId}`).toBeDefined();
  return row!.body;
}

/** Creates a webhook through the API of `t` and returns it (the receiver path tells requests apart). */
export async function createHook(t: Tenant, url: string): Promise<{ id: string; url: string; secret: string }> {
  const res = await t.request({ method: 'POST', url: `${t.base}/integrations/webhooks`, payload: { url } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Waits (bounded) until `predicate` holds, checking every few milliseconds; no timing is asserted. */
export async function eventually(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
