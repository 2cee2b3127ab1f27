import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClaimedDelivery } from '../store/deliveries.store.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { DeliveryAttempts, type DeliveryAttemptDeps } from './delivery-attempt.js';
import { projectConcurrency, SendSlots } from './send-slots.js';
import { Alarm } from '../wake-loop.js';

/**
 * The delivery worker. It claims due deliveries (src/store/delivery-claim.ts: fair across
 * endpoints and projects, SKIP LOCKED, a lease), sends each attempt within its endpoint's and its
 * project's bounds (send-slots.ts), and records the outcome under the lease (one attempt, from
 * its turn to its record: delivery-attempt.ts).
 * It sleeps until woken — by a new delivery's notification, a freed slot, or the next retry
 * falling due — never longer than `pollMs`, the safety net for a missed notification and for a
 * dead worker's leases running out.
 *
 * At least once: a delivery is only marked done after its receiver answered 2xx and the answer
 * was recorded; a worker that dies mid-attempt leaves the lease to expire and another worker sends
 * again, with the same body bytes and event id (receivers deduplicate on `webhook-id`).
 */

export interface DeliveryWorkerOptions {
  concurrency: number;
  perEndpoint: number;
  leaseMs: number;
  allowPrivate: boolean;
  /** Per attempt: TENURE_WEBHOOK_TIMEOUT_SECONDS, 10 s by default (docs/webhooks.md, "Retries"). */
  timeoutMs: number;
  pollMs: number;
  batchSize: number;
}

export const DEFAULT_WORKER_OPTIONS = { timeoutMs: 10_000, pollMs: 5_000, batchSize: 50 } as const;

/** What the worker needs: what its attempts need (the store, the sender, the resolver, the clocks, the logger). */
export type DeliveryWorkerDeps = DeliveryAttemptDeps;

interface Active {
  promise: Promise<void>;
  controller: AbortController;
}

