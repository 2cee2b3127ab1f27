import type { Clock } from '../clock.js';
import { fail, ok, type Result } from '../errors.js';
import { COMMAND, isAdmin, planIdOf, SUBSCRIBE_BUTTON_ID } from './discord-commands.js';
import { ephemeral, membershipsMessage, panelMessage, planSummary, plansMessage, EPHEMERAL, type MemberMembership, type MessageData, type PlanOffer } from './discord-messages.js';
import { checkSignature, MAX_SIGNATURE_AGE_MS } from './discord-signature.js';

/**
 * Interactions Discord POSTs to `/interactions/discord/{project_id}` (docs/front-desk.md, "Discord:
 * commands for members"): the signature is checked before the body is read, an interaction id is
 * taken once, and each command or button gets its answer within Discord's 3 s. An answer that needs
 * a pay link is deferred (type 5, ephemeral) and then edited through the follow-up webhook, since
 * making the link may wait on Stripe.
 */

/** The application of a project's Discord bot, as read when the bot was connected. */
export interface DiscordApplication {
  applicationId: string;
  verifyKey: string;
}

/** The statements the interactions need (src/store/discord-front-desk.store.ts). */
export interface FrontDeskStatements {
  application(projectId: string): Promise<DiscordApplication | null>;
  /** Records the interaction id; false when it was recorded before (a replay). */
  firstSeen(interactionId: string, now: Date): Promise<boolean>;
  /** The plans granting a target in `guildId`, oldest first. */
  plansInGuild(projectId: string, guildId: string): Promise<PlanOffer[]>;
  membershipsOf(projectId: string, userId: string, now: Date): Promise<MemberMembership[]>;
}

/** Pay links (src/domain/front-desk/pay-links.service.ts). */
export interface PayLinkMaker {
  create(projectId: string, input: { planId: string; userId: string }): Promise<Result<{ url: string }>>;
}

/** The member's portal links (src/domain/front-desk/portal.service.ts): single use, short-lived. */
export interface PortalLinkMaker {
  create(projectId: string, userId: string): Promise<Result<{ url: string }>>;
}

/** Edits the deferred answer (`PATCH /webhooks/{application.id}/{interaction.token}/messages/@original`). */
export interface InteractionFollowUps {
  editOriginal(applicationId: string, interactionToken: string, message: MessageData): Promise<void>;
}

/** Discord's interaction callback: `type` 1 PONG, 4 a message, 5 deferred. */
export interface InteractionCallback {
  type: 1 | 4 | 5;
  data?: MessageData;
}

export interface InteractionAnswer {
  callback: InteractionCallback;
  /** Work to run once the callback is sent (the follow-up edit); never throws. */
  after?: () => Promise<void>;
}

/** The fields of an interaction tenure reads (Discord's interaction object). */
interface Interaction {
  id?: unknown;
  type?: unknown;
  token?: unknown;
  guild_id?: unknown;
  data?: { name?: unknown; custom_id?: unknown };
  member?: { user?: { id?: unknown }; permissions?: unknown };
  user?: { id?: unknown };
}

const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

const SOMETHING_WRONG = 'Something went wrong on our side. Please try again in a minute.';

export class DiscordInteractions {
  constructor(
    private readonly store: FrontDeskStatements,
    private readonly payLinks: PayLinkMaker,
    private readonly followUps: InteractionFollowUps,
    private readonly clock: Clock,
    private readonly onFollowUpFailed: (err: unknown) => void = () => {},
    private readonly portal: PortalLinkMaker | null = null,
    /** Clears the member's unreachable mark (docs/front-desk.md, "Confirmations"). */
    private readonly reachable: { clearUnreachable(projectId: string, userId: string, platform: 'discord'): Promise<boolean> } | null = null,
  ) {}

