import type { ExportBatch, ExportKey, ExportsStore, MembershipExportFilter } from '../../store/exports.store.js';
import type { PaymentFilter } from '../../store/payments.store.js';
import type { Clock } from '../clock.js';
import type { MembershipView } from '../memberships/membership.view.js';
import type { PaymentView } from '../payments/payment.view.js';

/** The statements an export reads with. */
export type ExportStatements = Pick<ExportsStore, 'memberships' | 'payments'>;

/**
 * Rows read per statement. What an export holds in memory is about one batch (here, and in the
 * response's buffer while the client reads), whatever its size: a few hundred kilobytes. Larger
 * batches gained little speed on PostgreSQL (bench/export.ts) and would hold more.
 */
export const EXPORT_BATCH = 2_000;

/**
 * Exports (docs/memberships.md, "Export"): every row a list's filters match, in the list's order,
 * as batches the caller asks for one at a time, so a slow reader is never read ahead of. An
 * export is not a snapshot: each batch reads what is committed when it runs (see the docs).
 */
export class ExportsService {
  constructor(
    private readonly store: ExportStatements,
    private readonly clock: Clock,
    private readonly batchSize = EXPORT_BATCH,
  ) {}

  /** The memberships `filter` matches; each one's status as of the export's start, the same for all. */
  memberships(projectId: string, filter: MembershipExportFilter): AsyncGenerator<MembershipView[]> {
    const now = this.clock.now();
    return this.batches((key, limit) => this.store.memberships(projectId, filter, key, limit, now));
  }

  payments(projectId: string, filter: PaymentFilter): AsyncGenerator<PaymentView[]> {
    return this.batches((key, limit) => this.store.payments(projectId, filter, key, limit));
  }

  private async *batches<T>(read: (key: ExportKey | null, limit: number) => Promise<ExportBatch<T>>): AsyncGenerator<T[]> {
    let key: ExportKey | null = null;
    for (;;) {
      const batch = await read(key, this.batchSize);
      if (batch.rows.length > 0) yield batch.rows;
      if (batch.rows.length < this.batchSize || batch.last === null) return;
      key = batch.last;
    }
  }
}
