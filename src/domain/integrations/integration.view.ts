import type { IntegrationRecord, IntegrationStatus } from '../../store/integrations.store.js';
import type { Platform, PlatformError } from '../targets/target.view.js';
import type { BotChatRights, ChatToCheck } from './integrations.service.js';

/** A bot connection as the API shows it: never the token. */
export interface IntegrationView {
  platform: Platform;
  bot_id: string;
  bot_name: string;
  connected_at: string;
  /** `unhealthy`: the platform stopped taking the token (Discord 401); reconnect with a new one. */
  health: 'ok' | 'unhealthy';
  last_error: PlatformError | null;
}

export const ACCESS_STATES = ['synced', 'pending', 'waiting_for_member', 'failed'] as const;

export interface IntegrationStatusView extends IntegrationView {
  /** The project's targets of this platform the bot cannot act on. */
  targets: { target_id: string; target_name: string; health_error: PlatformError | null }[];
  /** The project's access rows of this platform, counted by state (every state, 0 included). */
  access: Record<(typeof ACCESS_STATES)[number], number>;
  /** Telegram: the bot's rights in each target chat, asked when the status is read. */
  chats?: ChatRightsView[];
  /** Discord: why the commands for members could not be registered in a guild, null once they were. */
  commands_error?: PlatformError | null;
  /** Discord: Login with Discord is set up (the application's client secret is held). */
  web_login?: boolean;
}

/** The bot in one target chat, as the platform said when asked. */
export interface ChatRightsView {
  target_id: string;
  target_name: string;
  chat_id: string;
  is_admin: boolean;
  can_invite_users: boolean;
  can_restrict_members: boolean;
  /** Why the platform could not say (the bot is not in the chat, the chat does not exist, Telegram unreachable). */
  error: PlatformError | null;
}

export function toIntegrationView(r: IntegrationRecord): IntegrationView {
  return {
    platform: r.platform,
    bot_id: r.botId,
    bot_name: r.botName,
    connected_at: r.connectedAt,
    health: r.health,
    last_error: r.lastError,
  };
}

export function toIntegrationStatusView(s: IntegrationStatus): IntegrationStatusView {
  return {
    ...toIntegrationView(s),
    targets: s.unhealthyTargets.map((t) => ({ target_id: t.targetId, target_name: t.targetName, health_error: t.healthError })),
    access: Object.fromEntries(ACCESS_STATES.map((state) => [state, s.accessByState[state] ?? 0])) as IntegrationStatusView['access'],
    ...(s.platform === 'discord' ? { commands_error: s.commandsError, web_login: s.webLogin } : {}),
  };
}

export function toChatRightsView(chat: ChatToCheck, rights: BotChatRights): ChatRightsView {
  return {
    target_id: chat.targetId,
    target_name: chat.targetName,
    chat_id: chat.chatId,
    is_admin: rights.isAdmin,
    can_invite_users: rights.canInviteUsers,
    can_restrict_members: rights.canRestrictMembers,
    error: rights.error,
  };
}
