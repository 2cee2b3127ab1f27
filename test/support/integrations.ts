import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import type { IntegrationView } from '../../src/domain/integrations/integration.view.js';
import type { Platform, TargetView } from '../../src/domain/targets/target.view.js';
import { createLogger } from '../../src/logger.js';
import { rowsOf } from '../../src/database/db.js';
import { expectError, projectState } from './api.js';
import {
  addBot,
  addTelegramBot,
  connectBot,
  connectTelegramBot,
  discordLikeToken,
  discordPath,
  integrationRow,
  telegramPath,
  type IntegrationRow,
  type TestBot,
} from './bots.js';
import { createTarget } from './catalogue.js';
import type { FakeTelegram } from './fake-telegram.js';
import type { Harness, Tenant } from './harness.js';

/**
 * The two bot platforms as the integration suites see them: what differs between Discord and
 * Telegram (route, wording, how the fake adds a bot, revokes a token or counts the token checks),
 * so that what both share (test/http/integrations-shared.*.test.ts) is written once.
 */

export interface BotPlatform {
  name: Platform;
  label: 'Discord' | 'Telegram';
  /** The project's other platform: its connection is a row of its own. */
  other: Platform;
  path(t: Tenant): string;
  /** A new bot on the platform's fake, which answers the token check for its token. */
  addBot(h: Harness, username?: string): TestBot;
  /** Connects `bot` through the API (200 expected) and returns the answer's data. */
  connect(t: Tenant, bot: TestBot): Promise<IntegrationView>;
  /** A target of the platform on the project, one a plan can grant. */
  addTarget(h: Harness, t: Tenant, name: string): Promise<TargetView>;
  /** Every call the platform's fake has received so far. */
  calls(h: Harness): number;
  /** The answers to the token checks so far, oldest first. */
  checkStatuses(h: Harness): number[];
  /** The token check as `callsOf` names it. */
  tokenCheck: string;
  /** What a connection of a bot without targets asks the platform, as `callsOf` names them (Discord: the application too). */
  connectCalls: [string, number][];
  /** The calls made with `botId`'s token, as [call, status]. */
  callsOf(h: Harness, botId: string): [string, number][];
  /** The platform's token reset: the bot's current token is refused from now on. */
  revoke(h: Harness, bot: TestBot): void;
  /** The same bot with a new token (the old one is refused from now on). */
  renew(h: Harness, bot: TestBot): TestBot;
  /** A well-formed token the platform does not know (`bot`'s id with another secret where the id shows). */
  strangerToken(bot: TestBot): string;
  /** A well-formed token, for the bodies that never reach the check. */
  wellFormed: string;
  /** The parts of a token that must not show anywhere (the secret, and for Discord every part). */
  secretParts(token: string): string[];
  /** How a user may paste the token around its bare form, besides surrounding whitespace. */
  prefixed: [what: string, dress: (token: string) => string];
  messages: { refused: string; empty: string };
  /** What the status of a fresh connection adds to the connection (Telegram: its chats). */
  freshStatus: Record<string, unknown>;
}

/** A Telegram group target on a new supergroup of the fake (or on `chatId`, which may not exist). */
export async function telegramTarget(t: Tenant, telegram: FakeTelegram, name: string, chatId?: number): Promise<TargetView & { chatId: number }> {
  const id = chatId ?? telegram.addChat({ type: 'supergroup', title: name }).id;
  const target = await createTarget(t, { platform: 'telegram', kind: 'group', target_name: name, external_id: String(id) });
  return { ...target, chatId: id };
}

const BOT_FATHER = 'send /token and choose the bot';
/** Telegram's refusal of a token, with its answer (`401 Unauthorized`, `404 Not Found`). */
export const telegramRefused = (answer: string): string => `Telegram refused bot_token (${answer}): copy the current token from @BotFather (${BOT_FATHER})`;
const DEVELOPER_PORTAL = 'the Discord Developer Portal (your application, Bot, Reset Token)';

