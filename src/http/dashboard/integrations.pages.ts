import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { IntegrationStatusView } from '../../domain/integrations/integration.view.js';
import type { Platform } from '../../domain/targets/target.view.js';
import { audit, can, dashboardPage, foundOr404, messagePage, projectPath, requirePermission, seeOther, type DashboardDeps } from './context.js';
import { confirmedAction } from './confirmed-action.js';
import { botFix, chatFix, targetFix, unreachableFix } from './integrations-fixes.js';
import { field } from './plans-form.js';

/**
 * The integrations page (`/dashboard/{project_id}/integrations`, docs/dashboard-settings.md): each
 * bot's connection and health, the targets it cannot act on with the fix in plain words, Telegram
 * chats' missing rights, members the bot cannot reach; connecting or replacing a bot token (and the
 * Discord client secret) or disconnecting a bot, and the Stripe accounts with the webhook address to
 * paste into Stripe, saving or deleting one (disconnecting and deleting ask first).
 * Secrets are write-only: never shown back, re-rendered, audited or logged. Everything goes through
 * IntegrationsService and MerchantAccountsService as the v2 API does.
 * Needs `settings.integrations:write`; the Stripe accounts (seeing and deleting) also `merchant-accounts:read`.
 */

const hidden = { config: { public: true }, schema: { hide: true } };
const PERMISSION = 'settings.integrations:write';
type Params = { Params: { project_id: string } };
type PlatformParams = { Params: { project_id: string; platform: string } };
type AccountParams = { Params: { project_id: string; merchant_account_id: string } };
const PLATFORMS: readonly Platform[] = ['discord', 'telegram'];
const LABEL: Record<Platform, string> = { discord: 'Discord', telegram: 'Telegram' };

const NOTICES = {
  discord: 'Discord bot connected.',
  telegram: 'Telegram bot connected.',
  stripe: 'Stripe account saved.',
  'discord-disconnected': 'Discord bot disconnected: its token is deleted and access on Discord is no longer kept in step.',
  'telegram-disconnected': 'Telegram bot disconnected: its token is deleted and access on Telegram is no longer kept in step.',
  'stripe-deleted': 'Stripe account deleted: its keys are gone and its webhook address refuses events.',
};

type Failure = { status: number; error: string; for: string };

