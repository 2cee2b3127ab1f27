import type { Clock } from '../clock.js';
import type { MembershipsService } from '../memberships/memberships.service.js';
import type { PlansService } from '../plans/plans.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { TargetsService } from '../targets/targets.service.js';
import type { UsersService } from '../users/users.service.js';
import {
  canonical,
  parentsFirst,
  readMembership,
  readPlan,
  readTarget,
  readUser,
  sourceId,
  type Read,
  type SourceMembership,
  type SourceTarget,
} from './move-in-rules.js';
import { SOURCE_LISTS, type MoveInSource, type SourceList, type SourcePage } from './source.js';

/**
 * A move from the hosted product into a tenure project (docs/moving-in.md): its settings, targets,
 * plans, memberships, users and bans, read from its v2 API and written through tenure's own
 * services, so every write has the rules, events and outbox rows of the same call through the API.
 *
 * Running it again changes nothing and an interrupted run resumes, because each object is found
 * before it is written: a setting by its key and value, a target by its platform and external id,
 * a plan by its id (kept from the source), a membership by its user, a ban by its user. Nothing is
 * written before the first page of every list and the settings were read, so a key the source
 * refuses writes nothing. Memberships are written page by page as they are read (a large community
 * is most of the run); bans come after memberships because a banned user can get none.
 */

export const KINDS = ['setting', 'target', 'plan', 'membership', 'user', 'ban'] as const;
export type Kind = (typeof KINDS)[number];

export interface NotBrought {
  kind: Kind | 'plan_target' | 'subscription';
  source_id: string;
  reason: string;
}

export interface MoveInReport {
  /** Written by this run. */
  brought_over: Record<Kind, number>;
  /** Found as an earlier run (or the owner) left them: nothing written. */
  already_there: Record<Kind, number>;
  /** Each object that is not in tenure after the run, and why. */
  not_brought_over: NotBrought[];
  /** Pages and settings read from the source. */
  source_reads: number;
}

export interface MoveInProgress {
  /** What is being read or written now. */
  step: SourceList | 'settings';
  /** Pages (and the settings) read so far, and how many the whole move reads (known after the first pages). */
  reads: number;
  readsTotal: number;
}

/** The services a move writes through (narrow: what it calls). */
export interface MoveInServices {
  settings: Pick<SettingsService, 'get' | 'put'>;
  targets: Pick<TargetsService, 'create' | 'list'>;
  plans: Pick<PlansService, 'get' | 'create' | 'addTarget'>;
  memberships: Pick<MembershipsService, 'create' | 'list'>;
  users: Pick<UsersService, 'ban'>;
  clock: Clock;
}

/** Who the bans a move writes were made by (a ban's `banned_by`). */
export const MOVE_IN_BANNED_BY = 'botsubscription-import';
/** Local lists are read this many at a time (tenure's own page cap). */
const LOCAL_PAGE = 100;

const zero = (): Record<Kind, number> => ({ setting: 0, target: 0, plan: 0, membership: 0, user: 0, ban: 0 });

export async function moveIn(
  services: MoveInServices,
  projectId: string,
  source: MoveInSource,
  onProgress: (p: MoveInProgress) => void = () => {},
): Promise<MoveInReport> {
  return new MoveIn(services, projectId, source, onProgress).run();
}

class MoveIn {
  private readonly report: MoveInReport = { brought_over: zero(), already_there: zero(), not_brought_over: [], source_reads: 0 };
  private readsTotal = 0;
  /** Source target id → local target id, for parents and the plans' targets. */
  private readonly targetIds = new Map<string, string>();
  /** Source plan ids now in tenure (a plan keeps its id). */
  private readonly plans = new Set<string>();
  /** Source user id → whether this run wrote their membership (true) or found it (false). */
  private readonly members = new Map<string, boolean>();
  private readonly usersSeen = new Set<string>();

  constructor(
    private readonly s: MoveInServices,
    private readonly projectId: string,
    private readonly source: MoveInSource,
    private readonly onProgress: (p: MoveInProgress) => void,
  ) {}

  async run(): Promise<MoveInReport> {
    // Every read that proves the key and sizes the move, before anything is written.
    const settings = await this.read('settings', () => this.source.settings());
    const first = new Map<SourceList, SourcePage>();
    for (const list of SOURCE_LISTS) first.set(list, await this.read(list, () => this.source.page(list, 0)));
    this.readsTotal = 1 + SOURCE_LISTS.reduce((n, list) => n + Math.max(1, Math.ceil(first.get(list)!.total / this.source.pageSize)), 0);

    await this.settings(settings);
    await this.targets(await this.all('targets', first.get('targets')!));
    await this.plansStep(await this.all('plans', first.get('plans')!));
    const local = await this.localMemberships();
    await this.pages('memberships', first.get('memberships')!, (items) => this.memberships(items, local));
    await this.pages('users', first.get('users')!, (items) => this.users(items));
    return this.report;
  }