export const discord: BotPlatform = {
  name: 'discord',
  label: 'Discord',
  other: 'telegram',
  path: discordPath,
  addBot: (h, username) => addBot(h.discord, username),
  connect: connectBot,
  async addTarget(_h, t, name) {
    const guild = await createTarget(t, { kind: 'guild', target_name: `${name} server` });
    return createTarget(t, { target_name: name, parent_target_id: guild.target_id });
  },
  calls: (h) => h.discord.calls.length,
  checkStatuses: (h) => h.discord.calls.filter((c) => c.route === '/users/@me').map((c) => c.status),
  tokenCheck: 'GET /users/@me',
  connectCalls: [
    ['GET /users/@me', 200],
    ['GET /applications/@me', 200],
  ],
  callsOf: (h, botId) => h.discord.calls.filter((c) => c.botId === botId).map((c) => [`${c.method} ${c.route}`, c.status]),
  revoke: (h, bot) => h.discord.resetToken(bot.id, `${bot.token}x`),
  renew(h, bot) {
    const renewed = { ...bot, token: discordLikeToken(bot.id) };
    h.discord.resetToken(bot.id, renewed.token);
    return renewed;
  },
  strangerToken: () => 'MTIz.not.a-token-discord-knows',
  wellFormed: 'MTIz.abc.def',
  secretParts: (token) => [token, ...token.split('.')],
  prefixed: ['a "Bot " prefix', (token) => `Bot ${token}`],
  messages: {
    refused: `Discord refused bot_token (401 Unauthorized): copy the current token from ${DEVELOPER_PORTAL}`,
    empty: `bot_token must not be empty: copy it from ${DEVELOPER_PORTAL}`,
  },
  freshStatus: { commands_error: null, web_login: false },
};

export const telegram: BotPlatform = {
  name: 'telegram',
  label: 'Telegram',
  other: 'discord',
  path: telegramPath,
  addBot: (h, username) => addTelegramBot(h.telegram, username),
  connect: connectTelegramBot,
  addTarget: (h, t, name) => telegramTarget(t, h.telegram, name),
  calls: (h) => h.telegram.calls.length,
  checkStatuses: (h) => h.telegram.calls.filter((c) => c.method === 'getMe').map((c) => c.status),
  tokenCheck: 'getMe',
  connectCalls: [['getMe', 200]],
  callsOf: (h, botId) => h.telegram.calls.filter((c) => String(c.botId) === botId).map((c) => [c.method, c.status]),
  revoke: (h, bot) => void h.telegram.resetToken(Number(bot.id)),
  renew: (h, bot) => ({ ...bot, token: h.telegram.resetToken(Number(bot.id)) }),
  strangerToken: (bot) => `${bot.id}:${'x'.repeat(35)}`,
  wellFormed: `123:${'a'.repeat(35)}`,
  secretParts: (token) => [token, token.split(':')[1]!],
  prefixed: ['as it appears in a Bot API URL', (token) => `bot${token}`],
  messages: {
    refused: telegramRefused('401 Unauthorized'),
    empty: `bot_token must not be empty: @BotFather gives it: ${BOT_FATHER}`,
  },
  freshStatus: { chats: [] },
};

/** Both platforms, as `[label, platform]` rows for `describe.each`. */
export const platforms: readonly (readonly [string, BotPlatform])[] = [
  ['Discord', discord],
  ['Telegram', telegram],
];
export const platformNamed = (name: Platform): BotPlatform => (name === 'discord' ? discord : telegram);

/** Everything a refused PUT must leave as it was: the project and its connection to `p`. */
export async function connectionSnapshot(h: Harness, p: BotPlatform, t: Tenant): Promise<{ project: unknown; integration: IntegrationRow | undefined }> {
  return { project: await projectState(h, t.projectId), integration: await integrationRow(h, t.projectId, p.name) };
}

/**
 * Sends a PUT to `p`'s route with `payload` (a string is sent as raw JSON, undefined as no body)
 * and expects `want`; the project and its connection are left as they were.
 */