  async receive(projectId: string, rawBody: string, signature: string | undefined, timestamp: string | undefined): Promise<Result<InteractionAnswer>> {
    const app = await this.store.application(projectId);
    if (!app) return fail('UNAUTHORIZED', 'No Discord application is connected to this project: connect its bot first');
    const now = this.clock.now();
    const verdict = checkSignature(app.verifyKey, signature, timestamp, rawBody, now);
    if (verdict === 'missing') return fail('UNAUTHORIZED', 'X-Signature-Ed25519 and X-Signature-Timestamp are required');
    if (verdict === 'bad') return fail('UNAUTHORIZED', 'The interaction signature does not verify with the application key');
    if (verdict === 'stale') return fail('UNAUTHORIZED', `The interaction timestamp is more than ${MAX_SIGNATURE_AGE_MS / 60_000} minutes away from now`);
    let interaction: Interaction;
    try {
      interaction = JSON.parse(rawBody) as Interaction;
    } catch {
      return fail('BAD_REQUEST', 'The interaction is not valid JSON');
    }
    if (typeof interaction !== 'object' || interaction === null) return fail('BAD_REQUEST', 'The interaction must be a JSON object');
    if (interaction.type === PING) return ok({ callback: { type: 1 } });
    const id = str(interaction.id);
    const token = str(interaction.token);
    if (!id || !token) return fail('BAD_REQUEST', 'The interaction has no id or token');
    if (!(await this.store.firstSeen(id, now))) return fail('UNAUTHORIZED', 'This interaction was received before: a replay is refused');
    return ok(await this.answer(projectId, app, interaction, token));
  }

  private async answer(projectId: string, app: DiscordApplication, interaction: Interaction, token: string): Promise<InteractionAnswer> {
    const guildId = str(interaction.guild_id);
    const userId = str(interaction.member?.user?.id) ?? str(interaction.user?.id);
    // Whoever talks to the bot can be written to again: a DM tried before may work now.
    if (userId) await this.reachable?.clearUnreachable(projectId, userId, 'discord');
    if (!guildId || !userId) return message(ephemeral('Use this in the server whose membership you want.'));
    const name = str(interaction.data?.name);
    const customId = str(interaction.data?.custom_id);

    if (interaction.type === APPLICATION_COMMAND && name === COMMAND.subscribe) {
      return message(plansMessage(await this.store.plansInGuild(projectId, guildId)));
    }
    if (interaction.type === APPLICATION_COMMAND && name === COMMAND.memberships) {
      const memberships = await this.store.membershipsOf(projectId, userId, this.clock.now());
      // A portal link is one insert: made only for a member with something to manage.
      const portal = memberships.length > 0 && this.portal ? await this.portal.create(projectId, userId) : null;
      return message(membershipsMessage(memberships, portal?.ok ? portal.value.url : null));
    }
    if (interaction.type === APPLICATION_COMMAND && name === COMMAND.subscribePanel) {
      // Discord hides the command from others (default_member_permissions); checked again here.
      if (!isAdmin(str(interaction.member?.permissions))) return message(ephemeral('Only the server admins can post the Subscribe panel.'));
      return message(panelMessage());
    }
    if (interaction.type === MESSAGE_COMPONENT && customId === SUBSCRIBE_BUTTON_ID) {
      return message(plansMessage(await this.store.plansInGuild(projectId, guildId)));
    }
    const planId = interaction.type === MESSAGE_COMPONENT && customId ? planIdOf(customId) : null;
    if (planId) {
      const offer = (await this.store.plansInGuild(projectId, guildId)).find((o) => o.planId === planId);
      if (!offer) return message(ephemeral('This plan is no longer offered here. Use /subscribe to see the current plans.'));
      return {
        callback: { type: 5, data: { content: '', flags: EPHEMERAL } },
        after: () => this.sendPayLink(projectId, app, token, offer, userId),
      };
    }
    return message(ephemeral('I do not know that one. Try /subscribe or /memberships.'));
  }

  /** Makes the member's pay link and edits the deferred answer with it; a failure is said to the member. */
  private async sendPayLink(projectId: string, app: DiscordApplication, token: string, offer: PlanOffer, userId: string): Promise<void> {
    let reply: MessageData;
    try {
      const link = await this.payLinks.create(projectId, { planId: offer.planId, userId });
      reply = link.ok ? planSummary(offer, link.value.url) : ephemeral(`I could not make your pay link: ${link.error.message}`);
    } catch (err) {
      this.onFollowUpFailed(err);
      reply = ephemeral(SOMETHING_WRONG);
    }
    try {
      await this.followUps.editOriginal(app.applicationId, token, reply);
    } catch (err) {
      this.onFollowUpFailed(err);
    }
  }
}

const message = (data: MessageData): InteractionAnswer => ({ callback: { type: 4, data } });
