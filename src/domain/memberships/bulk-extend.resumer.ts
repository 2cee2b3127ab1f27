import type { Logger } from 'pino';
import type { MembershipsService } from './memberships.service.js';

/**
 * Finishes bulk extends whose runner is gone (docs/memberships.md "Crashes"): at once, then every
 * `intervalMs`. A job is taken only once its last batch is old (MembershipsService.resumeBulkExtends),
 * so a call still running, on this node or another, is left to itself; two resumers polling at
 * once do not take the same job.
 */

export const BULK_RESUME_INTERVAL_MS = 10_000;

export interface BulkExtendResumer {
  stop(): Promise<void>;
}

export function startBulkExtendResumer(
  memberships: MembershipsService,
  logger: Logger,
  intervalMs = BULK_RESUME_INTERVAL_MS,
): BulkExtendResumer {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = memberships
        .resumeBulkExtends()
        .then((n) => {
          if (n > 0) logger.info({ jobs: n }, 'finished interrupted bulk extends');
        })
        .catch((err: unknown) => logger.error({ err }, 'resuming bulk extends failed'))
        .finally(() => schedule(intervalMs));
    }, delayMs);
    timer.unref();
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
