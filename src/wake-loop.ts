/**
 * The loop of a background pass that drains work until none is left: woken after commits (a
 * wake-up topic, src/database/wakeups.ts) and by a slow safety poll. Wake-ups during a pass cause one
 * more pass, never one per wake-up; a failed pass is reported and left for the next wake-up. The
 * one loop style of tenure's timed and woken passes: the live-update broadcaster, the access
 * planner, drift repair (Discord and Telegram), the Stripe reconciliation, the expiry sweeper, the
 * history pruner, embedded storage's vacuumer, the bulk-extend resumer, the confirmations and the guild joins run on it.
 */
export class WakeLoop {
  private pending = false;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    /** One pass: drains what there is. A rejection goes to `onError`; the work stays for the next pass. */
    private readonly pass: (polled: boolean) => Promise<void>,
    private readonly onError: (err: unknown) => void,
    private readonly pollMs: number,
  ) {}

  /** Polls from now on, and makes a first pass (which counts as polled). */
  start(): void {
    this.timer = setInterval(() => this.run(true), this.pollMs);
    this.timer.unref();
    this.run(true);
  }

  wake(): void {
    this.run(false);
  }

  /** Resolves once no pass is running (tests: "everything committed so far is handled" after a wake). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private polled = false;

  private run(polled: boolean): void {
    if (this.stopped) return;
    this.pending = true;
    this.polled ||= polled;
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      this.pending = false;
      const polled = this.polled;
      this.polled = false;
      try {
        await this.pass(polled);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}

/**
 * A job that is its loop and nothing more to start or stop: start, wake, idle and stop are its
 * WakeLoop's (the access planner, the confirmations, the guild joins).
 */
export abstract class LoopJob {
  protected abstract readonly loop: WakeLoop;

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  /** Resolves once no pass is running (tests: "everything committed so far is handled" after a wake). */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}

/**
 * The sleep of a claim loop (the webhook delivery worker, the access worker): `ring` cuts a sleep
 * short, and a ring that comes while the loop is awake is remembered until the loop's next `reset`,
 * so the sleep that follows does not wait.
 */
export class Alarm {
  private rung = false;
  private interrupt: (() => void) | null = null;

  /** True while a sleep is under way. */
  get sleeping(): boolean {
    return this.interrupt !== null;
  }

  /** Rung since the last reset. */
  get rang(): boolean {
    return this.rung;
  }

  ring(): void {
    this.rung = true;
    this.interrupt?.();
  }

  /** At the top of each round of the loop: what rang before is being handled now. */
  reset(): void {
    this.rung = false;
  }

  /** Sleeps `ms`, or not at all once rung since the last reset. */
  sleep(ms: number): Promise<void> {
    if (this.rung) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.interrupt = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.interrupt = done;
    });
  }
}
