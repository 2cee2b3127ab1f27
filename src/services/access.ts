import { discordCommandRegistrar } from '../access/discord/front-desk-calls.js';
import { discordTokenCheck } from '../access/discord/token-check.js';
import { telegramTokenCheck } from '../access/telegram/token-check.js';
import { AccessService } from '../domain/access/access.service.js';
import { DiscordCommandsRegistration } from '../domain/front-desk/discord-commands-registration.js';
import { IntegrationsService } from '../domain/integrations/integrations.service.js';
import { TelegramWebhookSecrets } from '../domain/integrations/telegram-webhook-secret.js';
import { TelegramWebhookService } from '../domain/integrations/telegram-webhook.service.js';
import { discordWarning, type ServiceInputs } from './inputs.js';

/** The project's bots and the access they grant (docs/access.md). */
export interface AccessServices {
  /** Bot connections: the token checked with the platform, sealed with the secret box (docs/access.md). */
  integrations: IntegrationsService;
  /** The access rows and their resync (docs/access.md). */
  access: AccessService;
  /** Telegram's deliveries of a bot's updates to the webhook route (TENURE_TELEGRAM_UPDATES=webhook). */
  telegramWebhook: TelegramWebhookService;
  /** Registers the commands for members in the guilds of a project's Discord targets. */
  discordCommands: DiscordCommandsRegistration;
}

export function accessServices({ stores, config, clock, secretBox, logger }: ServiceInputs): AccessServices {
  const discordCommands = new DiscordCommandsRegistration(
    stores.discordFrontDesk,
    secretBox,
    discordCommandRegistrar(config.access.discordApiUrl),
    discordWarning(logger, 'registering the Discord commands failed'),
  );
  return {
    // Connecting a bot plans the whole project (the planner's store).
    integrations: new IntegrationsService(
      stores.integrations,
      secretBox,
      { discord: discordTokenCheck(config.access.discordApiUrl), telegram: telegramTokenCheck(config.access.telegramApiUrl) },
      stores.accessPlan,
      clock,
      async (projectId, platform) => {
        if (platform === 'discord') await discordCommands.register(projectId);
      },
    ),
    access: new AccessService(stores.access, stores.accessPlan, stores.telegramInvites, clock),
    telegramWebhook: new TelegramWebhookService(stores.telegramUpdates, TelegramWebhookSecrets.of(secretBox), { enabled: config.access.telegram.updates === 'webhook' }, clock),
    discordCommands,
  };
}
