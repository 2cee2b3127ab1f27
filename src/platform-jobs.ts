import { AccessWorker, DEFAULT_ACCESS_WORKER_OPTIONS } from './access/access.worker.js';
import type { PlatformConnector } from './access/connector.js';
import type { REST } from '@discordjs/rest';
import { discordConnector, TOKEN_REFUSED } from './access/discord/discord.connector.js';
import { DiscordGateways } from './access/discord/gateway.js';
import { Reconciler } from './access/reconciler.js';
import type { TelegramClient } from './access/telegram/client.js';
import { telegramConnector } from './access/telegram/telegram.connector.js';
import type { ChatMemberReader } from './access/telegram/chat-members.js';
import { TelegramReconciler, type TelegramReconcilerOptions } from './access/telegram/telegram.reconciler.js';
import { confirmationCalls } from './access/confirmation-calls.js';
import { ConfirmationJob, DEFAULT_CONFIRMATION_OPTIONS, type ConfirmationJobOptions, type ReminderLinks } from './domain/front-desk/confirmations.js';
import type { Container } from './container.js';
import { AccessCompletions } from './domain/access/access-completions.js';

/**
 * The background jobs that talk to Discord and Telegram, built from the container as a worker
 * process runs them (src/worker-runtime.ts registers them; tests build one alone): the access
 * workers, their drift repair, and the confirmations after a payment.
 */

export interface PlatformJobOptions {
  random?: () => number;
  /** The job's safety poll. */
  pollMs?: number;
}

/**
 * The Discord access worker as a worker process runs it: one REST client per bot held
 * (src/access/discord/bot-rest.ts) under Discord's global limit. Null when no token can be opened
 * (PostgreSQL without TENURE_ENCRYPTION_KEY).
 */
export function createAccessWorker(c: Container, o: PlatformJobOptions = {}): AccessWorker<REST> | null {
  const { access } = c.config;
  const connector = discordConnector(access.discordApiUrl, { globalRequestsPerSecond: access.discordGlobalPerSecond, holdAlways: access.discordGateway });
  return accessWorkerWith(c, connector, o);
}

/**
 * The gateway connection of each Discord bot `access` holds (src/access/discord/gateway.ts), null
 * when TENURE_DISCORD_GATEWAY is off: members joining and roles removed by hand, compared as a
 * drift-repair page (`repairPage` at the rows' present state); a refused token flags the bot under
 * the worker's lease.
 */
export function createDiscordGateways(c: Container, access: AccessWorker<REST>): DiscordGateways | null {
  if (!c.config.access.discordGateway) return null;
  return new DiscordGateways({
    bots: access.leases,
    repair: (projectId, guildId, members) => c.stores.accessReconcile.repairPage(projectId, guildId, members, null),
    flagRefused: (bot) => c.stores.accessWorker.flagRefusedBot(access.id, bot.key, c.clock.now(), TOKEN_REFUSED),
    logger: c.logger,
  });
}

/**
 * The Telegram access worker (docs/access-telegram.md): one paced Bot API client per bot held
 * (TENURE_TELEGRAM_PER_SECOND, _CHAT_PER_SECOND), invite links of TENURE_TELEGRAM_INVITE_MODE
 * lasting TENURE_TELEGRAM_INVITE_TTL_SECONDS. Every connected Telegram bot is held. Null when no
 * token can be opened.
 */
export function createTelegramAccessWorker(c: Container, o: PlatformJobOptions = {}): AccessWorker<TelegramClient> | null {
  const { access } = c.config;
  const connector = telegramConnector({
    apiUrl: access.telegramApiUrl,
    pace: { perSecond: access.telegram.perSecond, chatPerSecond: access.telegram.chatPerSecond },
    inviteMode: access.telegram.inviteMode,
    inviteTtlMs: access.telegram.inviteTtlMs,
    invites: c.stores.telegramInvites,
    clock: c.clock,
    logger: c.logger,
  });
  return accessWorkerWith(c, connector, o);
}

/**
 * An access worker on `connector`, the same for every platform: this instance's secret box opens
 * the bot tokens, TENURE_ACCESS_CONCURRENCY calls per bot, TENURE_ACCESS_LEASE_SECONDS leases, and
 * bots due for drift repair taken too (TENURE_ACCESS_RECONCILE_SECONDS). Null without a secret box.
 */
