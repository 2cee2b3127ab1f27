import type { Clock } from '../clock.js';
import { isUuid } from '../ids.js';
import { SETTING_VALIDATORS } from '../settings/settings.catalogue.js';
import type { Platform, TargetKind } from '../targets/target.view.js';
import { paletteOf, type Palette } from './branding.js';
import { blockedOf, CANNOT_BE_BOUGHT, type PlanAccessFacts } from './plan-readiness.js';

/**
 * What the public plan page shows (docs/web.md, "The plan page"), as the store reads it in one
 * statement: the project, its plans with what each grants, and how a buyer can buy on each platform.
 */

export interface PublicTarget {
  name: string;
  kind: TargetKind;
  platform: Platform;
}

export interface PublicPlan {
  planId: string;
  name: string;
  /** The plan's price as the API formats it (`$9.99`). */
  priceFormatted: string;
  /** `N day|week|month|year[s]` (src/domain/plans/plan-rules.ts). */
  duration: string;
  recurring: boolean;
  targets: PublicTarget[];
  /** Whether its access can be given now (src/domain/web/plan-readiness.ts). */
  access: PlanAccessFacts;
}

export interface PublicProject {
  projectId: string;
  name: string;
  plans: PublicPlan[];
  /** Login with Discord works: a Discord bot is connected with its application's client secret. */
  discordLogin: boolean;
  /** The Telegram bot's username, when one is connected. */
  telegramBot: string | null;
  /** The project's `page_logo_url` and `page_accent_color` settings, as stored (validated on read by the service). */
  logoSetting: unknown;
  accentSetting: unknown;
}

/** How a buyer gets a plan from the page. */
export type BuyWay =
  /** Login with Discord, then Stripe: the path to post to. */
  | { kind: 'discord' }
  /**
   * Open the project's Telegram bot (`https://t.me/<bot>`, no start payload): Telegram shows its
   * Start button, which sends `/start`, and the bot answers with its plans (docs/web.md).
   */
  | { kind: 'telegram'; url: string }
  /** Nothing on this page sells it (no bot, or Login with Discord not set up). */
  | { kind: 'none'; why: string };

/** The plans of the page beyond this are not shown: the page stays light (docs/web.md). */
export const MAX_PUBLIC_PLANS = 50;

/**
 * Which way a plan is bought: none while its access cannot be given; a plan granting a Discord target through Login with Discord (the
 * buyer's Discord id is who pays), else one granting a Telegram target through the bot.
 */
export function buyWayOf(plan: PublicPlan, p: Pick<PublicProject, 'discordLogin' | 'telegramBot'>): BuyWay {
  // No way to pay for access the bot cannot give now (docs/web.md, "When a plan cannot be bought").
  if (blockedOf(plan.access) !== null) return { kind: 'none', why: CANNOT_BE_BOUGHT };
  const platforms = new Set(plan.targets.map((t) => t.platform));
  if (platforms.has('discord')) {
    return p.discordLogin ? { kind: 'discord' } : { kind: 'none', why: 'Ask the community team for a link: buying on the web is not set up yet.' };
  }
  if (platforms.has('telegram') && p.telegramBot) return { kind: 'telegram', url: `https://t.me/${encodeURIComponent(p.telegramBot)}` };
  return { kind: 'none', why: 'Ask the community team how to join.' };
}

/** The page as it is drawn: each plan with its way to buy, and the project's branding. */
export interface PublicPageView {
  project: PublicProject;
  plans: (PublicPlan & { buy: BuyWay })[];
  logoUrl: string | null;
  palette: Palette;
}

export interface PublicPageStatements {
  publicProject(projectId: string): Promise<PublicProject | null>;
}

/**
 * How long a project's page is served from memory: a link posted in a busy community is opened by
 * many at once, and each open would otherwise read the project, its plans and its settings again
 * (bench/RESULTS.md, "The public plan page"). A change to a plan or a setting shows within this.
 */
export const PAGE_CACHE_MS = 5_000;
/** Projects whose page is kept at once, the oldest dropped first; unknown projects are never kept. */
const PAGE_CACHE_SIZE = 1_000;

/** The public plan page of a project (docs/web.md), null when there is no such project. */
export class PublicPageService {
  private readonly cache = new Map<string, { at: number; view: PublicPageView }>();

  constructor(
    private readonly store: PublicPageStatements,
    private readonly clock: Clock,
    private readonly cacheMs = PAGE_CACHE_MS,
  ) {}

  async page(projectId: string): Promise<PublicPageView | null> {
    if (!isUuid(projectId)) return null;
    const id = projectId.toLowerCase();
    const now = this.clock.now().getTime();
    const kept = this.cache.get(id);
    if (kept && now - kept.at < this.cacheMs) return kept.view;
    const view = await this.read(id);
    this.cache.delete(id);
    if (view && this.cacheMs > 0) {
      this.cache.set(id, { at: now, view });
      if (this.cache.size > PAGE_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    return view;
  }

  private async read(projectId: string): Promise<PublicPageView | null> {
    const project = await this.store.publicProject(projectId);
    if (!project) return null;
    // A stored value that no longer validates shows the default, as every setting does.
    const logo = SETTING_VALIDATORS.page_logo_url(project.logoSetting ?? null);
    const accent = SETTING_VALIDATORS.page_accent_color(project.accentSetting ?? null);
    return {
      project,
      plans: project.plans.map((plan) => ({ ...plan, buy: buyWayOf(plan, project) })),
      logoUrl: logo.ok ? logo.value : null,
      palette: paletteOf(accent.ok ? accent.value : null),
    };
  }
}
