import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markWrites } from '../../src/database/wakeups.js';
import { SLOW_MS } from '../../src/webhooks/send-slots.js';
import { createMembership } from '../support/api.js';
import { onPostgres, type Tenant } from '../support/harness.js';
import { createHook, createWebhookHarness, eventually, type WebhookHarness } from '../support/webhook-harness.js';
import { startReceiver, type Receiver, type ReceivedRequest } from '../support/webhook-receiver.js';

/**
 * Fairness through the worker as the server runs it (woken by commits, real receivers): one
 * project's backlog to slow receivers cannot hold the process's slots, so another project's event
 * goes out while every one of the slow requests is still held open, and the slow endpoints never
 * have more requests out than their bounds. The slow receiver answers only when the test says,
 * and never sooner than SLOW_MS (the project stays slow): the other event's arrival is compared
 * with that, not with a clock.
 *
 * Settings: 8 attempts per process, 2 per endpoint, so a slow project may have 4 out at once (half
 * the process's). The busy project has 5 endpoints: without the project's bound they could take all 8.
 */

const CONCURRENCY = 8;
const PER_ENDPOINT = 2;
const PER_PROJECT = 4;

describe(`webhook fairness across projects (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let w: WebhookHarness;
  let slow: Receiver;
  let fast: Receiver;
  /** What the worker logged at error level: a failing claim only delays, so it is looked for. */
  const errors: string[] = [];
  beforeAll(async () => {
    w = await createWebhookHarness({
      env: { TENURE_WEBHOOK_CONCURRENCY: String(CONCURRENCY), TENURE_WEBHOOK_ENDPOINT_CONCURRENCY: String(PER_ENDPOINT) },
      logger: pino({ level: 'error' }, { write: (line: string) => void errors.push(line) }),
    });
    slow = await startReceiver(() => 'stall');
    fast = await startReceiver(() => ({ status: 204 }));
  });
  afterAll(async () => {
    await w.close();
    await slow.close();
    await fast.close();
  });

  /** `n` events of `t`, written in one statement (as an import writes them) and fanned out to its webhooks; wakes the workers. */
  async function backlog(t: Tenant, n: number): Promise<void> {
    await w.h.database.db.execute(
      markWrites(
        sql`INSERT INTO events (project_id, type, data)
            SELECT ${t.projectId}, 'membership.created', jsonb_build_object('n', g) FROM generate_series(1, ${n}::int) g`,
        ['events', 'deliveries'],
      ),
    );
  }

  it("delivers another project's event while a backlog to stalled receivers is held, within the slow endpoints' bounds", async () => {
    const busy = await w.tenant();
    const other = await w.tenant();
    const slowHooks: string[] = [];
    for (let i = 0; i < 5; i++) slowHooks.push((await createHook(busy, `${slow.url}/slow/${i}`)).url);
    await createHook(other, `${fast.url}/fast`);
    await backlog(busy, 60); // 300 deliveries, 60 to each slow endpoint
    const runtime = await w.startRuntime({ pollMs: 5_000, sweepIntervalMs: 3_600_000, timeoutMs: 20_000 });
    try {
      let answered = 0; // slow requests answered so far (released by the test)
      const held = (): ReceivedRequest[] => slow.requests.slice(answered);
      const heldPerEndpoint = () =>
        held().reduce((m, r) => m.set(r.path, (m.get(r.path) ?? 0) + 1), new Map<string, number>());

      for (let round = 0; round < 3; round++) {
        // The busy project takes what it may: then its requests are all held open.
        await eventually(() => held().length >= PER_PROJECT, `the busy project holds ${PER_PROJECT} requests (round ${round})`);
        const before = fast.requests.length;
        await createMembership(other);
        await fast.waitUntil((r) => r.length > before, 10_000);
        // It went out while every slow request was still held: it did not wait for a slow slot;
        // and the busy project has its share out, no more.
        expect(held().length, 'slow requests held while the other project was served').toBe(PER_PROJECT);
        expect(Math.max(...heldPerEndpoint().values())).toBeLessThanOrEqual(PER_ENDPOINT);
        expect(slow.requests.every((r) => slowHooks.some((url) => url.endsWith(r.path)))).toBe(true);
        // The slow receiver answers what it holds, slowly; the worker moves on through the backlog.
        await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
        answered = slow.requests.length;
        slow.releaseStalled(200);
      }
      // Held requests only pile up until the test answers them, so each check just before an
      // answer covered every moment since the last: the bounds held throughout.
      await eventually(() => held().length >= PER_PROJECT, 'the busy project holds its requests again');
      expect(held().length).toBe(PER_PROJECT);
      expect(errors).toStrictEqual([]);
    } finally {
      await runtime.stop();
    }
  });
});
