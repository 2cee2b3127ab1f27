import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeDiscord, fakeSnowflake, type FakeDiscord } from '../support/fake-discord.js';

/**
 * The fake Discord's gateway against Discord's documentation (Topics: Gateway, Gateway Events;
 * Opcodes and Status Codes), with a bare WebSocket client, so the oracle of the gateway tests is
 * checked on its own: Get Gateway Bot, Hello and heartbeats, Identify and its refusals, READY and
 * GUILD_CREATE, member events with sequence numbers, Resume and Invalid Session.
 */

let fake: FakeDiscord;
beforeAll(async () => {
  fake = await startFakeDiscord();
});
afterAll(async () => {
  await fake.close();
});

interface Payload {
  op: number;
  d: Record<string, unknown> | null | boolean;
  s: number | null;
  t: string | null;
}

/** A client connection: every payload received, and how it closed. */
async function connect(query = '?v=10&encoding=json', url?: string) {
  const info = (await (await fetch(`${fake.url}/v10/gateway/bot`, { headers: { authorization: `Bot ${bot.token}` } })).json()) as { url: string };
  const socket = new WebSocket(`${url ?? info.url}${query}`);
  const received: Payload[] = [];
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('message', (data) => received.push(JSON.parse(data.toString()) as Payload));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const next = async (what: (p: Payload) => boolean) => {
    for (let i = 0; i < 400; i++) {
      const found = received.find(what);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no such payload; got ${JSON.stringify(received)}`);
  };
  const send = (p: unknown) => socket.send(JSON.stringify(p));
  return { socket, received, closed, next, send };
}

const bot = { id: fakeSnowflake(), token: `gw.${Math.random().toString(36).slice(2)}`, username: 'gw-bot' };
const identify = (intents: number, token = bot.token) => ({ op: 2, d: { token, intents, properties: { os: 'linux', browser: 'test', device: 'test' } } });
const GUILDS = 1 << 0;
const GUILD_MEMBERS = 1 << 1;

describe('the fake Discord gateway', () => {
  it('Get Gateway Bot wants the bot token and says where to connect', async () => {
    fake.addBot(bot);
    expect((await fetch(`${fake.url}/v10/gateway/bot`)).status).toBe(401);
    const res = await fetch(`${fake.url}/v10/gateway/bot`, { headers: { authorization: `Bot ${bot.token}` } });
    const body = (await res.json()) as { url: string; shards: number; session_start_limit: Record<string, number> };
    expect(body.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+/);
    expect(body.shards).toBe(1);
    expect(Object.keys(body.session_start_limit).sort()).toEqual(['max_concurrency', 'remaining', 'reset_after', 'total']);
  });

  it('Hello, a heartbeat acknowledged, READY, a GUILD_CREATE per guild, member events in sequence', async () => {
    const guildId = fakeSnowflake();
    fake.addGuild({ id: guildId });
    const c = await connect();
    const hello = await c.next((p) => p.op === 10);
    expect((hello.d as { heartbeat_interval: number }).heartbeat_interval).toBeGreaterThan(0);
    c.send({ op: 1, d: null });
    await c.next((p) => p.op === 11);
    c.send(identify(GUILDS | GUILD_MEMBERS));
    const ready = await c.next((p) => p.t === 'READY');
    const d = ready.d as { session_id: string; resume_gateway_url: string; user: { id: string }; guilds: { id: string; unavailable: boolean }[] };
    expect([ready.op, ready.s, d.user.id]).toEqual([0, 1, bot.id]);
    expect(d.guilds).toContainEqual({ id: guildId, unavailable: true });
    expect(d.resume_gateway_url).toMatch(/^ws:\/\//);
    const created = await c.next((p) => p.t === 'GUILD_CREATE' && (p.d as { id: string }).id === guildId);
    expect(created.d).toMatchObject({ id: guildId, unavailable: false, large: false });

    const member = fakeSnowflake();
    fake.addMember(guildId, member);
    const add = await c.next((p) => p.t === 'GUILD_MEMBER_ADD');
    expect(add.d).toMatchObject({ guild_id: guildId, user: { id: member }, roles: [] });
    fake.removeMember(guildId, member);
    const remove = await c.next((p) => p.t === 'GUILD_MEMBER_REMOVE');
    expect(remove.d).toMatchObject({ guild_id: guildId, user: { id: member } });
    expect(remove.s).toBe(add.s! + 1);
    expect(fake.gateway.openConnections(bot.id)).toBe(1);

    // Resume after a drop: what was sent since `seq` again, then RESUMED.
    c.socket.terminate();
    fake.addMember(guildId, member);
    const r = await connect('?v=10&encoding=json', d.resume_gateway_url);
    r.send({ op: 6, d: { token: bot.token, session_id: d.session_id, seq: remove.s } });
    const replayed = await r.next((p) => p.t === 'GUILD_MEMBER_ADD');
    expect(replayed.s).toBe(remove.s! + 1);
    await r.next((p) => p.t === 'RESUMED');
    r.socket.close(1000);
    // A session nobody knows: Invalid Session, not resumable.
    const x = await connect();
    x.send({ op: 6, d: { token: bot.token, session_id: 'nope', seq: 1 } });
    expect((await x.next((p) => p.op === 9)).d).toBe(false);
    x.socket.close(1000);
  });

  it('refuses with Discord’s close codes', async () => {
    const cases: [string, (c: Awaited<ReturnType<typeof connect>>) => void, number][] = [
      ['an unknown token', (c) => c.send(identify(GUILDS, 'not-a-token')), 4004],
      ['intent bits Discord does not define', (c) => c.send(identify(1 << 30)), 4013],
      ['a privileged intent not enabled (presences)', (c) => c.send(identify(GUILDS | (1 << 8))), 4014],
      ['a payload before identifying', (c) => c.send({ op: 3, d: {} }), 4003],
      ['an unknown opcode', (c) => c.send({ op: 42, d: null }), 4001],
      ['a payload that is not JSON', (c) => c.socket.send('{nope'), 4002],
    ];
    for (const [what, act, code] of cases) {
      const c = await connect();
      await c.next((p) => p.op === 10);
      act(c);
      expect(await c.closed, what).toBe(code);
    }
    fake.setGuildMembersIntent(bot.id, false);
    const c = await connect();
    c.send(identify(GUILDS | GUILD_MEMBERS));
    expect(await c.closed).toBe(4014);
    fake.setGuildMembersIntent(bot.id, true);
    const v9 = await connect('?v=9&encoding=json');
    expect(await v9.closed).toBe(4012);
    expect(fake.gateway.log.filter((e) => e.closedWith === 4004).map((e) => e.botId)).toEqual([null]);
  });
});
