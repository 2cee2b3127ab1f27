import type { DashboardOverviewStore, OverviewCounts } from '../../store/dashboard-overview.store.js';
import type { Clock } from '../clock.js';

/** Counts past this are shown as "more than" it: the overview reads at most this many index entries per figure. */
export const OVERVIEW_CAP = 10_000;

/** The dashboard's overview (docs/dashboard.md, "Overview"): a few capped counts, cheap at any size. */
export class DashboardOverview {
  constructor(
    private readonly store: Pick<DashboardOverviewStore, 'counts'>,
    private readonly clock: Clock,
  ) {}

  counts(projectId: string): Promise<OverviewCounts> {
    return this.store.counts(projectId, this.clock.now(), OVERVIEW_CAP);
  }
}
