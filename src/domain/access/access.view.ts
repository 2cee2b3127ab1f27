import type { Platform, PlatformError } from '../targets/target.view.js';

/** Where a (member, target)'s sync stands (docs/access.md, "The access rows and the API"). */
export const ACCESS_STATES = ['synced', 'pending', 'waiting_for_member', 'failed'] as const;
export type AccessState = (typeof ACCESS_STATES)[number];

/** One (member, target) as `GET /access` shows it. */
export interface AccessView {
  user_id: string;
  target_id: string;
  platform: Platform;
  /** What the member should hold there. */
  desired: 'granted' | 'revoked';
  state: AccessState;
  /** The last failed call's error; null once synced. */
  last_error: PlatformError | null;
  /** Calls made for the current `desired`. */
  attempts: number;
  /** When tenure last found the platform agreeing with `desired`; null before that. */
  synced_at: string | null;
}

/** What `POST /access/resync` did. */
export interface ResyncView {
  /** The member resynced; null for the whole project. */
  user_id: string | null;
  /** Access rows whose desired state the re-plan changed (a grant or revoke the worker now applies). */
  changed: number;
  /** The member's granted rows set back to pending to be applied again (a member's resync only). */
  requeued: number;
  /** Connected platforms whose drift reconciliation was moved to now (a project's resync only). */
  reconciling: number;
}
