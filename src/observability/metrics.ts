import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AccessWorkerStore } from '../store/access-worker.store.js';
import type { DeliveriesStore } from '../store/deliveries.store.js';
import { accessCallCounts, rateLimitedCounts, rateLimitWaitCounts } from './access-calls.js';
import { deliveryOutcomeCounts } from './delivery-outcomes.js';

/**
 * The app's Prometheus metrics (`GET /metrics`). Each app owns its Registry rather than
 * prom-client's global one, so tests that build many apps in one process never collide.
 * Values that live in the database (the delivery queue) are read when scraped, not tracked.
 */

export interface Metrics {
  readonly registry: Registry;
  /** `route` is the route pattern (`/v2/projects/:project_id/...`), never the raw URL. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  rateLimited(policy: string): void;
  /** Where the live-connections gauge reads from (the live-updates gateway). */
  setLiveConnectionsSource(source: () => number): void;
  /** The Prometheus text for a scrape. */
  scrape(): Promise<string>;
}

// From 1 ms to 10 s: an `extend` takes a few ms; anything past seconds is an incident.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(
  options: { deliveries?: Pick<DeliveriesStore, 'queueStats'>; access?: Pick<AccessWorkerStore, 'queueStats'> } = {},
): Metrics {
  const registry = new Registry();
  const registers = [registry];

  const requests = new Counter({
    name: 'tenure_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'tenure_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const rejections = new Counter({
    name: 'tenure_rate_limit_rejections_total',
    help: 'Requests refused with 429, by the policy that refused them (key, ip, burst, suspension)',
    labelNames: ['policy'] as const,
    registers,
  });
  new Counter({
    name: 'tenure_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome (delivered, retry, dropped, exhausted)',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const [outcome, n] of deliveryOutcomeCounts()) this.inc({ outcome }, n);
    },
  });

  // Access on Discord (docs/access-discord.md, "How tenure calls Discord"): counted by this process's access worker.
  new Counter({
    name: 'tenure_access_calls_total',
    help: 'Discord calls made by the access worker of this process, by outcome (granted, revoked, waiting_for_member, failed, retry, unauthorized)',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const [outcome, n] of accessCallCounts()) this.inc({ outcome }, n);
    },
  });
  new Counter({
    name: 'tenure_access_rate_limited_total',
    help: "429 answers to this process's Discord calls, by X-RateLimit-Scope (user: a route bucket, global: the bot's global limit, shared, unknown)",
    labelNames: ['scope'] as const,
    registers,
    collect() {
      this.reset();
      for (const [scope, n] of rateLimitedCounts()) this.inc({ scope }, n);
    },
  });
  new Counter({
    name: 'tenure_access_rate_limit_waits_total',
    help: 'Discord calls the REST library held back before sending, to keep to a route bucket or the global limit, by limit (route, global)',
    labelNames: ['limit'] as const,
    registers,
    collect() {
      this.reset();
      for (const [limit, n] of rateLimitWaitCounts()) this.inc({ limit }, n);
    },
  });

  let liveConnections: () => number = () => 0;
  new Gauge({
    name: 'tenure_live_connections',
    help: 'Open live-update (Socket.IO) connections on this node',
    registers,
    collect() {
      this.set(liveConnections());
    },
  });

  const { deliveries } = options;
  if (deliveries) {
    // Both gauges come from one query per scrape: the first collect runs it, the second reuses it.
    // A database that cannot answer leaves the gauges at their last values: the scrape still
    // succeeds, and /readyz is where an unreachable database shows.
    type Stats = Awaited<ReturnType<DeliveriesStore['queueStats']>> | null;
    let pending: Promise<Stats> | null = null;
    const stats = () =>
      (pending ??= deliveries
        .queueStats()
        .catch((): Stats => null)
        .finally(() => setImmediate(() => (pending = null))));
    new Gauge({
      name: 'tenure_webhook_queue_depth',
      help: 'Webhook deliveries waiting to be sent (pending, due now or scheduled for a retry)',
      registers,
      async collect() {
        const s = await stats();
        if (s) this.set(s.depth);
      },
    });
    new Gauge({
      name: 'tenure_webhook_queue_oldest_due_age_seconds',
      help: 'How long the oldest delivery that is due has been waiting (0 when none is due)',
      registers,
      async collect() {
        const s = await stats();
        if (s) this.set(s.oldestDueAgeSeconds);
      },
    });
  }

  const { access } = options;
  if (access) {
    // One query per scrape for both gauges, as for the webhook queue above.
    type Stats = Awaited<ReturnType<AccessWorkerStore['queueStats']>> | null;
    let pending: Promise<Stats> | null = null;
    const stats = () =>
      (pending ??= access
        .queueStats()
        .catch((): Stats => null)
        .finally(() => setImmediate(() => (pending = null))));
    new Gauge({
      name: 'tenure_access_queue_depth',
      help: 'Access rows waiting for a platform call (pending: due now, claimed, or scheduled for a retry)',
      registers,
      async collect() {
        const s = await stats();
        if (s) this.set(s.depth);
      },
    });
    new Gauge({
      name: 'tenure_access_queue_oldest_due_age_seconds',
      help: 'How long the oldest pending access row that is due has been waiting for its call (0 when none is due)',
      registers,
      async collect() {
        const s = await stats();
        if (s) this.set(s.oldestDueAgeSeconds);
      },
    });
  }

  let defaultsStarted = false;
  return {
    registry,
    observeRequest(method, route, status, seconds) {
      const labels = { method, route, status_code: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    rateLimited(policy) {
      rejections.inc({ policy });
    },
    setLiveConnectionsSource(source) {
      liveConnections = source;
    },
    async scrape() {
      // Process metrics start at the first scrape: they install an event-loop monitor and a GC
      // observer that are never removed, which apps that are never scraped (tests) need not carry.
      if (!defaultsStarted) {
        defaultsStarted = true;
        collectDefaultMetrics({ register: registry });
      }
      return registry.metrics();
    },
  };
}