  private async read<T>(step: MoveInProgress['step'], fetch: () => Promise<T>): Promise<T> {
    const value = await fetch();
    this.report.source_reads += 1;
    this.readsTotal = Math.max(this.readsTotal, this.report.source_reads);
    this.onProgress({ step, reads: this.report.source_reads, readsTotal: this.readsTotal });
    return value;
  }

  /** Every page of a list, from its first, each handed to `write` as it is read. Offsets past `total` are not asked. */
  private async pages(list: SourceList, first: SourcePage, write: (items: unknown[]) => Promise<void>): Promise<void> {
    let page = first;
    let offset = 0;
    for (;;) {
      await write(page.items);
      offset += this.source.pageSize;
      if (page.items.length === 0 || offset >= page.total) return;
      page = await this.read(list, () => this.source.page(list, offset));
    }
  }

  private async all(list: SourceList, first: SourcePage): Promise<unknown[]> {
    const items: unknown[] = [];
    await this.pages(list, first, async (page) => void items.push(...page));
    return items;
  }

  private refuse(kind: NotBrought['kind'], id: string, reason: string): void {
    this.report.not_brought_over.push({ kind, source_id: id, reason });
  }

  private count(kind: Kind, written: boolean): void {
    this.report[written ? 'brought_over' : 'already_there'][kind] += 1;
  }

  /** Each setting tenure knows, written alone when its value differs (a wrong value refuses that key only). */
  private async settings(settings: Record<string, unknown>): Promise<void> {
    for (const [key, value] of Object.entries(settings)) {
      const current = await this.s.settings.get(this.projectId, key);
      if (!current.ok) {
        this.refuse('setting', key, `tenure has no setting ${key}`);
        continue;
      }
      if (canonical((current.value as Record<string, unknown>)[key]) === canonical(value)) {
        this.count('setting', false);
        continue;
      }
      const put = await this.s.settings.put(this.projectId, key, value);
      if (put.ok) this.count('setting', true);
      else this.refuse('setting', key, put.error.message);
    }
  }

