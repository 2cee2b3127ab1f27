import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Container } from '../../src/container.js';
import type { InviteView } from '../../src/domain/events.js';
import { rowsOf, type Database } from '../../src/database/db.js';
import type { AccessProcesses } from './access-processes.js';
import { addTelegramBot, connectTelegramBot, type TestBot } from './bots.js';
import { createPlan, createTarget, grant } from './catalogue.js';
import type { FakeInviteLink, FakeTelegram } from './fake-telegram.js';
import type { Tenant } from './harness.js';

/**
 * Telegram on the access workers as real processes (access-processes.ts), for the crash test
 * (test/storage/telegram-crash.test.ts, both storages): a project whose bot, connected through the
 * API, is an admin with both rights in a few supergroups of the fake Bot API (one target and plan
 * each, members spread over them); the API on the suite's storage, opened in this process; and
 * what tenure recorded (links, events, access rows), read from that storage.
 */

export interface TelegramChat {
  chatId: number;
  targetId: string;
  /** The members' user ids (their Telegram ids as text). */
  members: string[];
}

export interface TelegramWorld {
  projectId: string;
  /** A full API key of the project (and its id): the API opened again later uses it. */
  key: string;
  keyId: string;
  bot: TestBot;
  chats: TelegramChat[];
  /** Each member's membership id, by user id. */
  memberships: Map<string, string>;
  /** What was recorded once the bot was connected (the burst's rows, before any worker ran). */
  connected: Recorded;
}

/** A link tenure recorded (telegram_invites), as the test compares it with the fake's. */
export interface RecordedInvite {
  user_id: string;
  target_id: string;
  membership_id: string;
  chat_id: string;
  bot_id: string;
  invite_link: string;
  current: boolean;
  revoked: boolean;
}

export interface AccessRowState {
  user_id: string;
  target_id: string;
  desired: string;
  state: string;
  error_code: string | null;
}

/** Injected requests all come from one address and key: the limits are raised, as in the harness. */
const UNLIMITED = { TENURE_RATE_LIMIT_KEY: '1000000000', TENURE_RATE_LIMIT_IP: '1000000000', TENURE_RATE_LIMIT_BURST: '1000000000' };

export function telegramProcesses(p: AccessProcesses, fake: FakeTelegram) {
  /**
   * The app on the suite's storage, in this process (embedded: only while no worker runs), and a
   * tenant of `projectId` with `key`; or, with no project yet, of a new project and key.
   */
  async function withApi<T>(project: Pick<Tenant, 'projectId' | 'key' | 'keyId'> | null, work: (t: Tenant, c: Container) => Promise<T>): Promise<T> {
    return p.withContainer({ TENURE_TELEGRAM_API_URL: fake.url, ...UNLIMITED }, async (c) => {
      let own = project;
      if (!own) {
        const created = await c.services.projects.createProject('telegram crash');
        if (!created.ok) throw created.error;
        const key = await c.services.projects.createKey(created.value.id, 'crash test', 'test');
        if (!key.ok) throw key.error;
        own = { projectId: created.value.id, key: key.value.key, keyId: key.value.metadata.id };
      }
      const app = await buildApp(c);
      await app.ready();
      try {
        const headers = { authorization: `Bearer ${own.key}` };
        return await work({
          projectId: own.projectId,
          key: own.key,
          keyId: own.keyId,
          headers,
          base: `/v2/projects/${own.projectId}`,
          request: (o) => app.inject({ ...o, headers: { ...headers, ...o.headers } }),
        }, c);
      } finally {
        await app.close();
      }
    });
  }

  /**
   * `n` members spread over `chatCount` supergroups, each chat a target of its own plan, the
   * members' memberships active, created in one statement per plan, then the bot connected
   * through the API (its token checked with the fake): connecting plans the project, so `n` grants
   * are pending when this returns (`connected`), none of the members in their chat yet.
   */
  async function world(n: number, chatCount: number): Promise<TelegramWorld> {
    const bot = addTelegramBot(fake, 'tenure_crash_bot');
    const chats: TelegramChat[] = [];
    const members = Array.from({ length: n }, () => String(fake.addUser().id));
    const { projectId, key, keyId, rows, connected } = await withApi(null, async (t, c) => {
      for (let i = 0; i < chatCount; i++) {
        const chatId = fake.addChat({ type: 'supergroup' }).id;
        fake.setBot(chatId, Number(bot.id), 'admin');
        const target = await createTarget(t, { target_name: `Paid group ${i + 1}`, platform: 'telegram', kind: 'group', external_id: String(chatId) });
        const plan = await createPlan(t, { plan_name: `Plan ${i + 1}` });
        await grant(t, plan.plan_id, target.target_id);
        chats.push({ chatId, targetId: target.target_id, members: members.filter((_, m) => m % chatCount === i) });
        await c.database.db.execute(sql`
          INSERT INTO memberships (project_id, user_id, plan_id, end_date)
          SELECT ${t.projectId}, u, ${plan.plan_id}, now() + interval '30 days' FROM unnest(${sql.param(chats[i]!.members)}::text[]) AS u`);
      }
      await connectTelegramBot(t, bot);
      const made = rowsOf<{ id: string; user_id: string }>(await c.database.db.execute(sql`SELECT id, user_id FROM memberships WHERE project_id = ${t.projectId}`));
      return { projectId: t.projectId, key: t.key, keyId: t.keyId, rows: made, connected: await recordedIn(c.database, t.projectId) };
    });
    return { projectId, key, keyId, bot, chats, memberships: new Map(rows.map((r) => [r.user_id, r.id])), connected };
  }

  /** What tenure recorded for the project (embedded: only while no worker runs). */
  const recorded = (projectId: string): Promise<Recorded> => p.withDatabase((database) => recordedIn(database, projectId));

  return { withApi, world, recorded };
}

