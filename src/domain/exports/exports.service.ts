import type { Readable } from 'node:stream';
import type { ExportBatch, ExportKey, ExportsStore, MembershipExportFilter } from '../../store/exports.store.js';
import type { PaymentFilter } from '../../store/payments.store.js';
import type { Clock } from '../clock.js';
import type { ExportFormat } from './export-format.js';
import type { MembershipView } from '../memberships/membership.view.js';
import type { PaymentView } from '../payments/payment.view.js';

/**
 * The statements an export reads with: keyset batches, and, where the storage has it, the whole
 * export written by the database (COPY), which answers null when it cannot serve this one.
 */
export type ExportStatements = Pick<ExportsStore, 'memberships' | 'payments'> & Partial<Pick<ExportsStore, 'copyMemberships' | 'copyPayments'>>;

/** An export's body: the file's bytes as the database wrote them, or rows for the caller to write. */
export type ExportBody<T> = { bytes: Readable } | { rows: AsyncGenerator<T[]> };

/**
 * Rows read per statement. What an export holds in memory is about one batch (here, and in the
 * response's buffer while the client reads), whatever its size: a few hundred kilobytes. Larger
 * batches gained little speed on PostgreSQL (bench/export.ts) and would hold more.
 */
export const EXPORT_BATCH = 2_000;

/**
 * Exports (docs/memberships.md, "Export"): every row a list's filters match, in the list's order.
 * On PostgreSQL the database writes the file (one COPY, read as the client reads); otherwise as
 * batches the caller asks for one at a time, so a slow reader is never read ahead of, each batch
 * reading what is committed when it runs (see the docs).
 */
export class ExportsService {
  constructor(
    private readonly store: ExportStatements,
    private readonly clock: Clock,
    private readonly batchSize = EXPORT_BATCH,
  ) {}

  /** The memberships `filter` matches; each one's status as of the export's start, the same for all. */
  async memberships(projectId: string, filter: MembershipExportFilter, format: ExportFormat): Promise<ExportBody<MembershipView>> {
    const now = this.clock.now();
    const bytes = await this.store.copyMemberships?.(projectId, filter, format, now);
    return bytes ? { bytes } : { rows: this.batches((key, limit) => this.store.memberships(projectId, filter, key, limit, now)) };
  }

  async payments(projectId: string, filter: PaymentFilter, format: ExportFormat): Promise<ExportBody<PaymentView>> {
    const bytes = await this.store.copyPayments?.(projectId, filter, format);
    return bytes ? { bytes } : { rows: this.batches((key, limit) => this.store.payments(projectId, filter, key, limit)) };
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