  /** The project's targets, by platform and external id. */
  private async localTargets(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let offset = 0; ; offset += LOCAL_PAGE) {
      const page = await this.s.targets.list(this.projectId, { limit: LOCAL_PAGE, offset });
      for (const t of page.items) out.set(`${t.platform}:${t.external_id}`, t.target_id);
      if (page.items.length < LOCAL_PAGE) return out;
    }
  }

  private async targets(items: unknown[]): Promise<void> {
    const read: SourceTarget[] = [];
    for (const item of unique(items, 'target_id')) {
      const target = readTarget(item);
      if (target.ok) read.push(target.value);
      else this.refuse('target', sourceId(item, 'target_id') ?? '?', target.reason);
    }
    let local = await this.localTargets();
    for (const t of parentsFirst(read)) {
      const naturalKey = `${t.input.platform}:${t.input.external_id}`;
      const found = local.get(naturalKey);
      if (found) {
        this.targetIds.set(t.sourceId, found);
        this.count('target', false);
        continue;
      }
      const parent = t.sourceParentId === null ? null : this.targetIds.get(t.sourceParentId);
      if (parent === undefined) {
        this.refuse('target', t.sourceId, `its parent target ${t.sourceParentId} was not brought over`);
        continue;
      }
      const created = await this.s.targets.create(this.projectId, { ...t.input, parent_target_id: parent });
      if (created.ok) {
        this.targetIds.set(t.sourceId, created.value.target_id);
        this.count('target', true);
      } else if (created.error.code === 'CONFLICT') {
        // Made since the project's targets were read (another run): read them again.
        local = await this.localTargets();
        const again = local.get(naturalKey);
        if (again) {
          this.targetIds.set(t.sourceId, again);
          this.count('target', false);
        } else this.refuse('target', t.sourceId, created.error.message);
      } else this.refuse('target', t.sourceId, created.error.message);
    }
  }

  private async plansStep(items: unknown[]): Promise<void> {
    for (const item of unique(items, 'plan_id')) {
      const read = readPlan(item);
      if (!read.ok) {
        this.refuse('plan', sourceId(item, 'plan_id') ?? '?', read.reason);
        continue;
      }
      const { sourceId: id, input, targetIds } = read.value;
      const existing = await this.s.plans.get(this.projectId, id);
      let granted: Set<string>;
      if (existing.ok) {
        this.count('plan', false);
        granted = new Set(existing.value.plan_targets.map((t) => t.target_id));
      } else {
        const created = await this.s.plans.create(this.projectId, input, id);
        if (!created.ok) {
          this.refuse('plan', id, created.error.message);
          continue;
        }
        this.count('plan', true);
        granted = new Set();
      }
      this.plans.add(id);
      for (const targetId of targetIds) {
        const local = this.targetIds.get(targetId);
        if (local === undefined) {
          this.refuse('plan_target', `${id}/${targetId}`, `plan ${input.plan_name} grants target ${targetId}, which was not brought over`);
          continue;
        }
        if (granted.has(local)) continue;
        const added = await this.s.plans.addTarget(this.projectId, id, local);
        if (!added.ok) this.refuse('plan_target', `${id}/${targetId}`, added.error.message);
      }
    }
  }

  /**
   * The project's memberships by user, read once: a run after an earlier one then finds each
   * member without a write tried (a few bytes a member, read 100 at a time).
   */
  private async localMemberships(): Promise<Map<string, { end: string; planId: string | null }>> {
    const out = new Map<string, { end: string; planId: string | null }>();
    for (let offset = 0; ; offset += LOCAL_PAGE) {
      const page = await this.s.memberships.list(this.projectId, { limit: LOCAL_PAGE, offset, sort: 'created_at' });
      for (const m of page.items) out.set(m.user_id, { end: m.membership_end_date, planId: m.plan_id });
      if (page.items.length < LOCAL_PAGE) return out;
    }
  }

  private async memberships(items: unknown[], local: Map<string, { end: string; planId: string | null }>): Promise<void> {
    const now = this.s.clock.now();
    for (const item of items) {
      const read: Read<SourceMembership> = readMembership(item);
      const id = sourceId(item, 'membership_id') ?? '?';
      if (!read.ok) {
        this.refuse('membership', id, read.reason);
        continue;
      }
      const m = read.value;
      if (this.members.has(m.userId)) continue;
      if (m.endDate.getTime() <= now.getTime()) {
        this.refuse('membership', id, `ended ${m.endDate.toISOString()}: tenure makes a membership only with an end date to come`);
        continue;
      }
      if (m.planId !== null && !this.plans.has(m.planId)) {
        this.refuse('membership', id, `its plan ${m.planId} was not brought over`);
        continue;
      }
      const here = local.get(m.userId);
      if (here !== undefined) {
        if (here.end === m.endDate.toISOString() && here.planId === m.planId) {
          this.members.set(m.userId, false);
          this.count('membership', false);
        } else {
          this.refuse('membership', id, `user ${m.userId} already has a membership here (ends ${here.end}, plan ${here.planId ?? 'none'}); left as it is`);
        }
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
        this.count('membership', true);
      } else {
        this.refuse('membership', id, created.error.message);
        continue;
      }
      if (m.subscriptionId !== null) {
        this.refuse('subscription', m.subscriptionId, `the recurring payment of user ${m.userId} stays with the hosted product's Stripe account; the membership came over without it`);
      }
    }
  }

  private async users(items: unknown[]): Promise<void> {
    for (const item of items) {
      const read = readUser(item);
      if (!read.ok) {
        this.refuse('user', sourceId(item, 'user_id') ?? '?', read.reason);
        continue;
      }
      const { userId, banned } = read.value;
      if (this.usersSeen.has(userId)) continue;
      this.usersSeen.add(userId);
      let banWritten: boolean | null = null;
      if (banned) {
        const ban = await this.s.users.ban(this.projectId, userId, MOVE_IN_BANNED_BY, null);
        if (ban.ok || ban.error.code === 'CONFLICT') {
          banWritten = ban.ok;
          this.count('ban', ban.ok);
        } else this.refuse('ban', userId, ban.error.message);
      }
      const member = this.members.get(userId);
      if (member !== undefined || banWritten !== null) this.count('user', member === true || banWritten === true);
      else this.refuse('user', userId, 'tenure records a user with a membership or a ban, and this user came over with neither');
    }
  }
}

/** The items with a distinct id (a list paged by offset repeats one when the source grows meanwhile). */
function unique(items: unknown[], field: string): unknown[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const id = sourceId(item, field);
    if (id === null) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