/** The project's access rows, the links recorded for it (telegram_invites) and those its `access.invite-created` events announce. */
export interface Recorded {
  rows: AccessRowState[];
  invites: RecordedInvite[];
  announced: string[];
}

export async function recordedIn(database: Pick<Database, 'db'>, projectId: string): Promise<Recorded> {
  const { db } = database;
  const rows = rowsOf<AccessRowState>(
    await db.execute(sql`SELECT user_id, target_id::text, desired, state, last_error->>'code' AS error_code FROM access WHERE project_id = ${projectId}`),
  );
  const invites = rowsOf<RecordedInvite>(
    await db.execute(sql`
      SELECT user_id, target_id::text, membership_id::text, chat_id, bot_id, invite_link,
             (revoked_at IS NULL AND used_at IS NULL AND expires_at > now()) AS current, revoked_at IS NOT NULL AS revoked
      FROM telegram_invites WHERE project_id = ${projectId}`),
  );
  const announced = rowsOf<{ link: string }>(
    await db.execute(sql`SELECT data->'invite'->>'invite_link' AS link FROM events WHERE project_id = ${projectId} AND type = 'access.invite-created'`),
  ).map((r) => r.link);
  return { rows, invites, announced };
}

/** `GET …/memberships/{id}/invites` of every member: what the owner's backend would hand over, by user id. */
export async function handedOut(t: Tenant, w: TelegramWorld): Promise<Map<string, InviteView[]>> {
  const out = new Map<string, InviteView[]>();
  for (const [userId, membershipId] of w.memberships) {
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships/${membershipId}/invites` });
    expect(res.statusCode, res.body).toBe(200);
    out.set(userId, res.json().data);
  }
  return out;
}

/** Every link the fake holds in the world's chats (copies). */
export const fakeLinks = (fake: FakeTelegram, w: TelegramWorld): FakeInviteLink[] => w.chats.flatMap((c) => fake.links(c.chatId));

/** The member a link was made for: tenure names it `m:<membership> u:<user id>`. */
export const userOfLink = (link: Pick<FakeInviteLink, 'name'>): string | null => /\bu:(\d+)$/.exec(link.name ?? '')?.[1] ?? null;