export const integrationsPages: FastifyPluginAsync<DashboardDeps> = async (app, { services, context }) => {
  const back = (request: FastifyRequest) => ({ href: projectPath(context, request.dashboardActor!.projectId, '/integrations'), label: 'Back to the integrations' });
  const botView = (platform: Platform, s: IntegrationStatusView | null) => {
    if (!s) return { platform, label: LABEL[platform], connected: false };
    return {
      platform,
      label: LABEL[platform],
      connected: true,
      name: s.bot_name,
      id: s.bot_id,
      healthy: s.health === 'ok',
      error: s.last_error ? `${s.last_error.message} (${s.last_error.code})` : null,
      fix: s.health === 'ok' ? null : botFix(platform),
      access: s.access,
      targets: s.targets.map((t) => ({ id: t.target_id, name: t.target_name, error: t.health_error ? `${t.health_error.message} (${t.health_error.code})` : 'unknown error', fix: targetFix(platform, t.health_error) })),
      chats: (s.chats ?? []).map((c) => ({ name: c.target_name, chatId: c.chat_id, fix: chatFix(c) })).filter((c) => c.fix !== null),
      commandsError: s.commands_error ? `${s.commands_error.message} (${s.commands_error.code})` : null,
      webLogin: s.web_login ?? null,
    };
  };

  const page = async (request: FastifyRequest, reply: FastifyReply, failure: Failure | null = null) => {
    const actor = requirePermission(request, PERMISSION);
    const [bots, unreachable] = await Promise.all([
      Promise.all(PLATFORMS.map(async (p) => {
        const status = await services.integrations.status(actor.projectId, p);
        return botView(p, status.ok ? status.value : null);
      })),
      services.memberNotifications.unreachable(actor.projectId),
    ]);
    const stripe = can(request, 'merchant-accounts:read') ? (await services.merchantAccounts.list(actor.projectId)).items : null;
    return dashboardPage(reply, 'integrations', {
      title: 'Integrations',
      section: 'integrations',
      notices: NOTICES,
      httpStatus: failure?.status ?? 200,
      error: failure?.error ?? null,
      errorFor: failure?.for ?? null,
      bots,
      unreachable: unreachable.map((u) => ({ ...u, label: LABEL[u.platform as Platform] ?? u.platform, fix: unreachableFix(u.reason) })),
      stripe: stripe?.map((a) => ({
        id: a.merchant_account_id,
        environment: a.environment,
        name: a.provider_account_name ?? a.provider_account_id,
        accountId: a.provider_account_id,
        webhookUrl: `${context.publicUrl}${a.webhook_path}`,
        webhookSecretSet: a.webhook_secret_set,
      })) ?? null,
    });
  };

  app.get<Params>('/dashboard/:project_id/integrations', hidden, async (request, reply) => page(request, reply));

  app.post<PlatformParams>('/dashboard/:project_id/integrations/:platform/connect', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const platform = request.params.platform as Platform;
    if (!PLATFORMS.includes(platform)) return page(request, reply, { status: 404, error: `There is no ${request.params.platform} bot to connect. Nothing was changed.`, for: 'top' });
    const token = field(request.body, 'bot_token');
    const secret = platform === 'discord' ? field(request.body, 'client_secret') : '';
    if (token === '') return page(request, reply, { status: 422, error: 'Paste the bot token.', for: platform });
    const connected = await services.integrations.connect(actor.projectId, platform, token, secret === '' ? undefined : secret);
    if (!connected.ok) return page(request, reply, { status: connected.error.status, error: connected.error.message, for: platform });
    await audit(request, 'integration.connect', platform, { bot_id: connected.value.bot_id, bot_name: connected.value.bot_name, client_secret_set: secret !== '' });
    return seeOther(reply, '/integrations', platform);
  });

  app.post<Params>('/dashboard/:project_id/integrations/stripe/accounts', { ...hidden, preHandler: app.csrfProtection }, async (request, reply) => {
    const actor = requirePermission(request, PERMISSION);
    const environment = field(request.body, 'environment');
    const key = field(request.body, 'secret_key');
    const webhookSecret = field(request.body, 'webhook_secret');
    if (environment !== 'sandbox' && environment !== 'production') return page(request, reply, { status: 422, error: 'environment must be one of: sandbox, production', for: 'stripe' });
    if (key === '') return page(request, reply, { status: 422, error: 'Paste the Stripe secret key (sk_… or rk_…).', for: 'stripe' });
    const saved = await services.merchantAccounts.connect(actor.projectId, { provider: 'stripe', environment, secret_key: key, ...(webhookSecret ? { webhook_secret: webhookSecret } : {}) });
    if (!saved.ok) return page(request, reply, { status: saved.error.status, error: saved.error.message, for: 'stripe' });
    const a = saved.value.account;
    await audit(request, 'merchant-account.connect', a.merchant_account_id, { environment: a.environment, account: a.provider_account_id, webhook_secret_set: a.webhook_secret_set });
    return seeOther(reply, '/integrations', 'stripe');
  });

  confirmedAction(app, {
    route: '/integrations/:platform/disconnect',
    permissions: [PERMISSION],
    section: 'integrations',
    find: async (request: FastifyRequest<PlatformParams>, reply) => {
      const platform = request.params.platform as Platform;
      // The stored connection names the bot: the page asks the platform nothing.
      const status = PLATFORMS.includes(platform) ? await services.integrations.stored(request.dashboardActor!.projectId, platform) : null;
      if (status?.ok) return { platform, bot: status.value };
      const label = LABEL[platform] ?? request.params.platform;
      await messagePage(reply, 404, { title: 'No bot to disconnect', lines: [`No ${label} bot is connected to this project (any more). Nothing was changed.`], action: back(request) });
      return null;
    },
    confirm: ({ platform, bot }) => ({
      title: `Disconnect the ${LABEL[platform]} bot ${bot.bot_name}?`,
      lines: [
        `Its token is deleted and tenure stops giving and taking access on ${LABEL[platform]}: new members do not get in, ended ones are not removed.`,
        `Nothing is taken back on ${LABEL[platform]} (members keep what they hold now), and members' access records stay, so connecting a bot again carries on from them. To take the bot out of your ${platform === 'discord' ? 'server, kick it there' : 'chats, remove it there'}.`,
      ],
      confirmLabel: 'Yes, disconnect the bot',
      back: '/integrations',
    }),
    act: (actor, { platform }) => services.integrations.disconnect(actor.projectId, platform),
    audit: ({ platform, bot }) => ({ action: 'integration.disconnect', subject: platform, details: { bot_id: bot.bot_id, bot_name: bot.bot_name } }),
    done: (reply, { platform }) => seeOther(reply, '/integrations', `${platform}-disconnected`),
  });

  confirmedAction(app, {
    route: '/integrations/stripe/accounts/:merchant_account_id/delete',
    // Deleting changes the integrations, and the confirmation page shows the account.
    permissions: [PERMISSION, 'merchant-accounts:read'],
    section: 'integrations',
    find: (request: FastifyRequest<AccountParams>, reply) =>
      foundOr404(reply, request.params.merchant_account_id, (projectId, id) => services.merchantAccounts.get(projectId, id), {
        title: 'Stripe account not found',
        line: 'This Stripe account is not connected to this project (any more).',
        back: '/integrations',
        backLabel: 'Back to the integrations',
      }),
    confirm: (a) => ({
      title: `Delete the ${a.environment} Stripe account ${a.provider_account_name ?? a.provider_account_id}?`,
      lines: [
        `Its keys are deleted: members can no longer pay with ${a.environment === 'production' ? 'live' : 'test'} money until an account is saved again, and Stripe's events sent to its webhook address are refused from now on.`,
        'Payments already recorded stay, and so do the memberships they paid for.',
      ],
      confirmLabel: 'Yes, delete the Stripe account',
      back: '/integrations',
    }),
    act: (actor, a) => services.merchantAccounts.delete(actor.projectId, a.merchant_account_id),
    audit: (a) => ({ action: 'merchant-account.delete', subject: a.merchant_account_id, details: { environment: a.environment, account: a.provider_account_id } }),
    done: (reply) => seeOther(reply, '/integrations', 'stripe-deleted'),
  });
};
