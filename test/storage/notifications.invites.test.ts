import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import type { ClaimedConfirmation } from '../../src/domain/front-desk/confirmations.js';
import { NotificationsStore } from '../../src/store/notifications.store.js';
import { TelegramInvitesStore } from '../../src/store/telegram-invites.store.js';
import { createMembership } from '../support/api.js';
import { createPlan, createTarget, grant } from '../support/catalogue.js';
import { onPostgres, useHarness, type Tenant } from '../support/harness.js';
import { turnOffMessages } from '../support/front-desk.js';

/**
 * Telegram invite links reach a paid member once (src/store/notifications.store.ts,
 * telegram-invites.store.ts) on both storages: recording a link queues its message, a pending
 * confirmation carries it and drops that message, a link made later goes alone, and two claimers
 * never hand one link out twice.
 */

const T0 = new Date('2030-01-01T00:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const WAIT = 60_000;
/** The claimer's access worker holds the project's bot (claims take only the rows of bots held). */
const OWNER = 'this-worker';
const OWNERS = [OWNER];
const LEASED_UNTIL = '2100-01-01T00:00:00.000Z';
const CHAT = '-1001234567890';

describe(`Telegram invite links in the notifications (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();
  const store = () => new NotificationsStore(h.database.db);
  const invites = () => new TelegramInvitesStore(h.database.db);
  beforeEach(async () => {
    await h.database.db.execute(sql`DELETE FROM notifications`);
  });

  async function telegramShop() {
    const t = await h.tenant();
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, lease_owner, lease_expires_at)
      VALUES (${t.projectId}, 'telegram', 'v1.dummy.sealed', ${String(Date.now()) + String(Math.floor(Math.random() * 1000))}, 'bot', ${OWNER}, ${LEASED_UNTIL}::timestamptz)`);
    // Members made through the API here stand for paid ones: no welcome, the messages are the store's own.
    await turnOffMessages(t, 'welcome');
    const target = await createTarget(t, { platform: 'telegram', kind: 'group', external_id: CHAT, target_name: 'VIP lounge' });
    const plan = await createPlan(t, { plan_name: 'Gold' });
    await grant(t, plan.plan_id, target.target_id);
    return { t, target, plan };
  }

  /** A member with a membership of the plan, paid (a succeeded payment) or not, whose access there is settled. */
  async function member(s: Awaited<ReturnType<typeof telegramShop>>, o: { paid: boolean; key?: string }) {
    const m = await createMembership(s.t, { planId: s.plan.plan_id });
    if (o.paid) {
      const key = o.key ?? `pi_${m.user_id}`;
      await h.database.db.execute(sql`
        INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status)
        VALUES (${s.t.projectId}, 'stripe', ${key}, ${m.user_id}, ${s.plan.plan_id}, 999, 'usd', 'succeeded')`);
    }
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${s.t.projectId}, ${s.target.target_id}, ${m.user_id}, 'telegram', 'group', ${CHAT}, 'kick', 'granted', 'waiting_for_member')`);
    return m;
  }

  const link = (s: { t: Tenant; target: { target_id: string } }, m: { user_id: string; membership_id: string } | { user_id: string; membership_id: null }, n: number) =>
    invites().record({
      projectId: s.t.projectId,
      targetId: s.target.target_id,
      userId: m.user_id,
      membershipId: m.membership_id,
      chatId: CHAT,
      botId: '1',
      inviteLink: `https://t.me/+link${m.user_id}x${n}`,
      name: 'm',
      createsJoinRequest: false,
      expiresAt: later(86_400_000),
      createdAt: T0,
    });

  const confirm = (s: { t: Tenant; plan: { plan_id: string } }, m: { user_id: string }, key: string) =>
    store().queueConfirmation({ projectId: s.t.projectId, userId: m.user_id, planId: s.plan.plan_id, paymentKey: key }, T0);

  const rows = async (projectId: string) =>
    rowsOf<{ kind: string; state: string; last_error: string | null }>(
      await h.database.db.execute(sql`SELECT kind, state, last_error FROM notifications WHERE project_id = ${projectId} ORDER BY kind, created_at`),
    );

  it('recording a link queues one message for a paid member, none for a member who did not pay or a link of no membership', async () => {
    const s = await telegramShop();
    const paid = await member(s, { paid: true });
    const unpaid = await member(s, { paid: false });
    await link(s, paid, 1);
    await link(s, unpaid, 1);
    await link(s, { user_id: unpaid.user_id, membership_id: null }, 2);
    const queued = rowsOf<{ user_id: string; kind: string; platform: string; dedupe_key: string }>(
      await h.database.db.execute(sql`SELECT user_id, kind, platform, dedupe_key FROM notifications WHERE project_id = ${s.t.projectId}`),
    );
    expect(queued).toMatchObject([{ user_id: paid.user_id, kind: 'invite', platform: 'telegram', dedupe_key: expect.stringMatching(/^invite:[0-9a-f-]{36}$/) }]);
  });

  it('a pending confirmation carries the link and drops its message once sent; the invite waits for it meanwhile', async () => {
    const s = await telegramShop();
    const m = await member(s, { paid: true });
    expect(await confirm(s, m, 'pi_1')).toBe(true);
    const made = await link(s, m, 1);
    const [c, ...rest] = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(rest).toStrictEqual([]);
    expect(c).toMatchObject({ kind: 'confirmation', invites: [made.inviteLink], carried: [expect.any(String)] });
    // Leased, not yet sent: the invite row still waits for the confirmation.
    expect(await store().claim(OWNERS, later(1), later(WAIT), 10, WAIT)).toStrictEqual([]);
    await store().sent(c!.id, later(1), c!.carried);
    expect(await rows(s.t.projectId)).toStrictEqual([
      { kind: 'confirmation', state: 'sent', last_error: null },
      { kind: 'invite', state: 'dropped', last_error: 'carried by the confirmation' },
    ]);
    expect(await store().claim(OWNERS, later(2 * WAIT), later(3 * WAIT), 10, WAIT)).toStrictEqual([]);
  });

  it('a link made after the confirmation went is a message of its own; once used, it is dropped instead', async () => {
    const s = await telegramShop();
    const m = await member(s, { paid: true });
    await confirm(s, m, 'pi_1');
    const [c] = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(c).toMatchObject({ invites: [], carried: [] });
    await store().sent(c!.id, T0, c!.carried);

    const first = await link(s, m, 1);
    const [alone] = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(alone).toMatchObject({ kind: 'invite', userId: m.user_id, active: true, invite: { link: first.inviteLink, chatName: 'VIP lounge', expiresAt: later(86_400_000), joinRequest: false } });
    await store().sent(alone!.id, T0, alone!.carried);

    // A renewal's confirmation does not carry a link its own message already sent.
    await confirm(s, m, 'pi_2');
    const [renewal] = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(renewal).toMatchObject({ kind: 'confirmation', invites: [], carried: [] });
    await store().sent(renewal!.id, T0, renewal!.carried);

    const second = await link(s, m, 2);
    await invites().markUsed(second.id, m.user_id, T0);
    const [used] = await store().claim(OWNERS, later(WAIT), later(2 * WAIT), 10, WAIT);
    expect(used).toMatchObject({ kind: 'invite', invite: null });
  });

  it('a link whose own message was tried already is left to it by a later confirmation', async () => {
    const s = await telegramShop();
    const m = await member(s, { paid: true });
    await link(s, m, 1);
    const [tried] = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    await store().retry(tried!.id, later(5_000), '502: Bad Gateway');
    await confirm(s, m, 'pi_1');
    const [c] = await store().claim(OWNERS, later(1), later(WAIT), 10, WAIT);
    expect(c).toMatchObject({ kind: 'confirmation', invites: [], carried: [] });
    await store().sent(c!.id, later(1), c!.carried);
    expect(await store().claim(OWNERS, later(5_000), later(WAIT), 10, WAIT)).toMatchObject([{ kind: 'invite', attempt: 2 }]);
  });

  it('a Discord confirmation neither carries a Telegram link nor holds its message back', async () => {
    const s = await telegramShop();
    await h.database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name, lease_owner, lease_expires_at)
      VALUES (${s.t.projectId}, 'discord', 'v1.dummy.sealed', ${String(Date.now()) + '7'}, 'bot', ${OWNER}, ${LEASED_UNTIL}::timestamptz)`);
    const guild = await createTarget(s.t, { platform: 'discord', kind: 'guild' });
    const discordPlan = await createPlan(s.t);
    await grant(s.t, discordPlan.plan_id, guild.target_id);
    const m = await member(s, { paid: true });
    // The member's membership moves to a Discord plan: its confirmation goes by DM.
    await h.database.db.execute(sql`UPDATE memberships SET plan_id = ${discordPlan.plan_id} WHERE id = ${m.membership_id}`);
    expect(await confirm({ t: s.t, plan: discordPlan }, m, 'pi_discord')).toBe(true);
    const made = await link(s, m, 1);
    const claimed = await store().claim(OWNERS, T0, later(WAIT), 10, WAIT);
    expect(claimed.map((c) => [c.kind, c.platform])).toStrictEqual([
      ['confirmation', 'discord'],
      ['invite', 'telegram'],
    ]);
    expect(claimed[0]).toMatchObject({ invites: [], carried: [] });
    expect(claimed[1]!.invite?.link).toBe(made.inviteLink);
  });

  it('two claimers racing payments and links hand each link out once', async () => {
    const s = await telegramShop();
    const members = [];
    for (let i = 0; i < 8; i++) members.push(await member(s, { paid: true }));
    // Half the links are made before the payment's confirmation is queued, half after: every order at once.
    const made = new Map<string, string>();
    for (const [i, m] of members.entries()) if (i % 2 === 0) made.set(m.user_id, (await link(s, m, 1)).inviteLink);
    const handedOut: string[] = [];
    const take = (claimed: ClaimedConfirmation[]) => {
      for (const c of claimed) handedOut.push(...(c.kind === 'invite' ? (c.invite ? [c.invite.link] : []) : c.invites));
      return Promise.all(claimed.map((c) => store().sent(c.id, T0, c.carried)));
    };
    const claimer = async () => {
      for (let round = 0; round < 6; round++) await take(await store().claim(OWNERS, T0, later(WAIT), 3, WAIT));
    };
    await Promise.all([
      claimer(),
      claimer(),
      (async () => {
        for (const [i, m] of members.entries()) {
          await confirm(s, m, `pi_${i}`);
          if (i % 2 === 1) made.set(m.user_id, (await link(s, m, 1)).inviteLink);
        }
      })(),
    ]);
    await claimer();
    expect(handedOut.sort()).toStrictEqual([...made.values()].sort());
    const pending = await h.database.db.execute(sql`SELECT id FROM notifications WHERE project_id = ${s.t.projectId} AND state = 'pending'`);
    expect(rowsOf(pending)).toStrictEqual([]);
  });
});