export class DeliveryWorker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly slots: SendSlots;
  /** Where the next claim's walk over the endpoints resumes (null: from the first, a new lap). */
  private cursor: string | null = null;
  /** Deliveries claimed since the current lap over the endpoints began. */
  private lapClaimed = 0;
  /** The last claim ended a lap in which nothing was claimable: only then may the loop sleep. */
  private lapEmpty = false;
  /** One claimed delivery's attempt: its turn, the signed request, the outcome recorded. */
  private readonly attempts: DeliveryAttempts;
  /** The last claim was cut short by this process's concurrency: a recorded attempt should wake the loop. */
  private waitingForRoom = false;
  private readonly active = new Map<string, Active>();
  private readonly alarm = new Alarm();
  /**
   * The loop went to sleep with nothing claimable and nothing in flight. Woken from such a sleep,
   * it first reads when the first pending delivery falls due (one descent of the due index,
   * `firstDueAt`) and claims only once that is due: every write's wake-up (at most one per 25 ms,
   * src/database/wakeups.ts) then costs that read rather than a claim while no webhook has anything
   * to send. Nothing in flight means no endpoint or project is at this worker's bound, so a due
   * first entry is claimable.
   */
  private idle = false;

  /** `sleeping`: idle until woken or the next retry is due (observability, and tests). */
  get state(): 'stopped' | 'working' | 'sleeping' {
    if (!this.running) return 'stopped';
    return this.alarm.sleeping ? 'sleeping' : 'working';
  }

  /** Attempts in flight in this process: requests out, or answered and not yet recorded. */
  get inFlight(): number {
    return this.active.size - this.slots.queued;
  }

  constructor(
    private readonly deps: DeliveryWorkerDeps,
    private readonly options: DeliveryWorkerOptions,
  ) {
    this.slots = new SendSlots(options.perEndpoint, projectConcurrency(options.concurrency, options.perEndpoint));
    this.attempts = new DeliveryAttempts(deps, options, this.slots, new AttemptRecorder(deps.store, this.id, deps.clock, deps.logger));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // What this process cannot seal or open, said once by each worker (docs/webhooks.md, "Decisions").
    for (const note of this.deps.secrets.notes()) this.deps.logger[note.level](note.fields, note.message);
    this.loopDone = this.loop();
  }

  /** Something may be due: a new delivery was committed, or a slot freed up. */
  wake(): void {
    this.alarm.ring();
  }

  /**
   * Claims and sends until nothing is due and nothing is in flight; returns how many attempts
   * were made. For tests and one-off runs; not while the loop runs.
   */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.claimAndDispatch();
      total += claimed;
      if (claimed === 0 && this.lapEmpty && this.active.size === 0) return total;
      if (this.active.size > 0) await Promise.race([...this.active.values()].map((a) => a.promise));
    }
  }

  /**
   * Stops claiming, lets attempts in flight finish for up to `graceMs`, then aborts the rest and
   * gives their leases back (due at once, nothing recorded) so another worker sends them now.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    const settled = Promise.allSettled([...this.active.values()].map((a) => a.promise));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    if (this.active.size === 0) return;
    const abandoned = [...this.active.keys()];
    for (const a of this.active.values()) a.controller.abort();
    await Promise.allSettled([...this.active.values()].map((a) => a.promise));
    await this.deps.store.release(abandoned, this.id, this.deps.clock.now()).catch((err: unknown) => {
      this.deps.logger.warn({ err }, 'could not give back webhook delivery leases; they run out on their own');
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.alarm.reset();
      if (this.idle) {
        const wait = await this.untilFirstDue();
        if (!this.running) break;
        if (wait > 0) {
          await this.alarm.sleep(wait);
          continue;
        }
        this.idle = false;
      }
      let claimed: number;
      try {
        claimed = await this.claimAndDispatch();
        failures = 0;
      } catch (err) {
        failures++;
        this.deps.logger.error({ err }, 'claiming webhook deliveries failed');
        await this.alarm.sleep(Math.min(30_000, 250 * 2 ** failures));
        continue;
      }
      if (!this.running) break;
      // Room left, and something was claimed or the lap over the endpoints is not done: claim on.
      if (this.alarm.rang || ((claimed > 0 || !this.lapEmpty) && this.freeSlots() > 0)) continue;
      let delay = this.options.pollMs;
      try {
        delay = await this.idleDelay();
      } catch (err) {
        this.deps.logger.error({ err }, 'reading the next webhook delivery time failed');
      }
      this.idle = claimed === 0 && this.lapEmpty && this.active.size === 0;
      await this.alarm.sleep(delay);
    }
  }

  /**
   * Room for more attempts in this process. Deliveries waiting for their endpoint do not count:
   * only endpoints whose send slots are all taken have any, so they stay below the concurrency.
   */
  private freeSlots(): number {
    return this.options.concurrency - this.inFlight;
  }

  /** How long to sleep when nothing was claimable: until the next retry falls due, capped by pollMs. */
  private async idleDelay(): Promise<number> {
    if (this.freeSlots() <= 0) return this.options.pollMs; // a finishing attempt wakes us
    const now = this.deps.clock.now();
    const next = await this.deps.store.nextDueAt(now, this.slots.saturated());
    if (!next) return this.options.pollMs;
    return Math.max(0, Math.min(next.getTime() - now.getTime(), this.options.pollMs));
  }

  /** While idle: how long until the first pending delivery is due (0: now, or the read failed; the claim says why). */
  private async untilFirstDue(): Promise<number> {
    try {
      const first = await this.deps.store.firstDueAt();
      if (!first) return this.options.pollMs;
      return Math.max(0, Math.min(first.getTime() - this.deps.clock.now().getTime(), this.options.pollMs));
    } catch {
      return 0;
    }
  }

  private async claimAndDispatch(): Promise<number> {
    const free = this.freeSlots();
    if (free <= 0) {
      this.waitingForRoom = true;
      return 0;
    }
    const now = this.deps.clock.now();
    const leaseUntil = new Date(now.getTime() + this.options.leaseMs);
    const limit = Math.min(this.options.batchSize, free);
    if (this.cursor === null) this.lapClaimed = 0;
    const { deliveries: claimed, cursor } = await this.deps.store.claim({
      workerId: this.id,
      now,
      leaseUntil,
      limit,
      ...this.slots.claimBounds(),
      cursor: this.cursor,
    });
    this.cursor = cursor;
    this.lapClaimed += claimed.length;
    this.lapEmpty = cursor === null && this.lapClaimed === 0;
    // Limited by this process's room rather than by what was due: claim again when room frees up.
    this.waitingForRoom = claimed.length === limit && limit < this.options.batchSize;
    for (const delivery of claimed) this.dispatch(delivery, leaseUntil);
    return claimed.length;
  }

  /**
   * Takes a claimed delivery in hand. It keeps one of the process's slots until its outcome is
   * recorded, waits for one of its endpoint's send slots, and gives that back as soon as the
   * receiver has answered, so the next request to the endpoint overlaps the write of the last.
   */
  private dispatch(delivery: ClaimedDelivery, leaseUntil: Date): void {
    const controller = new AbortController();
    this.slots.onClaimed(delivery);
    let answered = false;
    const sendDone = (turn: 'sent' | 'unused' | 'none') => {
      if (answered) return;
      answered = true;
      // Claim again for this endpoint, or project, when one round of its slots is left: in
      // batches, not one by one.
      const left = this.slots.done(delivery, turn);
      if (left.endpoint === this.slots.perEndpoint || left.project === this.slots.perProject) this.wake();
    };
    const promise = this.attempts.run(delivery, leaseUntil, controller.signal, sendDone)
      .catch((err: unknown) => {
        // The lease stays; when it runs out the delivery is due again (at least once).
        this.deps.logger.error({ err, delivery_id: delivery.id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        sendDone('none');
        this.active.delete(delivery.id);
        if (this.waitingForRoom) this.wake();
      });
    this.active.set(delivery.id, { promise, controller });
  }
}
