import type { Logger } from 'pino';

/**
 * How the long-running commands (`tenure serve`, `tenure worker`) end. The first SIGTERM or SIGINT
 * starts a clean stop, and the process is gone within TENURE_SHUTDOWN_TIMEOUT_MS whatever happens:
 * a close that never settles, a dead stdout or stderr pipe, a failing log write. A second signal
 * means "now". Orchestrators size their kill timer on that one number, so it bounds the whole stop.
 */

/**
 * The shutdown timeout, split: work in flight (requests, webhook attempts) may take `drainMs`; the
 * rest, at least a quarter second and at most one, is kept to cut connections, give leases back
 * and release the data directory lock (well under that normally). At `exitMs` the process exits 1
 * without them: a lock left behind goes stale by itself, and leases expire. A timeout under a
 * second still leaves the stop a second in all, so that 0 ("don't wait for work in flight") can
 * end cleanly.
 */
export function shutdownBudget(timeoutMs: number): { drainMs: number; exitMs: number } {
  const reserveMs = Math.min(1_000, Math.max(250, Math.floor(timeoutMs / 4)));
  return { drainMs: Math.max(0, timeoutMs - reserveMs), exitMs: Math.max(timeoutMs, 1_000) };
}

export interface ShutdownOptions {
  logger: Logger;
  /** TENURE_SHUTDOWN_TIMEOUT_MS: how long work in flight may take to finish. */
  timeoutMs: number;
}

let stdioGuarded = false;

/**
 * A write to a closed stdout or stderr pipe (EPIPE) is reported as an 'error' event; with no
 * listener it would be thrown as an uncaught exception, in the middle of whatever wrote the line.
 * A process whose reader went away has no one to tell, so such errors are dropped.
 */
export function ignoreClosedStdio(): void {
  if (stdioGuarded) return;
  stdioGuarded = true;
  const drop = () => {};
  process.stdout.on('error', drop);
  process.stderr.on('error', drop);
}

/**
 * Resolves with the first SIGTERM or SIGINT. From then on a timer (unref'd, so it never holds a
 * process that has finished) exits 1 at the budget's `exitMs`, and a second signal exits 1 at once.
 */
export function shutdownRequested({ logger, timeoutMs }: ShutdownOptions): Promise<NodeJS.Signals> {
  ignoreClosedStdio();
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        // The data directory lock goes stale by itself; leases expire.
        logger.warn({ signal }, 'second signal during shutdown; exiting at once');
        process.exit(1);
      }
      stopping = true;
      const deadlineMs = shutdownBudget(timeoutMs).exitMs;
      setTimeout(() => {
        logger.error({ deadline_ms: deadlineMs }, 'shutdown did not finish in time; exiting without it');
        process.exit(1);
      }, deadlineMs).unref();
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
