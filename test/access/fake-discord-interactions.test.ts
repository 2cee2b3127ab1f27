import { createPublicKey, verify } from 'node:crypto';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { Routes, type RESTGetCurrentApplicationResult } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeSnowflake, startFakeDiscord, type FakeDiscord } from '../support/fake-discord.js';

/**
 * The fake Discord's applications, commands and interactions (test/support/fake-discord-interactions.ts),
 * proven with the real @discordjs/rest to answer as Discord documents them.
 */

let fake: FakeDiscord | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup() {
  fake = await startFakeDiscord();
  const bot = { id: fakeSnowflake(), token: `token-${fakeSnowflake()}`, username: 'tenure-bot' };
  fake.addBot(bot);
  const guildId = fakeSnowflake();
  fake.addGuild({ id: guildId });
  return { fake, bot, guildId, rest: new REST({ api: fake.url, version: '10', retries: 0 }).setToken(bot.token) };
}

const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(DiscordAPIError);
  return { status: (err as DiscordAPIError).status, code: (err as DiscordAPIError).code };
};

describe('the fake Discord’s applications and interactions', () => {
  it('GET /applications/@me: the bot’s application (its id) with a hex verify_key that checks the interactions it signs', async () => {
    const { fake, bot, guildId } = await setup();
    const app = (await new REST({ api: fake.url, version: '10' }).setToken(bot.token).get(Routes.currentApplication())) as RESTGetCurrentApplicationResult;
    expect(app.id).toBe(bot.id);
    expect(app.verify_key).toMatch(/^[0-9a-f]{64}$/);
    const signed = fake.signInteraction(bot.id, { type: 2, guild_id: guildId });
    const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(app.verify_key, 'hex')]), format: 'der', type: 'spki' });
    const message = Buffer.from(signed.headers['x-signature-timestamp']! + signed.payload);
    expect(verify(null, message, key, Buffer.from(signed.headers['x-signature-ed25519']!, 'hex'))).toBe(true);
    expect(JSON.parse(signed.payload)).toMatchObject({ application_id: bot.id, type: 2, id: expect.any(String), token: expect.any(String) });
  });

  it('the bulk overwrite replaces the guild’s commands, keeps ids by name, and refuses what Discord refuses', async () => {
    const { fake, bot, guildId, rest } = await setup();
    const route = Routes.applicationGuildCommands(bot.id, guildId);
    const first = (await rest.put(route, { body: [{ name: 'a', description: 'A', type: 1 }, { name: 'b', description: 'B', type: 1 }] })) as { id: string; name: string }[];
    const second = (await rest.put(route, { body: [{ name: 'b', description: 'B again', type: 1 }] })) as { id: string; name: string; guild_id: string }[];
    expect(second).toMatchObject([{ id: first[1]!.id, name: 'b', guild_id: guildId, application_id: bot.id }]);
    expect(fake.guildCommands(bot.id, guildId).map((c) => c.name)).toStrictEqual(['b']);
    expect(await refusal(rest.put(route, { body: [{ name: 'Bad Name', description: 'x', type: 1 }] }))).toStrictEqual({ status: 400, code: 50035 });
    expect(await refusal(rest.put(route, { body: [{ name: 'x', description: '', type: 1 }] }))).toStrictEqual({ status: 400, code: 50035 });
    expect(await refusal(rest.put(Routes.applicationGuildCommands(fakeSnowflake(), guildId), { body: [] }))).toStrictEqual({ status: 403, code: 50001 });
    fake.removeBotFromGuild(guildId, bot.id);
    expect(await refusal(rest.put(route, { body: [] }))).toStrictEqual({ status: 403, code: 50001 });
    expect(fake.guildCommands(bot.id, guildId).map((c) => c.name)).toStrictEqual(['b']);
  });

  it('the follow-up webhook edits the original answer with the interaction’s token only, and knows no other token', async () => {
    const { fake, bot, guildId } = await setup();
    const signed = fake.signInteraction(bot.id, { type: 3, guild_id: guildId });
    const noBot = new REST({ api: fake.url, version: '10', retries: 0 });
    const token = signed.interaction.token as string;
    await noBot.patch(Routes.webhookMessage(bot.id, token, '@original'), { body: { content: 'hi', flags: 64 }, auth: false });
    expect(fake.originalEdits).toMatchObject([{ applicationId: bot.id, token, body: { content: 'hi', flags: 64 } }]);
    expect(await refusal(noBot.patch(Routes.webhookMessage(bot.id, 'unknown-token', '@original'), { body: {}, auth: false }))).toStrictEqual({ status: 404, code: 10015 });
  });
});
