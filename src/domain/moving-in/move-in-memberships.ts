import type { StagedMembership } from '../memberships/membership-import.js';
import { LOCAL_PAGE, type MoveInServices } from './move-in-ports.js';
import type { Ledger } from './move-in-report.js';
import { readMembership, sourceId, type Read, type SourceMembership } from './move-in-rules.js';

/**
 * The memberships of a move (docs/moving-in.md): each found by its user before anything is
 * written; an active one made as `POST /memberships` makes it, one that already ended written
 * expired with its own dates through the membership import's chunks, a page's in one.
 */
export class MembershipsStep {
  /** Source user id → whether this run wrote their membership (true) or found it (false). */
  readonly members = new Map<string, boolean>();
  /** The project's memberships by user, as they were before this run. */
  private readonly local = new Map<string, { end: string; planId: string | null }>();

  constructor(
    private readonly s: Pick<MoveInServices, 'memberships' | 'endedMemberships' | 'clock'>,
    private readonly projectId: string,
    private readonly ledger: Ledger,
    /** The source's plan ids now in tenure. */
    private readonly plans: ReadonlySet<string>,
  ) {}

  /**
   * The project's memberships by user, read once: a run after an earlier one then finds each
   * member without a write tried (a few bytes a member, read 100 at a time).
   */
  async readLocal(): Promise<void> {
    const out = this.local;
    for (let offset = 0; ; offset += LOCAL_PAGE) {
      const page = await this.s.memberships.list(this.projectId, { limit: LOCAL_PAGE, offset, sort: 'created_at' });
      for (const m of page.items) out.set(m.user_id, { end: m.membership_end_date, planId: m.plan_id });
      if (page.items.length < LOCAL_PAGE) return;
    }
  }

  /** One page of the source's memberships. */
  async write(items: unknown[]): Promise<void> {
    const now = this.s.clock.now();
    const ended: { id: string; m: SourceMembership }[] = [];
    for (const item of items) {
      const read: Read<SourceMembership> = readMembership(item);
      const id = sourceId(item, 'membership_id') ?? '?';
      if (!read.ok) {
        this.ledger.refuse('membership', id, read.reason);
        continue;
      }
      const m = read.value;
      if (this.members.has(m.userId)) continue;
      if (m.planId !== null && !this.plans.has(m.planId)) {
        this.ledger.refuse('membership', id, `its plan ${m.planId} was not brought over`);
        continue;
      }
      if (m.subscriptionId !== null && m.endDate.getTime() > now.getTime()) {
        // True on every run, so every run says it (and exits 2 for it).
        this.ledger.refuse('subscription', m.subscriptionId, `the recurring payment of user ${m.userId} stays with the hosted product's Stripe account; the membership comes over without it`);
      }
      const here = this.local.get(m.userId);
      if (here !== undefined) {
        if (here.end === m.endDate.toISOString() && here.planId === m.planId) {
          this.members.set(m.userId, false);
          this.ledger.count('membership', false);
        } else {
          this.ledger.refuse('membership', id, `user ${m.userId} already has a membership here (ends ${here.end}, plan ${here.planId ?? 'none'}); left as it is`);
        }
        continue;
      }
      if (m.endDate.getTime() <= now.getTime()) {
        ended.push({ id, m });
        continue;
      }
      const created = await this.s.memberships.create(this.projectId, {
        user_id: m.userId,
        end_date: m.endDate.toISOString(),
        plan_id: m.planId,
        user_name: m.userName,
      });
      if (created.ok) {
        this.members.set(m.userId, true);
        this.ledger.count('membership', true);
      } else this.ledger.refuse('membership', id, created.error.message);
    }
    if (ended.length > 0) await this.endedMemberships(ended);
  }

  /** The page's memberships that already ended, in one chunk of the membership import: expired, with their dates. */
  private async endedMemberships(ended: { id: string; m: SourceMembership }[]): Promise<void> {
    const rows = ended.map(
      ({ m }, line): StagedMembership => ({
        line,
        userId: m.userId,
        endDate: m.endDate,
        planId: m.planId,
        startDate: m.startDate,
        // The import keeps a name as the user's first_name, as POST /memberships does.
        userName: m.userName?.first_name ?? null,
        status: 'expired',
      }),
    );
    const outcome = await this.s.endedMemberships.run(async (chunk) => {
      await chunk.stage(rows);
      return chunk.merge(this.projectId);
    });
    const refused = new Set(outcome.refusedLines);
    for (const [line, { id, m }] of ended.entries()) {
      if (refused.has(line)) {
        this.ledger.refuse('membership', id, `user ${m.userId} is banned here, or got a membership here meanwhile; left as it is`);
        continue;
      }
      this.members.set(m.userId, true);
      this.ledger.count('membership', true);
    }
  }
}
