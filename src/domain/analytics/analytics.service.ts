import type { Clock } from '../clock.js';
import type { AnalyticsStore } from '../../store/analytics.store.js';
import { buildView, type AnalyticsView } from './analytics.view.js';
import { dayOf, periodOf, type AnalyticsInterval } from './period.js';

/** What the view reads. */
export type AnalyticsReader = Pick<AnalyticsStore, 'fold' | 'sums' | 'planNames'>;

/**
 * Money and growth of a project over a period (docs/analytics.md): MRR, members, churn, revenue,
 * from the per-day facts the database books with every payment and membership change.
 */
export class AnalyticsService {
  constructor(
    private readonly store: AnalyticsReader,
    private readonly clock: Clock,
  ) {}

  /** Throws a VALIDATION_ERROR naming a bad period (src/domain/analytics/period.ts). */
  async view(projectId: string, input: { from?: Date; to?: Date; interval?: AnalyticsInterval }): Promise<AnalyticsView> {
    const period = periodOf(input, this.clock.now());
    // Compaction only: the sums are the same whether or not this folds (it skips when another fold runs).
    await this.store.fold(projectId);
    const sums = await this.store.sums(projectId, dayOf(period.from), dayOf(period.to), period.interval);
    const names = await this.store.planNames(projectId);
    return buildView(period, sums, names);
  }
}
