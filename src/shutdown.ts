import type { Logger } from 'pino';

/**
 * How the long-running commands (`tenure serve`, `tenure worker`) end. The first SIGTERM or SIGINT
 * starts a clean stop: work in flight gets TENURE_SHUTDOWN_TIMEOUT_MS to finish, then connections
 * are cut and leases given back. From that signal on the process ends whatever happens: a close
 * that never settles, a dead stdout or stderr pipe, a failing log write. A second signal means
 * "now".
 */

/**
 * After the shutdown timeout, the time left to cut connections, give leases back and release the
 * data directory lock (well under a second normally). Past it the process exits 1 without them:
 * a lock left behind goes stale by itself, and leases expire.
 */
export const CLOSE_GRACE_MS = 5_000;

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
 * process that has finished) exits 1 at `timeoutMs + CLOSE_GRACE_MS`, and a second signal exits 1
 * at once.
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
      const deadlineMs = timeoutMs + CLOSE_GRACE_MS;
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
