/**
 * The application commands tenure registers in each guild of a project's Discord targets (a bulk
 * overwrite, so the guild holds exactly these), and the ids of the buttons its replies carry.
 * docs/front-desk.md, "Discord: commands for members".
 */

/** Discord's ADMINISTRATOR permission bit: `/subscribe-panel` is shown to admins only. */
export const ADMINISTRATOR = 1n << 3n;

export const COMMAND = { subscribe: 'subscribe', memberships: 'memberships', subscribePanel: 'subscribe-panel' } as const;

/** A chat-input command as the bulk overwrite takes it (Discord's application command object). */
export interface CommandDefinition {
  name: string;
  description: string;
  type: 1;
  default_member_permissions: string | null;
  dm_permission: false;
  /** 0 = guild: the commands are registered per guild and never run in DMs. */
  contexts: [0];
}

export const COMMANDS: readonly CommandDefinition[] = [
  { name: COMMAND.subscribe, description: 'See the plans of this server and get your own pay link', type: 1, default_member_permissions: null, dm_permission: false, contexts: [0] },
  { name: COMMAND.memberships, description: 'See your memberships here and until when they run', type: 1, default_member_permissions: null, dm_permission: false, contexts: [0] },
  {
    name: COMMAND.subscribePanel,
    description: 'Post a lasting Subscribe button in this channel (admins)',
    type: 1,
    default_member_permissions: String(ADMINISTRATOR),
    dm_permission: false,
    contexts: [0],
  },
];

/** The Subscribe button of a panel: the same answer as `/subscribe`. */
export const SUBSCRIBE_BUTTON_ID = 'tenure:subscribe';
const PLAN_BUTTON_PREFIX = 'tenure:plan:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const planButtonId = (planId: string): string => `${PLAN_BUTTON_PREFIX}${planId}`;

/** The plan id a button's custom_id carries; null for anything else (a forged or stale id). */
export function planIdOf(customId: string): string | null {
  if (!customId.startsWith(PLAN_BUTTON_PREFIX)) return null;
  const id = customId.slice(PLAN_BUTTON_PREFIX.length);
  return UUID.test(id) ? id.toLowerCase() : null;
}

/** Whether the member's permissions (Discord's decimal bit set, as the interaction carries it) include ADMINISTRATOR. */
export function isAdmin(permissions: string | undefined): boolean {
  if (!permissions || !/^\d{1,30}$/.test(permissions)) return false;
  return (BigInt(permissions) & ADMINISTRATOR) === ADMINISTRATOR;
}
