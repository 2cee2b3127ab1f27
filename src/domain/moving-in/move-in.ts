import { MembershipsStep } from './move-in-memberships.js';
import { LOCAL_PAGE, type MoveInServices } from './move-in-ports.js';
import { Ledger, type MoveInReport } from './move-in-report.js';
import { canonical, parentsFirst, readPlan, readTarget, readUser, sourceId, type SourceTarget } from './move-in-rules.js';
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

export type { MoveInReport } from './move-in-report.js';
export type { MoveInServices } from './move-in-ports.js';

export interface MoveInProgress {
  /** What is being read or written now. */
  step: SourceList | 'settings';
  /** Pages (and the settings) read so far, and how many the whole move reads (known after the first pages). */
  reads: number;
  readsTotal: number;
}

/** Who the bans a move writes were made by (a ban's `banned_by`). */
export const MOVE_IN_BANNED_BY = 'botsubscription-import';

export async function moveIn(
  services: MoveInServices,
  projectId: string,
  source: MoveInSource,
  onProgress: (p: MoveInProgress) => void = () => {},
): Promise<MoveInReport> {
  return new MoveIn(services, projectId, source, onProgress).run();
}

class MoveIn {
  private readonly ledger = new Ledger();
  private readonly report = this.ledger.report;
  private readsTotal = 0;
  /** Source target id → local target id, for parents and the plans' targets. */
  private readonly targetIds = new Map<string, string>();
  /** Source plan ids now in tenure (a plan keeps its id). */
  private readonly plans = new Set<string>();
  private readonly memberships: MembershipsStep;
  private readonly usersSeen = new Set<string>();

  constructor(
    private readonly s: MoveInServices,
    private readonly projectId: string,
    private readonly source: MoveInSource,
    private readonly onProgress: (p: MoveInProgress) => void,
  ) {
    this.memberships = new MembershipsStep(s, projectId, this.ledger, this.plans);
  }

  async run(): Promise<MoveInReport> {
    // Every read that proves the key and sizes the move, before anything is written.
    const settings = await this.read('settings', () => this.source.settings());
    const first = new Map<SourceList, SourcePage>();
    for (const list of SOURCE_LISTS) first.set(list, await this.read(list, () => this.source.page(list, 0)));
    this.readsTotal = 1 + SOURCE_LISTS.reduce((n, list) => n + Math.max(1, Math.ceil(first.get(list)!.total / this.source.pageSize)), 0);

    await this.settings(settings);
    await this.targets(await this.all('targets', first.get('targets')!));
    await this.plansStep(await this.all('plans', first.get('plans')!));
    await this.memberships.readLocal();
    await this.pages('memberships', first.get('memberships')!, (items) => this.memberships.write(items));
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

  /** Each setting tenure knows, written alone when its value differs (a wrong value refuses that key only). */
  private async settings(settings: Record<string, unknown>): Promise<void> {
    for (const [key, value] of Object.entries(settings)) {
      const current = await this.s.settings.get(this.projectId, key);
      if (!current.ok) {
        this.ledger.refuse('setting', key, `tenure has no setting ${key}`);
        continue;
      }
      if (canonical((current.value as Record<string, unknown>)[key]) === canonical(value)) {
        this.ledger.count('setting', false);
        continue;
      }
      const put = await this.s.settings.put(this.projectId, key, value);
      if (put.ok) this.ledger.count('setting', true);
      else this.ledger.refuse('setting', key, put.error.message);
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
      else this.ledger.refuse('target', sourceId(item, 'target_id') ?? '?', target.reason);
    }
    let local = await this.localTargets();
    for (const t of parentsFirst(read)) {
      const naturalKey = `${t.input.platform}:${t.input.external_id}`;
      const found = local.get(naturalKey);
      if (found) {
        this.targetIds.set(t.sourceId, found);
        this.ledger.count('target', false);
        continue;
      }
      const parent = t.sourceParentId === null ? null : this.targetIds.get(t.sourceParentId);
      if (parent === undefined) {
        this.ledger.refuse('target', t.sourceId, `its parent target ${t.sourceParentId} was not brought over`);
        continue;
      }
      const created = await this.s.targets.create(this.projectId, { ...t.input, parent_target_id: parent });
      if (created.ok) {
        this.targetIds.set(t.sourceId, created.value.target_id);
        this.ledger.count('target', true);
      } else if (created.error.code === 'CONFLICT') {
        // Made since the project's targets were read (another run): read them again.
        local = await this.localTargets();
        const again = local.get(naturalKey);
        if (again) {
          this.targetIds.set(t.sourceId, again);
          this.ledger.count('target', false);
        } else this.ledger.refuse('target', t.sourceId, created.error.message);
      } else this.ledger.refuse('target', t.sourceId, created.error.message);
    }
  }

  private async plansStep(items: unknown[]): Promise<void> {
    for (const item of unique(items, 'plan_id')) {
      const read = readPlan(item);
      if (!read.ok) {
        this.ledger.refuse('plan', sourceId(item, 'plan_id') ?? '?', read.reason);
        continue;
      }
      const { sourceId: id, input, targetIds } = read.value;
      const existing = await this.s.plans.get(this.projectId, id);
      let granted: Set<string>;
      if (existing.ok) {
        this.ledger.count('plan', false);
        granted = new Set(existing.value.plan_targets.map((t) => t.target_id));
      } else {
        const created = await this.s.plans.create(this.projectId, input, id);
        if (!created.ok) {
          this.ledger.refuse('plan', id, created.error.message);
          continue;
        }
        this.ledger.count('plan', true);
        granted = new Set();
      }
      this.plans.add(id);
      for (const targetId of targetIds) {
        const local = this.targetIds.get(targetId);
        if (local === undefined) {
          this.ledger.refuse('plan_target', `${id}/${targetId}`, `plan ${input.plan_name} grants target ${targetId}, which was not brought over`);
          continue;
        }
        if (granted.has(local)) continue;
        const added = await this.s.plans.addTarget(this.projectId, id, local);
        if (!added.ok) this.ledger.refuse('plan_target', `${id}/${targetId}`, added.error.message);
      }
    }
  }

  private async users(items: unknown[]): Promise<void> {
    for (const item of items) {
      const read = readUser(item);
      if (!read.ok) {
        this.ledger.refuse('user', sourceId(item, 'user_id') ?? '?', read.reason);
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
          this.ledger.count('ban', ban.ok);
        } else this.ledger.refuse('ban', userId, ban.error.message);
      }
      const member = this.memberships.members.get(userId);
      if (member !== undefined || banWritten !== null) this.ledger.count('user', member === true || banWritten === true);
      else this.ledger.refuse('user', userId, 'tenure records a user with a membership or a ban, and this user came over with neither');
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
