import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { GroupCommit } from '../group-commit.js';
import { countDeliveryOutcome } from '../observability/delivery-outcomes.js';
import type { AttemptRecord, DeliveriesStore } from '../store/deliveries.store.js';

/** Attempts recorded per statement at most. */
const RECORD_BATCH = 200;

/**
 * Records finished attempts with group commit (src/group-commit.ts): attempts that finish while a
 * write is under way are written together by the next one — one statement per batch instead of
 * one per attempt, without a timer, so an idle worker adds no latency. `record` resolves once the attempt is
 * written (or rejects when the write failed: the lease then runs out and the delivery is sent
 * again — at least once).
 */
export class AttemptRecorder {
  private readonly batches = new GroupCommit<AttemptRecord, void>(RECORD_BATCH, (records) => this.writeBatch(records));

  constructor(
    private readonly store: DeliveriesStore,
    private readonly workerId: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  record(record: AttemptRecord): Promise<void> {
    return this.batches.add(record);
  }

  private async writeBatch(records: AttemptRecord[]): Promise<void> {
    const { recorded, disabledWebhookIds } = await this.store.completeMany(this.workerId, records);
    for (const record of records) if (recorded.has(record.id)) countDeliveryOutcome(record.outcome);
    for (const record of records) {
      if (!recorded.has(record.id)) {
        this.logger.warn(
          { delivery_id: record.id, attempt: record.attempt },
          'webhook attempt not recorded: its lease was taken over, or the delivery was cancelled or deleted meanwhile',
        );
      }
    }
    for (const webhookId of disabledWebhookIds) {
      const cancelled = await this.store.cancelPending(webhookId, this.clock.now());
      this.logger.warn({ webhook_id: webhookId, cancelled }, 'disabled a webhook whose deliveries all failed for 5 days');
    }
  }
}
