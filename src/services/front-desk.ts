import { discordFollowUps } from '../access/discord/front-desk-calls.js';
import { DiscordInteractions } from '../domain/front-desk/discord-interactions.js';
import { PAY_LINK_TTL_MS, PayLinksService } from '../domain/front-desk/pay-links.service.js';
import { PortalActions } from '../domain/front-desk/portal-actions.js';
import { PortalService } from '../domain/front-desk/portal.service.js';
import type { AccessServices } from './access.js';
import type { CatalogueServices } from './catalogue.js';
import { discordWarning, type ServiceInputs } from './inputs.js';
import type { PaymentServices } from './payments.js';

/** The front desk (docs/front-desk.md): pay links, the member's portal and the bot's conversations with members. */
export interface FrontDeskServices {
  /** Pay links: a plan bound to one member, paid on Stripe's checkout page (docs/front-desk.md); the chats hand them out. */
  payLinks: PayLinksService;
  /** The member's portal: single-use links to their memberships, payments and Stripe billing (docs/front-desk.md). */
  portal: PortalService;
  /** The portal's forms: a renewal cancelled or resumed, a Telegram invite, invoicing details (docs/portal.md). */
  portalActions: PortalActions;
  /** Discord's interactions with the project's bot: commands and buttons for members (docs/front-desk.md). */
  discordInteractions: DiscordInteractions;
}

export function frontDeskServices(
  { stores, transactor, config, clock, secretBox, stripe, logger }: ServiceInputs,
  { plans, checkout, stripeEvents, invoicing, access }: Pick<CatalogueServices, 'plans'> & Pick<PaymentServices, 'checkout' | 'stripeEvents' | 'invoicing'> & Pick<AccessServices, 'access'>,
): FrontDeskServices {
  const { publicUrl } = config.frontDesk;
  const payLinks = new PayLinksService(
    transactor,
    stores.payLinks,
    plans,
    checkout,
    stores.merchantAccounts,
    stores.memberships,
    stripeEvents,
    stripe,
    secretBox,
    clock,
    { publicUrl, ttlMs: PAY_LINK_TTL_MS },
    stores.guildJoins,
    stores.web,
  );
  const portal = new PortalService({ transactor, links: stores.portalLinks, accounts: stores.merchantAccounts, stripe, invoicing, box: secretBox, clock, publicUrl });
  return {
    payLinks,
    portal,
    portalActions: new PortalActions({
      links: stores.portalLinks,
      accounts: stores.merchantAccounts,
      stripe,
      stripeEvents,
      invoicing,
      access,
      invites: stores.telegramInvites,
      box: secretBox,
      clock,
    }),
    discordInteractions: new DiscordInteractions(
      stores.discordFrontDesk,
      // A plan button's answer: the pressing member's own pay link.
      payLinks,
      discordFollowUps(config.access.discordApiUrl),
      clock,
      discordWarning(logger, 'answering a Discord interaction failed'),
      portal,
      // A member who talks to the bot is reachable again (docs/front-desk.md, "Confirmations").
      stores.notifications,
    ),
  };
}
