import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { IntegrationView } from '../../src/domain/integrations/integration.view.js';
import { rowsOf } from '../../src/database/db.js';
import { fakeSnowflake, type FakeDiscord } from './fake-discord.js';
import type { FakeTelegram } from './fake-telegram.js';
import type { Harness, Tenant } from './harness.js';

/** Bots on the fake Discord and the fake Telegram, and their connections, for the integration suites. */

export interface TestBot {
  id: string;
  token: string;
  username: string;
}

/** A token shaped like Discord's: the bot id in base64, a timestamp part, an HMAC part. */
export const discordLikeToken = (id: string): string =>
  `${Buffer.from(id).toString('base64url')}.${randomBytes(4).toString('base64url')}.${randomBytes(28).toString('base64url')}`;

/** A new bot on `discord`, which answers `GET /users/@me` for its token. */
export function addBot(discord: FakeDiscord, username = 'tenure-bot'): TestBot {
  const id = fakeSnowflake();
  const bot = { id, token: discordLikeToken(id), username };
  discord.addBot(bot);
  return bot;
}

export const discordPath = (t: Tenant): string => `${t.base}/integrations/discord`;

/** Connects `bot` to `t`'s project through the API and returns the answer's data. */
export async function connectBot(t: Tenant, bot: TestBot): Promise<IntegrationView> {
  const res = await t.request({ method: 'PUT', url: discordPath(t), payload: { bot_token: bot.token } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** A new bot on `telegram`, which answers `getMe` for its token (`<id>:<35 characters>`); its id as the API shows it. */
export function addTelegramBot(telegram: FakeTelegram, username?: string): TestBot {
  const bot = telegram.addBot(username === undefined ? {} : { username });
  return { id: String(bot.id), token: bot.token, username: bot.username };
}

export const telegramPath = (t: Tenant): string => `${t.base}/integrations/telegram`;

/** Connects Telegram `bot` to `t`'s project through the API and returns the answer's data. */
export async function connectTelegramBot(t: Tenant, bot: TestBot): Promise<IntegrationView> {
  const res = await t.request({ method: 'PUT', url: telegramPath(t), payload: { bot_token: bot.token } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** The fake Telegram's `getMe` calls so far (the token checks). */
export const telegramTokenChecks = (telegram: FakeTelegram) => telegram.calls.filter((c) => c.method === 'getMe');

export interface IntegrationRow {
  platform: string;
  bot_token_sealed: string;
  bot_id: string;
  bot_name: string;
  connected_at: string;
  health: string;
  last_error: unknown;
  generation: number;
}

/** The project's connection row as stored (the sealed token included); undefined when none. */
export async function integrationRow(h: Harness, projectId: string, platform = 'discord'): Promise<IntegrationRow | undefined> {
  return rowsOf<IntegrationRow>(
    await h.database.db.execute(sql`
      SELECT platform, bot_token_sealed, bot_id, bot_name,
             to_char(connected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS connected_at,
             health, last_error, generation
      FROM integrations WHERE project_id = ${projectId} AND platform = ${platform}`),
  )[0];
}

/** The fake's `GET /users/@me` calls so far (the token checks). */
export const tokenChecks = (discord: FakeDiscord) => discord.calls.filter((c) => c.route === '/users/@me');
