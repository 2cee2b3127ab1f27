import type { ListKey } from '../../store/keyset.js';
import type { PaymentFilter, PaymentsStore } from '../../store/payments.store.js';
import type { PaymentView } from './payment.view.js';

/** What listing payments reads. */
export type PaymentsReader = Pick<PaymentsStore, 'list' | 'listAfter'>;

export const PAYMENT_STATUSES = ['succeeded', 'refunded', 'disputed', 'failed'] as const;

/** The payments recorded from the providers' events (docs/payments.md, "Payments"): read only. */
export class PaymentsService {
  constructor(private readonly store: PaymentsReader) {}

  list(projectId: string, filter: PaymentFilter & { limit: number; offset: number }): Promise<{ items: PaymentView[]; total: number }> {
    return this.store.list(projectId, filter);
  }

  /** A cursor page: the payments after `after` (null: from the start), without a total. */
  listAfter(projectId: string, filter: PaymentFilter & { limit: number }, after: ListKey | null): Promise<{ items: PaymentView[]; next: ListKey | null }> {
    return this.store.listAfter(projectId, filter, after);
  }
}
