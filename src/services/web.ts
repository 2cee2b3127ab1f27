import { DiscordLoginService } from '../domain/web/discord-login.service.js';
import { PublicPageService } from '../domain/web/public-page.js';
import { TelegramLoginService } from '../domain/web/telegram-login.service.js';
import { discordOAuth } from '../web/discord-oauth.js';
import { checkTelegramLogin } from '../web/telegram-login.js';
import type { FrontDeskServices } from './front-desk.js';
import { publicBase, type ServiceInputs } from './inputs.js';

/** Members on the web (docs/web.md): the public plan page and signing in with Discord or Telegram. */
export interface WebServices {
  /** The public plan page of a project (docs/web.md). */
  publicPages: PublicPageService;
  /** Login with Discord for a web buyer: their Discord id becomes their pay link's member (docs/web.md). */
  discordLogin: DiscordLoginService;
  /** Signing in with the Telegram Login Widget: a buyer's pay link, or a member's portal (docs/web.md). */
  telegramLogin: TelegramLoginService;
}

export function webServices({ stores, config, clock, secretBox }: ServiceInputs, { payLinks, portal }: Pick<FrontDeskServices, 'payLinks' | 'portal'>): WebServices {
  return {
    publicPages: new PublicPageService(stores.web, clock),
    discordLogin: new DiscordLoginService(stores.web, discordOAuth(config.access.discordApiUrl), payLinks, portal, secretBox, clock, {
      redirectUri: `${publicBase(config)}/auth/discord/callback`,
    }),
    telegramLogin: new TelegramLoginService(stores.web, checkTelegramLogin, payLinks, portal, secretBox, clock, { publicUrl: publicBase(config) }),
  };
}
