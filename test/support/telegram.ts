import { afterEach, beforeEach, expect } from 'vitest';
import type { AccessWorker } from '../../src/access/access.worker.js';
import type { TelegramClient } from '../../src/access/telegram/client.js';
import type { InviteView } from '../../src/domain/events.js';
import type { MembershipView } from '../../src/domain/memberships/membership.view.js';
import type { PlanView } from '../../src/domain/plans/plan.view.js';
import type { TargetView } from '../../src/domain/targets/target.view.js';
import { createTelegramAccessWorker } from '../../src/platform-jobs.js';
import { accessRows, type AccessRow } from './access-seed.js';
import { createMembership, eventRows } from './api.js';
import { addTelegramBot, connectTelegramBot, type TestBot } from './bots.js';
import { createPlan, createTarget, grant } from './catalogue.js';
import type { FakeCall, FakeTelegram } from './fake-telegram.js';
import type { Harness, Tenant } from './harness.js';

/**
 * Telegram access through the real app, for test/access/telegram-*.test.ts: a project whose bot is
 * connected through the API and is an admin of a chat its plan grants, members on that plan (users
 * of the harness's fake Telegram), and the Telegram access worker wired as the worker runtime
 * wires it, driven with `drain()`.
 */

export interface TelegramProject {
  t: Tenant;
  bot: TestBot;
  /** The chat's id on the fake. */
  chatId: number;
  target: TargetView;
  plan: PlanView;
}

export interface TelegramProjectOptions {
  kind?: 'group' | 'channel';
  onExpiry?: 'kick' | 'none';
  /** The bot's place in the chat (default an admin with both rights). */
  bot?: 'admin' | 'member' | 'none' | 'kicked';
  rights?: { can_invite_users?: boolean; can_restrict_members?: boolean };
}

/** A project whose connected Telegram bot manages one chat, granted by one plan. */
export async function telegramProject(h: Harness, o: TelegramProjectOptions = {}): Promise<TelegramProject> {
  const t = await h.tenant();
  const bot = addTelegramBot(h.telegram);
  const chatId = h.telegram.addChat({ type: o.kind === 'channel' ? 'channel' : 'supergroup' }).id;
  // An admin first: a bot only hears of changes in chats it administers, and the test then sets its place.
  h.telegram.setBot(chatId, Number(bot.id), 'admin', o.rights);
  if (o.bot && o.bot !== 'admin') h.telegram.setBot(chatId, Number(bot.id), o.bot);
  await connectTelegramBot(t, bot);
  const target = await createTarget(t, {
    target_name: 'Paid group',
    platform: 'telegram',
    kind: o.kind ?? 'group',
    external_id: String(chatId),
    ...(o.onExpiry ? { on_expiry: o.onExpiry } : {}),
  });
  const plan = await createPlan(t);
  await grant(t, plan.plan_id, target.target_id);
  return { t, bot, chatId, target, plan };
}

export interface TelegramMember {
  /** The member's Telegram user id (their tenure user_id as text). */
  id: number;
  userId: string;
  membership: MembershipView;
}

/** A user of the fake Telegram with an active membership on the project's plan, planned as the planner would. */
export async function telegramMember(h: Harness, p: TelegramProject, o: { place?: 'in' | 'banned' } = {}): Promise<TelegramMember> {
  const { id } = h.telegram.addUser();
  if (o.place) h.telegram.addMember(p.chatId, id);
  // Banned by a human admin of the chat (not by the project).
  if (o.place === 'banned') h.telegram.banByAdmin(p.chatId, id);
  const membership = await createMembership(p.t, { userId: String(id), planId: p.plan.plan_id });
  await h.container.stores.accessPlan.planProject(p.t.projectId);
  return { id, userId: String(id), membership };
}

/** The Telegram access worker as the worker runtime builds it (a retry's jitter in the middle: exactly 1 s after the first failure). */
export function telegramWorker(h: Harness): AccessWorker<TelegramClient> {
  const worker = createTelegramAccessWorker(h.container, { random: () => 0.5, pollMs: 200 });
  if (!worker) throw new Error('no secret box: the Telegram worker cannot open tokens');
  return worker;
}

/**
 * A file's Telegram workers: `worker()` makes one (one per test: the first holds the bots), each
 * stopped after its test; every test gets the database to itself (a worker holds every connected bot).
 */
export function useTelegramWorkers(h: Harness): () => AccessWorker<TelegramClient> {
  const workers: AccessWorker<TelegramClient>[] = [];
  beforeEach(() => h.reset());
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  });
  return () => {
    const w = telegramWorker(h);
    workers.push(w);
    return w;
  };
}

/** The fake's calls from now on, of `bot`: `since()` gives those made after this call. */
export function callsFrom(telegram: FakeTelegram, bot: TestBot): { since(): FakeCall[] } {
  const from = telegram.calls.length;
  return { since: () => telegram.calls.slice(from).filter((c) => c.botId === Number(bot.id)) };
}

/** `GET …/memberships/{id}/invites`, expecting 200; its data. */
export async function listInvites(t: Tenant, membershipId: string): Promise<InviteView[]> {
  const res = await t.request({ method: 'GET', url: `${t.base}/memberships/${membershipId}/invites` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** The member's access row on the project's chat target. */
export async function rowOf(h: Harness, p: TelegramProject, m: TelegramMember): Promise<AccessRow> {
  const row = (await accessRows(h, p.t.projectId)).find((r) => r.target_id === p.target.target_id && r.user_id === m.userId);
  expect(row, `no access row for ${m.userId}`).toBeDefined();
  return row!;
}

/** The project's events of one type, their data. */
export async function eventsOf(h: Harness, projectId: string, type: string): Promise<Record<string, unknown>[]> {
  return (await eventRows(h, projectId)).filter((e) => e.type === type).map((e) => e.data);
}