export async function expectRefusedPut(
  h: Harness,
  p: BotPlatform,
  t: Tenant,
  payload: unknown,
  want: { status: number; code: string; message: string },
): Promise<LightMyRequestResponse> {
  const before = await connectionSnapshot(h, p, t);
  const path = p.path(t);
  const body = payload === undefined ? {} : typeof payload === 'string' ? { payload, headers: { 'content-type': 'application/json' } } : { payload: payload as object };
  const res = await t.request({ method: 'PUT', url: path, ...body });
  expectError(res, { ...want, method: 'PUT', path });
  expect(await connectionSnapshot(h, p, t)).toStrictEqual(before);
  return res;
}

/** PUTs `payload` for a new project, expects 422 with `message`, and that `p`'s fake heard nothing. */
export async function expectRefusedUnasked(h: Harness, p: BotPlatform, payload: unknown, message: string): Promise<void> {
  const t = await h.tenant();
  const calls = p.calls(h);
  await expectRefusedPut(h, p, t, payload, { status: 422, code: 'VALIDATION_ERROR', message });
  expect(p.calls(h)).toBe(calls);
}

/** Flags targets unhealthy with `error`, as the worker does on Discord's 50013 or 10011. */
export async function markUnhealthy(h: Harness, targetIds: string[], error: { code: string; message: string }): Promise<void> {
  await h.database.db.execute(sql`
    UPDATE targets SET health = 'unhealthy', health_error = ${JSON.stringify(error)}::jsonb WHERE id = ANY(${sql.param(targetIds)}::uuid[])`);
}

/**
 * Puts the access rows of `users` on a target in `states` (inserting them if the planner has not),
 * as the worker leaves them: failed rows with a 50013, waiting ones with a 10007, three attempts
 * each, next due in an hour.
 */
export async function setAccess(h: Harness, projectId: string, targetId: string, platform: string, users: string[], states: string[]): Promise<void> {
  for (const [i, state] of states.entries()) {
    const error =
      state === 'failed' ? { code: '50013', message: 'Missing Permissions' } : state === 'waiting_for_member' ? { code: '10007', message: 'Unknown Member' } : null;
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, applied, state, last_error, attempts, next_attempt_at, failed_generation)
      VALUES (${projectId}, ${targetId}, ${users[i]!}, ${platform}, 'role', '123', 'remove_role', 'granted', NULL, ${state},
              ${error === null ? null : JSON.stringify(error)}::jsonb, 3, now() + interval '1 hour', ${state === 'failed' ? 1 : null})
      ON CONFLICT (target_id, user_id) DO UPDATE SET state = excluded.state, last_error = excluded.last_error, attempts = excluded.attempts,
        next_attempt_at = excluded.next_attempt_at, failed_generation = excluded.failed_generation`);
  }
}

export interface AccessStateRow {
  user_id: string;
  platform: string;
  state: string;
  attempts: number;
  last_error: unknown;
  failed_generation: number | null;
  next_attempt_at: string;
}

/** The project's access rows, by platform then user, with the fields a reconnection may move. */
export async function accessStates(h: Harness, projectId: string): Promise<AccessStateRow[]> {
  return rowsOf<AccessStateRow>(
    await h.database.db.execute(sql`
      SELECT user_id, platform, state, attempts, last_error, failed_generation, next_attempt_at::text AS next_attempt_at
      FROM access WHERE project_id = ${projectId} ORDER BY platform, user_id`),
  ).map((r) => ({ ...r, next_attempt_at: new Date(r.next_attempt_at).toISOString() }));
}

/** The health of the project's targets, by id. */
export async function targetsHealth(h: Harness, projectId: string): Promise<{ id: string; platform: string; health: string; health_error: unknown }[]> {
  return rowsOf<{ id: string; platform: string; health: string; health_error: unknown }>(
    await h.database.db.execute(sql`SELECT id, platform, health, health_error FROM targets WHERE project_id = ${projectId} ORDER BY id`),
  );
}

/** A trace logger that keeps every line it writes in `lines`, to look for tokens in the logs. */
export function capturedLog(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger('trace', capture) };
}