function accessWorkerWith<C>(c: Container, connector: PlatformConnector<C>, o: PlatformJobOptions): AccessWorker<C> | null {
  const box = c.secretBox;
  if (!box) return null;
  const { access } = c.config;
  return new AccessWorker(
    {
      store: c.stores.accessWorker,
      completions: new AccessCompletions(c.transactor),
      leases: c.stores.botLeases,
      openToken: (sealed) => box.open(sealed),
      connector,
      clock: c.clock,
      random: o.random ?? Math.random,
      logger: c.logger,
    },
    {
      concurrency: access.concurrency,
      leaseMs: access.leaseMs,
      pollMs: o.pollMs ?? DEFAULT_ACCESS_WORKER_OPTIONS.pollMs,
      maxBots: DEFAULT_ACCESS_WORKER_OPTIONS.maxBots,
      reconcileEveryMs: access.reconcileMs,
    },
  );
}

/**
 * The confirmations job (src/domain/front-desk/confirmations.ts): its rows claimed from the
 * database, each message sent by the process holding the project's bot, with that bot's client
 * (`bots`: this process's Discord and Telegram access workers). A bot just taken wakes the job: its
 * messages waited for their holder. Null without the access workers (no secret box: no token can
 * be opened).
 */
export function createConfirmationJob(
  c: Container,
  bots: { discord: AccessWorker<REST> | null; telegram: AccessWorker<TelegramClient> | null },
  o: Pick<PlatformJobOptions, 'pollMs'> & Partial<ConfirmationJobOptions> = {},
): ConfirmationJob | null {
  if (!bots.discord && !bots.telegram) return null;
  const job = new ConfirmationJob(
    {
      queue: c.stores.notifications,
      outcomes: c.stores.notifications,
      channel: confirmationCalls(bots),
      clock: c.clock,
      logger: c.logger,
      links: reminderLinks(c),
      graceMs: c.config.payments.gracePeriodMs,
    },
    { ...DEFAULT_CONFIRMATION_OPTIONS, leaseMs: c.config.frontDesk.messageLeaseMs, ...o, pollMs: o.pollMs ?? DEFAULT_CONFIRMATION_OPTIONS.pollMs },
  );
  for (const worker of [bots.discord, bots.telegram]) worker?.leases.onAcquired(() => job.wake());
  return job;
}

/** A message's links (docs/lifecycle.md): a pay link for the same plan, or the project's portal sign-in page for billing. */
function reminderLinks(c: Container): ReminderLinks {
  return {
    async renew(projectId, userId, planId) {
      const link = await c.services.payLinks.create(projectId, { planId, userId });
      return link.ok ? link.value.url : null;
    },
    // Not a portal link (single use, 15 minutes): a member opens a reminder days later. The project's
    // portal sign-in page never expires; they sign in there with Discord or Telegram.
    billing(projectId) {
      return Promise.resolve(`${c.config.frontDesk.publicUrl}/p/${projectId}/portal`);
    },
  };
}

/** How often drift repair looks for bots due (a bot just taken is looked at once, through onAcquired). */
export const RECONCILE_TICK_MS = 5_000;

/**
 * Drift repair (docs/access-discord.md "Drift repair") of the bots `access` holds, with their REST clients,
 * every TENURE_ACCESS_RECONCILE_SECONDS; a bot the worker has just taken is looked at at once.
 */
export function createReconciler(c: Container, access: AccessWorker<REST>): Reconciler {
  const reconciler = new Reconciler(
    {
      store: c.stores.accessReconcile,
      planProject: (projectId) => c.stores.accessPlan.planProject(projectId),
      bots: access,
      clock: c.clock,
      logger: c.logger,
    },
    { everyMs: c.config.access.reconcileMs, tickMs: Math.min(RECONCILE_TICK_MS, c.config.access.reconcileMs) },
  );
  access.leases.onAcquired(() => reconciler.wake());
  return reconciler;
}

/**
 * Telegram drift repair (docs/access-telegram.md, "Telegram drift repair") of the bots `worker`
 * (the Telegram access worker) holds, with their clients, every TENURE_ACCESS_RECONCILE_SECONDS; a
 * bot the worker has just taken is looked at at once. `options` override the configuration's
 * (tests compare whenever they ask: `everyMs` 0).
 */
export function createTelegramReconciler<C extends ChatMemberReader>(
  c: Container,
  worker: AccessWorker<C>,
  options: Partial<TelegramReconcilerOptions> = {},
): TelegramReconciler<C> {
  const everyMs = c.config.access.reconcileMs;
  const reconciler = new TelegramReconciler<C>(
    {
      store: c.stores.telegramReconcile,
      planProject: (projectId) => c.stores.accessPlan.planProject(projectId),
      bots: worker,
      clock: c.clock,
      logger: c.logger,
    },
    { everyMs, tickMs: Math.min(RECONCILE_TICK_MS, everyMs), ...options },
  );
  worker.leases.onAcquired(() => reconciler.wake());
  return reconciler;
}
