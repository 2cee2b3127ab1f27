import type { Platform } from '../targets/target.view.js';

/**
 * Whether a plan's access can be given now, checked before a member pays on the web (docs/web.md,
 * "When a plan cannot be bought"): from what the access engine and the guild joins already
 * recorded, never by asking Discord or Telegram on a page view. A plan cannot be bought when a bot
 * its targets need is missing or unhealthy (its token refused), when one of its targets is
 * unhealthy (the bot lacks a right there: Manage Roles, Telegram's invite right, or is not in the
 * chat), or when the last guild join for it was refused for a missing Create Invite permission
 * (50013) and nothing changed since (no target of the plan updated, no bot connected again).
 */

export interface PlanAccessFacts {
  /** The plan's enabled targets: their platform and health (`ok` | `unhealthy`). */
  targets: { platform: Platform; health: string }[];
  /** The health of each platform's connected bot; null: none connected. */
  bots: Record<Platform, string | null>;
  /** The plan's latest finished guild join failed with 50013, after its targets and the bot last changed. */
  inviteRefused: boolean;
}

export type Blocked = 'no-bot' | 'bot-unhealthy' | 'target-unhealthy' | 'cannot-invite';

/** Why the plan's access cannot be given now; null when it can (or the plan grants nothing). */
export function blockedOf(f: PlanAccessFacts): Blocked | null {
  const platforms = new Set(f.targets.map((t) => t.platform));
  for (const p of platforms) {
    if (f.bots[p] === null) return 'no-bot';
    if (f.bots[p] !== 'ok') return 'bot-unhealthy';
  }
  if (f.targets.some((t) => t.health !== 'ok')) return 'target-unhealthy';
  if (platforms.has('discord') && f.inviteRefused) return 'cannot-invite';
  return null;
}

/** The sentence a buyer reads instead of a way to pay: nothing is charged for access that cannot be given. */
export const CANNOT_BE_BOUGHT = 'This plan cannot be bought right now: the community’s bot cannot give its access at the moment. Nothing is charged. Please try again later, or tell the community team.';

/** The statement that reads a plan's facts (src/store/web.store.ts); null when the project has no such plan. */
export interface PlanReadinessStatements {
  planAccessFacts(projectId: string, planId: string): Promise<PlanAccessFacts | null>;
}
