import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { chatOfPayload, closeTelegramClient, createTelegramClient, grammySignal, Pace, TelegramClientClosedError } from './client.js';
import { grammy } from './api.js';

// grammY is loaded at first use (src/lazy-library.ts); these tests build its clients and errors directly.
beforeAll(() => grammy.load());

describe('Telegram pace: at most perSecond per bot and chatPerSecond per chat in any second', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Starts `n` calls at once; returns their start times (ms after the first moment) as they get slots. */
  async function startTimes(pace: Pace, chats: (string | null)[], advanceMs: number): Promise<number[]> {
    const t0 = Date.now();
    const times: number[] = [];
    for (const chat of chats) void pace.slot(chat).then(() => times.push(Date.now() - t0));
    await vi.advanceTimersByTimeAsync(advanceMs);
    return times;
  }

  it('lets a chat’s first chatPerSecond calls go at once and the next one a second after the first', async () => {
    const pace = new Pace({ perSecond: 25, chatPerSecond: 3 });
    expect(await startTimes(pace, ['-100', '-100', '-100', '-100', '-100', '-100', '-100'], 2_500)).toStrictEqual([0, 0, 0, 1000, 1000, 1000, 2000]);
  });

  it('paces each chat on its own, and the bot across chats', async () => {
    const pace = new Pace({ perSecond: 4, chatPerSecond: 2 });
    // Two chats of 3 calls each: 2 + 2 go at once (the bot's 4), the third of each a second later.
    expect(await startTimes(pace, ['-1', '-1', '-1', '-2', '-2', '-2'], 1_500)).toStrictEqual([0, 0, 0, 0, 1000, 1000]);
  });

  it('counts a sliding second: a call waits for the oldest start in its window to leave it', async () => {
    const pace = new Pace({ perSecond: 2, chatPerSecond: 2 });
    await pace.slot(null);
    await vi.advanceTimersByTimeAsync(600);
    await pace.slot(null);
    expect(pace.delay(null)).toBe(400);
    await vi.advanceTimersByTimeAsync(400);
    expect(pace.delay(null)).toBe(0);
    await pace.slot(null);
    expect(pace.delay(null)).toBe(600);
  });

  it('a call with no chat counts for the bot only', async () => {
    const pace = new Pace({ perSecond: 10, chatPerSecond: 1 });
    await pace.slot(null);
    await pace.slot(null);
    expect(pace.delay('-1')).toBe(0);
    await pace.slot('-1');
    expect(pace.delay('-1')).toBe(1000);
    expect(pace.delay('-2')).toBe(0);
  });

  it('a waiting call whose signal aborts gives up at once and takes no slot', async () => {
    const pace = new Pace({ perSecond: 10, chatPerSecond: 1 });
    await pace.slot('-1');
    const controller = new AbortController();
    const waiting = pace.slot('-1', controller.signal);
    const next = pace.slot('-1');
    controller.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    await vi.advanceTimersByTimeAsync(1000);
    await next;
    // The aborted call took nothing: the one behind it went first, and only it counts.
    expect(pace.delay('-1')).toBe(1000);
    await expect(pace.slot('-1', AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });

  it('close fails the waiting calls and every later one, and leaves no timer', async () => {
    const pace = new Pace({ perSecond: 1, chatPerSecond: 1 });
    await pace.slot('-1');
    const waiting = pace.slot('-1');
    pace.close();
    await expect(waiting).rejects.toBeInstanceOf(TelegramClientClosedError);
    await expect(pace.slot('-2')).rejects.toBeInstanceOf(TelegramClientClosedError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('forgets a chat once its window has passed', async () => {
    const pace = new Pace({ perSecond: 100, chatPerSecond: 1 });
    for (let i = 0; i < 50; i++) await pace.slot(`-${i}`);
    await vi.advanceTimersByTimeAsync(1000);
    for (let i = 0; i < 50; i++) expect(pace.delay(`-${i}`)).toBe(0);
    expect((pace as unknown as { starts: Map<string, number[]> }).starts.size).toBe(0);
  });
});

describe('the chat a call is made in', () => {
  it.each([
    [{ chat_id: -1001234567890, user_id: 5 }, '-1001234567890'],
    [{ chat_id: '@channel' }, '@channel'],
    [{ offset: 3, timeout: 25 }, null],
    [undefined, null],
  ])('%j → %s', (payload, chat) => {
    expect(chatOfPayload(payload)).toBe(chat);
  });
});

describe('createTelegramClient: the pace on the bot\'s grammY Api', () => {
  const TOKEN = '7204583149:AAHtGnkEL-JKR3v_qM8XbFpYzW2dLsNcUo0';
  const arrivals: { method: string; at: number }[] = [];
  let server: Server;
  let root: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      arrivals.push({ method: (req.url ?? '').split('/').pop() ?? '', at: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"result":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    arrivals.length = 0;
  });

  it('spaces calls in one chat, lets getUpdates through, and fails a waiting call once closed', async () => {
    const client = createTelegramClient(TOKEN, root, { perSecond: 25, chatPerSecond: 2 });
    const t0 = Date.now();
    const calls = [1, 2, 3].map((user) => client.unbanChatMember(-1001, user, { only_if_banned: true }));
    await Promise.all(calls.slice(0, 2));
    // The third waits for the chat's next second; getUpdates is not paced and goes before it.
    await client.getUpdates({ timeout: 0 });
    await calls[2];
    expect(arrivals.map((a) => a.method)).toStrictEqual(['unbanChatMember', 'unbanChatMember', 'getUpdates', 'unbanChatMember']);
    expect(arrivals[2]!.at - t0).toBeLessThan(500);
    expect(arrivals[3]!.at - t0).toBeGreaterThanOrEqual(990);

    // The chat's second is full again with these two: the second one waits, and fails once closed.
    const [sent, waiting] = [client.unbanChatMember(-1001, 4), client.unbanChatMember(-1001, 5)];
    closeTelegramClient(client);
    await expect(waiting).rejects.toBeInstanceOf(TelegramClientClosedError);
    await sent;
    expect(arrivals).toHaveLength(5);
  });

  it('a call aborted while it waits is never sent', async () => {
    const client = createTelegramClient(TOKEN, root, { perSecond: 1, chatPerSecond: 1 });
    await client.unbanChatMember(-1002, 1);
    const controller = new AbortController();
    const waiting = client.unbanChatMember(-1002, 2, undefined, grammySignal(controller.signal));
    controller.abort();
    await expect(waiting).rejects.toThrow();
    closeTelegramClient(client);
    expect(arrivals).toHaveLength(1);
  });
});
