import type { TargetChange, TargetsStore } from '../../store/targets.store.js';
import { fail, ok, type Result } from '../errors.js';
import { onExpiryProblem, parentProblem, targetShapeProblem } from './target-rules.js';
import type { OnExpiry, Platform, TargetKind, TargetView } from './target.view.js';

/** The statements of TargetsStore this uses (a narrow port: tests give it a small twin). */
export type TargetsStatements = Pick<TargetsStore, 'create' | 'delete' | 'get' | 'kinds' | 'list' | 'updateMany'>;

export interface NewTargetInput {
  target_name: string;
  platform: Platform;
  kind: TargetKind;
  external_id: string;
  parent_target_id?: string | null;
  is_enabled?: boolean;
  /** Left out or null: the kind's default. */
  on_expiry?: OnExpiry | null;
}

const TARGET_NOT_FOUND = 'Target not found';

const changesNothing = (c: Omit<TargetChange, 'target_id'>) =>
  c.is_enabled === undefined && c.target_name === undefined && c.on_expiry === undefined;

/**
 * Told after a target that may change the project's Discord guilds was created or deleted (the
 * commands for members are registered per guild: docs/front-desk.md). Runs beside the request:
 * the answer does not wait for Discord.
 */
export type GuildsChanged = (projectId: string) => void;

/** The rules of targets; validation (422) comes before existence (404) and conflicts (409). */
export class TargetsService {
  constructor(
    private readonly store: TargetsStatements,
    private readonly guildsChanged: GuildsChanged = () => {},
  ) {}

  async create(projectId: string, input: NewTargetInput): Promise<Result<TargetView>> {
    const shape = targetShapeProblem(input) ?? onExpiryProblem(input.platform, input.kind, input.on_expiry ?? null);
    if (shape) return fail('VALIDATION_ERROR', shape);
    const parentId = input.parent_target_id ?? null;
    if (parentId) {
      const parent = await this.store.get(projectId, parentId);
      if (!parent) return fail('NOT_FOUND', `Parent target not found: ${parentId}`);
      const problem = parentProblem(input.platform, parent);
      if (problem) return fail('VALIDATION_ERROR', problem);
    }
    const outcome = await this.store.create(projectId, {
      name: input.target_name,
      platform: input.platform,
      kind: input.kind,
      externalId: input.external_id,
      isEnabled: input.is_enabled ?? true,
      parentTargetId: parentId,
      onExpiry: input.on_expiry ?? null,
    });
    if (outcome === 'parent_missing') return fail('NOT_FOUND', `Parent target not found: ${parentId}`);
    if (outcome === 'duplicate') {
      return fail('CONFLICT', `A ${input.platform} target with external_id ${input.external_id} already exists in this project`);
    }
    if (input.platform === 'discord') this.guildsChanged(projectId);
    return ok(outcome.target);
  }

  list(projectId: string, page: { limit: number; offset: number }) {
    return this.store.list(projectId, page);
  }

  async get(projectId: string, targetId: string): Promise<Result<TargetView>> {
    const target = await this.store.get(projectId, targetId);
    return target ? ok(target) : fail('NOT_FOUND', TARGET_NOT_FOUND);
  }

  /** `PATCH /targets/{id}`: the batch of one. */
  async updateOne(projectId: string, targetId: string, change: Omit<TargetChange, 'target_id'>): Promise<Result<TargetView>> {
    if (changesNothing(change)) return fail('VALIDATION_ERROR', 'Provide is_enabled, target_name or on_expiry');
    const updated = await this.update(projectId, [{ ...change, target_id: targetId }]);
    return updated.ok ? ok(updated.value[0]!) : updated;
  }

  /**
   * `PATCH /targets`: all or nothing. Every item must change something and name a distinct
   * target (422 naming the item); an id that is not a target of the project fails the whole batch
   * with a 404 naming every such id, and nothing is written. An `on_expiry` the target's kind does
   * not allow is a 422 naming the item and the allowed values (a target's kind never changes, so
   * it is read before the update). Every update also puts the target back to health `ok` and its
   * failed access rows back to pending (TargetsStore.updateMany).
   */
  async update(projectId: string, changes: readonly TargetChange[]): Promise<Result<TargetView[]>> {
    const seen = new Set<string>();
    for (const [index, change] of changes.entries()) {
      const id = change.target_id.toLowerCase();
      if (changesNothing(change)) {
        return fail('VALIDATION_ERROR', `Item ${index} (target_id ${change.target_id}) must set is_enabled, target_name or on_expiry`);
      }
      if (seen.has(id)) return fail('VALIDATION_ERROR', `Item ${index}: target_id ${change.target_id} appears more than once`);
      seen.add(id);
    }
    const normalized = changes.map((c) => ({ ...c, target_id: c.target_id.toLowerCase() }));
    const invalid = await this.onExpiryProblem(projectId, normalized, changes.length > 1);
    if (invalid) return fail('VALIDATION_ERROR', invalid);
    const outcome = await this.store.updateMany(projectId, normalized);
    if ('missing' in outcome) {
      const [first, ...more] = outcome.missing;
      return fail('NOT_FOUND', more.length === 0 ? `Target not found: ${first}` : `Targets not found: ${outcome.missing.join(', ')}`);
    }
    return ok(outcome.updated);
  }

  /** The first change setting an `on_expiry` its (existing) target's kind does not allow. */
  private async onExpiryProblem(projectId: string, changes: readonly TargetChange[], batch: boolean): Promise<string | null> {
    const setting = changes.filter((c) => c.on_expiry != null);
    if (setting.length === 0) return null;
    const kinds = await this.store.kinds(projectId, setting.map((c) => c.target_id));
    for (const change of setting) {
      const target = kinds.get(change.target_id);
      const problem = target && onExpiryProblem(target.platform, target.kind, change.on_expiry ?? null);
      if (problem) return batch ? `Item ${changes.indexOf(change)} (target_id ${change.target_id}): ${problem}` : problem;
    }
    return null;
  }

  async delete(projectId: string, targetId: string): Promise<Result<null>> {
    switch (await this.store.delete(projectId, targetId)) {
      case 'missing':
        return fail('NOT_FOUND', TARGET_NOT_FOUND);
      case 'has_children':
        return fail('CONFLICT', `Target ${targetId} is the parent of other targets; delete them first`);
      case 'deleted':
        // The deleted target's platform is not read back: registering again costs a call per guild.
        this.guildsChanged(projectId);
        return ok(null);
    }
  }
}
