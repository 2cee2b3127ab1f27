import type { Logger } from 'pino';
import { WakeLoop } from '../../wake-loop.js';

/**
 * Finishes bulk extends whose runner is gone (docs/memberships.md "Crashes"): at once, then every
 * `intervalMs` (src/wake-loop.ts). A job is taken only once its last batch is old (MembershipsService.resumeBulkExtends),
 * so a call still running, on this node or another, is left to itself; two resumers polling at
 * once do not take the same job.
 */

export const BULK_RESUME_INTERVAL_MS = 10_000;

/** What the resumer calls: finishes the stale jobs, returns how many (MembershipsService.resumeBulkExtends). */
export interface BulkExtendResumes {
  resumeBulkExtends(): Promise<number>;
}

export class BulkExtendResumer {
  private readonly loop: WakeLoop;

  constructor(memberships: BulkExtendResumes, logger: Logger, intervalMs = BULK_RESUME_INTERVAL_MS) {
    this.loop = new WakeLoop(
      async () => {
        const n = await memberships.resumeBulkExtends();
        if (n > 0) logger.info({ jobs: n }, 'finished interrupted bulk extends');
      },
      (err) => logger.error({ err }, 'resuming bulk extends failed'),
      intervalMs,
    );
  }

  /** Resumes now, then every `intervalMs`. */
  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
