/** Where a plan grants access (docs/plans-targets.md, "The target object"). */
export const PLATFORMS = ['discord', 'telegram'] as const;
export const TARGET_KINDS = ['guild', 'group', 'channel', 'role'] as const;

export type Platform = (typeof PLATFORMS)[number];
export type TargetKind = (typeof TARGET_KINDS)[number];
/** What losing access does on a target (docs/plans-targets.md); which kind allows which: target-rules.ts. */
export const ON_EXPIRY_VALUES = ['remove_role', 'kick', 'none'] as const;
export type OnExpiry = (typeof ON_EXPIRY_VALUES)[number];

/** `{code, message}` of a platform error (Discord's JSON error code, or tenure's name for a failure). */
export interface PlatformError {
  code: string;
  message: string;
}

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
  /** What losing access does here: the target's own value, or its kind's default. */
  on_expiry: OnExpiry;
  /** `unhealthy`: the bot cannot act here (Missing Permissions, Unknown Role…) until the target is updated or the bot reconnected. */
  health: 'ok' | 'unhealthy';
  /** What made it unhealthy; null while ok. */
  health_error: PlatformError | null;
}
