import type { LightMyRequestResponse } from 'fastify';
import { addBot, connectBot, type TestBot } from './bots.js';
import { createPlan, createTarget, grant, snowflake } from './catalogue.js';
import type { SignedInteraction } from './fake-discord.js';
import type { Harness, Tenant } from './harness.js';

/** A project selling one plan in one guild of the fake Discord, its bot connected: the interactions suites' start. */
export interface FrontDeskGuild {
  t: Tenant;
  bot: TestBot;
  guildId: string;
  planId: string;
  roleName: string;
}

export async function frontDeskGuild(h: Harness, planName = 'Gold'): Promise<FrontDeskGuild> {
  const t = await h.tenant();
  const bot = addBot(h.discord);
  const guildId = snowflake();
  h.discord.addGuild({ id: guildId, name: 'Club' });
  const guild = await createTarget(t, { kind: 'guild', target_name: 'Club', external_id: guildId });
  const role = await createTarget(t, { kind: 'role', target_name: 'VIP', parent_target_id: guild.target_id });
  const plan = await createPlan(t, { plan_name: planName });
  await grant(t, plan.plan_id, role.target_id);
  await connectBot(t, bot);
  return { t, bot, guildId, planId: plan.plan_id, roleName: 'VIP' };
}

/** A member's slash command in `guildId`, as Discord sends it (type 2). */
export const command = (name: string, guildId: string, userId: string, permissions = '0') => ({
  type: 2,
  guild_id: guildId,
  channel_id: snowflake(),
  member: { user: { id: userId, username: 'member' }, permissions },
  data: { id: snowflake(), name, type: 1 },
});

/** A member's press of a button of a message (type 3). */
export const buttonPress = (customId: string, guildId: string, userId: string) => ({
  type: 3,
  guild_id: guildId,
  channel_id: snowflake(),
  member: { user: { id: userId, username: 'member' }, permissions: '0' },
  data: { custom_id: customId, component_type: 2 },
});

export const interactionsPath = (t: Tenant): string => `/interactions/discord/${t.projectId}`;

/** POSTs a signed interaction to tenure as Discord does (headers overridable). */
export function postInteraction(h: Harness, t: Tenant, signed: SignedInteraction, headers: Record<string, string | undefined> = {}): Promise<LightMyRequestResponse> {
  const merged = Object.fromEntries(Object.entries({ ...signed.headers, ...headers }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return h.app.inject({ method: 'POST', url: interactionsPath(t), payload: signed.payload, headers: merged });
}
