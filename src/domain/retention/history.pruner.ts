import type { Logger } from 'pino';
import type { RetentionStore } from '../../store/retention.store.js';
import { WakeLoop } from '../../wake-loop.js';
import type { Clock } from '../clock.js';

/** The statements of RetentionStore this uses (a narrow port: tests give it a small twin). */
export type RetentionStatements = Pick<RetentionStore, 'pruneEvents' | 'pruneTelegramUpdates' | 'pruneNotifications' | 'pruneGuildJoins' | 'pruneWebLogins' | 'prunePayLinks' | 'prunePortalLinks'>;

/**
 * Prunes history older than TENURE_HISTORY_RETENTION (docs/operations.md, "Retention"): events
 * with their deliveries and attempts, handled Telegram updates, settled confirmations, and pay and
 * portal links that ended before it, in small batches one after another until a batch comes back
 * short, then again after `intervalMs`. Every worker process runs one; they skip each other's rows.
 */

export interface HistoryPrunerOptions {
  retentionMs: number;
  intervalMs: number;
  batchSize: number;
}

export class HistoryPruner {
  private readonly loop: WakeLoop;

  constructor(
    private readonly store: RetentionStatements,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: HistoryPrunerOptions,
  ) {
    this.loop = new WakeLoop(
      async () => {
        const pruned = await this.pruneOnce();
        if (Object.values(pruned).some((n) => n > 0)) this.logger.info(pruned, 'pruned history past its retention');
      },
      (err) => this.logger.error({ err }, 'pruning history failed; trying again later'),
      options.intervalMs,
    );
  }

  /** Prunes everything older than the retention now, batch after batch (a stop ends it after the batch in flight); returns what went. */
  async pruneOnce(): Promise<{ events: number; telegramUpdates: number; notifications: number; guildJoins: number; webLogins: number; payLinks: number; portalLinks: number }> {
    const before = new Date(this.clock.now().getTime() - this.options.retentionMs);
    const drain = async (batch: (before: Date, size: number) => Promise<number>) => {
      let total = 0;
      for (;;) {
        const n = await batch(before, this.options.batchSize);
        total += n;
        if (n < this.options.batchSize || this.loop.isStopped) return total;
      }
    };
    const events = await drain((b, size) => this.store.pruneEvents(b, size));
    const telegramUpdates = await drain((b, size) => this.store.pruneTelegramUpdates(b, size));
    // The members' confirmations once settled (docs/front-desk.md, "Confirmations"); pending ones stay.
    const notifications = await drain((b, size) => this.store.pruneNotifications(b, size));
    // Members on the web (docs/web.md): settled guild joins, and logins never finished.
    const guildJoins = await drain((b, size) => this.store.pruneGuildJoins(b, size));
    const webLogins = await drain((b, size) => this.store.pruneWebLogins(b, size));
    // Members' links (docs/front-desk.md): a link past its end only answers "expired"; once it is
    // past the retention too, it answers "not found" like any unknown link.
    const payLinks = await drain((b, size) => this.store.prunePayLinks(b, size));
    const portalLinks = await drain((b, size) => this.store.prunePortalLinks(b, size));
    return { events, telegramUpdates, notifications, guildJoins, webLogins, payLinks, portalLinks };
  }

  /** Prunes now, then every `intervalMs`. */
  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
