import type { ChatRightsView } from '../../domain/integrations/integration.view.js';
import type { Platform, PlatformError } from '../../domain/targets/target.view.js';

/**
 * What an owner does about each problem the integrations page shows, in plain words
 * (docs/access-discord.md and docs/access-telegram.md, "States and errors"; docs/front-desk.md,
 * "Members the bot cannot reach"). "Retry" is saving the target's page (a PATCH of the target).
 */

const RETRY = 'Then open the target and press Save target: that retries it and its waiting members at once.';

/** The fix for a target the bot cannot act on. */
export function targetFix(platform: Platform, error: PlatformError | null): string {
  const code = error?.code ?? '';
  const message = error?.message ?? '';
  if (platform === 'discord') {
    if (code === '50013') return `The bot's role is below the role it must give, or the bot lacks Manage Roles (Kick Members to remove people). In Discord: Server Settings → Roles, drag the bot's role above this role and give it Manage Roles. ${RETRY}`;
    if (code === '50001') return `The bot is not in this server. Invite it again (Developer Portal → OAuth2 → URL Generator, scope bot, permission Manage Roles). ${RETRY}`;
    if (code === '10011') return 'This role no longer exists in the server (deleted, or a wrong id). Create a target for the new role, add it to the plans, and delete this one.';
    if (code === '10004') return 'This server no longer exists, or the id is wrong. Create a target with the right server id, add it to the plans, and delete this one.';
    if (code === 'unsupported_target') return 'A role needs its server: create the role target again with its server chosen under "Inside", and delete this one.';
    return `Discord refused the bot here. Fix what the error says in Discord. ${RETRY}`;
  }
  if (/kicked|not a member|not_in_chat|bot_kicked|not_admin/i.test(`${code} ${message}`)) return `Add the bot back to the chat as an admin with the rights "Invite users via link" and "Ban users". ${RETRY}`;
  if (/not enough rights|missing_rights/i.test(`${code} ${message}`)) return `The bot is an admin without a right it needs: give it "Invite users via link" and "Ban users" in the chat's admin settings. ${RETRY}`;
  if (/upgraded to a supergroup/i.test(message)) return 'The group became a supergroup with a new id (in the error): create a target with the new id, add it to the plans, and delete this one.';
  if (/chat not found/i.test(message)) return 'The chat id is wrong or the chat was deleted: create a target with the right id and delete this one.';
  return `Telegram refused the bot here. Fix what the error says in the chat. ${RETRY}`;
}

/** The fix for a bot whose token the platform stopped taking. */
export function botFix(platform: Platform): string {
  return platform === 'discord'
    ? 'Discord no longer takes the token (it was reset, or the bot deleted). Developer Portal → your application → Bot → Reset Token, then paste the new token below.'
    : 'Telegram no longer takes the token. In BotFather send /token, choose the bot, then paste the new token below.';
}

/** What is missing of the bot's rights in one Telegram chat, with the fix; null when nothing is. */
export function chatFix(chat: ChatRightsView): string | null {
  if (chat.error) return `Telegram could not say (${chat.error.message}). If the bot is not in the chat, add it as an admin with "Invite users via link" and "Ban users".`;
  if (!chat.is_admin) return 'The bot is not an admin here: make it an admin with "Invite users via link" and "Ban users".';
  const missing = [chat.can_invite_users ? null : '"Invite users via link" (to let members in)', chat.can_restrict_members ? null : '"Ban users" (to remove members when they end)'].filter(Boolean);
  return missing.length === 0 ? null : `Give the bot the admin right ${missing.join(' and ')}.`;
}

const REASONS: Record<string, string> = {
  dm_closed: 'closed their DMs to the bot: they can allow DMs from server members (the server name → Privacy Settings → Direct Messages), or talk to the bot once',
  bot_blocked: 'blocked the bot: they must unblock it in Telegram',
  no_conversation: 'never opened the bot’s chat: they must press Start in it',
};

/** What an unreachable reason means and what the member does about it. */
export const unreachableFix = (reason: string): string => REASONS[reason] ?? reason;
