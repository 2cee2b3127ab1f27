/** Where a plan grants access (spec/reference.md, "Targets"). */
export const PLATFORMS = ['discord', 'telegram'] as const;
export const TARGET_KINDS = ['guild', 'group', 'channel', 'role'] as const;

export type Platform = (typeof PLATFORMS)[number];
export type TargetKind = (typeof TARGET_KINDS)[number];

/**
 * A target as the API and events show it. `plan_count` and `participant_count` are computed by
 * the store's SQL at read time (src/store/targets.store.ts), never stored.
 */
export interface TargetView {
  target_id: string;
  target_name: string;
  platform: Platform;
  kind: TargetKind;
  external_id: string;
  is_enabled: boolean;
  /** Plans not deleted that grant this target. */
  plan_count: number;
  parent_target_id: string | null;
  /** Distinct users whose membership is active now, on any plan (deleted ones too) granting this target. */
  participant_count: number;
}
