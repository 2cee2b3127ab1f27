import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { insertIntegration } from '../support/access-seed.js';
import { onPostgres, useHarness, userId } from '../support/harness.js';
import { paidMember } from '../support/portal.js';
import { webShop } from '../support/web.js';

const ADDRESS = { line1: 'Hauptstraße 1', line2: null, city: 'Berlin', postal_code: '10115', state: null, country: 'DE' };

/**
 * The statements of the member portal and of invoicing details (docs/portal.md), on PGlite and
 * PostgreSQL: the invoicing merge, the portal's reads, and a subscription's renewal flag set in
 * the order of Stripe's events.
 */
describe(`portal and invoicing statements (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();

  it('invoicing: the first change inserts, later ones set only the fields they name, two at once keep each other\'s fields', async () => {
    const t = await h.tenant();
    const store = h.container.stores.invoicing;
    const user = userId();
    expect(await store.find(t.projectId, user)).toBeNull();
    const first = await store.update(t.projectId, user, { name: 'Ada', address: ADDRESS }, new Date('2026-01-01T00:00:00.000Z'));
    expect(first).toStrictEqual({ name: 'Ada', company: null, address: ADDRESS, vat_id: null, updatedAt: new Date('2026-01-01T00:00:00.000Z') });
    await Promise.all([
      store.update(t.projectId, user, { company: 'Engines Ltd' }, new Date('2026-01-02T00:00:00.000Z')),
      store.update(t.projectId, user, { vat_id: 'DE123456789' }, new Date('2026-01-02T00:00:00.000Z')),
    ]);
    expect(await store.find(t.projectId, user)).toMatchObject({ name: 'Ada', company: 'Engines Ltd', vat_id: 'DE123456789', address: ADDRESS });
    await store.update(t.projectId, user, { address: null, name: null }, new Date('2026-01-03T00:00:00.000Z'));
    expect(await store.find(t.projectId, user)).toMatchObject({ name: null, company: 'Engines Ltd', address: null, vat_id: 'DE123456789' });
    // Another project's member of the same id has none; the project's deletion takes its rows.
    const other = await h.tenant();
    expect(await store.find(other.projectId, user)).toBeNull();
    await h.database.db.execute(sql`DELETE FROM projects WHERE id = ${t.projectId}`);
    expect(rowsOf(await h.database.db.execute(sql`SELECT 1 FROM member_invoicing WHERE user_id = ${user}`))).toStrictEqual([]);
  });

  it('a member\'s Stripe customer: remembered once per merchant account, the first kept when two race, found by billingCustomer before any payment', async () => {
    const m = await paidMember(h, { recurring: false });
    const store = h.container.stores.invoicing;
    const account = m.stripe.view.merchant_account_id;
    const user = userId();
    expect(await store.billingCustomer(m.t.projectId, user, account)).toBeNull();
    expect(await store.billingCustomer(m.t.projectId, user)).toBeNull();
    const now = new Date('2026-01-01T00:00:00.000Z');
    const winners = await Promise.all([store.rememberCustomer(m.t.projectId, user, account, 'cus_first', now), store.rememberCustomer(m.t.projectId, user, account, 'cus_second', now)]);
    expect(new Set(winners).size).toBe(1);
    const kept = winners[0]!;
    expect(await store.rememberCustomer(m.t.projectId, user, account, 'cus_third', now)).toBe(kept);
    expect(await store.billingCustomer(m.t.projectId, user, account)).toStrictEqual({ customerId: kept, merchantAccountId: account });
    expect(await store.billingCustomer(m.t.projectId, user)).toStrictEqual({ customerId: kept, merchantAccountId: account });
    // A customer belongs to one account: none on another.
    expect(await store.billingCustomer(m.t.projectId, user, randomUUID())).toBeNull();
    expect((await h.container.stores.portalLinks.pageOf(m.t.projectId, user, now, 20)).hasBillingCustomer).toBe(true);
    // A payment's customer comes first: it is the one Stripe bills.
    const paid = await store.billingCustomer(m.t.projectId, m.user);
    expect(paid).toMatchObject({ merchantAccountId: account });
    await store.rememberCustomer(m.t.projectId, m.user, account, 'cus_remembered', now);
    expect(await store.billingCustomer(m.t.projectId, m.user)).toStrictEqual(paid);
    expect(await store.billingCustomer(m.t.projectId, m.user, account)).toStrictEqual(paid);
    expect(await store.billingCustomer(m.t.projectId, m.user, randomUUID())).toBeNull();
    // The merchant account's deletion takes its customers.
    await h.database.db.execute(sql`DELETE FROM merchant_accounts WHERE id = ${account}`);
    expect(await store.billingCustomer(m.t.projectId, user, account)).toBeNull();
  });

  it("the portal's reads: memberships with their renewal flag, granted access with target names, a subscription's account", async () => {
    const m = await paidMember(h);
    const links = h.container.stores.portalLinks;
    const [membership] = await links.membershipsOf(m.t.projectId, m.user, new Date());
    expect(membership).toMatchObject({ planId: m.plan.plan_id, planName: 'Gold', status: 'active', subscriptionId: m.subscriptionId, subscriptionStatus: 'active', cancelAtPeriodEnd: false });
    // Read at an instant past the end date, it reads expired (the rule twin), whatever the sweeper did.
    const [later] = await links.membershipsOf(m.t.projectId, m.user, new Date(membership!.endDate.getTime() + 1000));
    expect(later!.status).toBe('expired');
    expect(await links.subscriptionAccount(m.t.projectId, m.subscriptionId!)).toBe(m.stripe.view.merchant_account_id);
    expect(await links.subscriptionAccount(m.t.projectId, 'sub_unknown')).toBeNull();

    await insertIntegration(h, m.t.projectId, { platform: 'telegram' });
    const chat = randomUUID();
    await h.database.db.execute(sql`INSERT INTO targets (id, project_id, name, platform, kind, external_id) VALUES (${chat}, ${m.t.projectId}, 'VIP chat', 'telegram', 'group', '-100777')`);
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${m.t.projectId}, ${chat}, ${m.user}, 'telegram', 'group', '-100777', 'kick', 'granted', 'waiting_for_member'),
             (${m.t.projectId}, ${randomUUID()}, ${m.user}, 'telegram', 'group', '-100778', 'kick', 'revoked', 'synced')`);
    expect(await links.accessOf(m.t.projectId, m.user)).toStrictEqual([{ targetId: chat, targetName: 'VIP chat', platform: 'telegram', kind: 'group', state: 'waiting_for_member', guildId: null }]);
  });

  it('a rejoin from the portal: its login keeps the member and guild, its token and join are saved together once, the job claims that one guild, a refusal names the member\'s targets there, the page reads the latest per guild', async () => {
    const shop = await webShop(h);
    const web = h.container.stores.web;
    const joins = h.container.stores.guildJoins;
    const user = userId();
    const [role] = rowsOf<{ id: string }>(await h.database.db.execute(sql`SELECT id FROM targets WHERE project_id = ${shop.t.projectId} AND kind = 'role'`));
    expect(await web.rejoinTarget(shop.t.projectId, user, role!.id)).toBeNull();
    await h.database.db.execute(sql`
      INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, state)
      VALUES (${shop.t.projectId}, ${role!.id}, ${user}, 'discord', 'role', ${shop.roleId}, 'remove_role', 'granted', 'waiting_for_member')`);
    expect(await web.rejoinTarget(shop.t.projectId, user, role!.id)).toMatchObject({ guildId: shop.guildId, application: { applicationId: shop.bot.id } });
    // Another member's row is not this member's to rejoin.
    expect(await web.rejoinTarget(shop.t.projectId, userId(), role!.id)).toBeNull();

    const now = new Date();
    await web.saveLogin({ stateHash: 'digest-1', projectId: shop.t.projectId, planId: null, rejoin: { userId: user, guildId: shop.guildId }, codeVerifierSealed: 'v', createdAt: now, expiresAt: new Date(now.getTime() + 600_000) });
    expect(await web.takeLogin('digest-1')).toMatchObject({ planId: null, rejoin: { userId: user, guildId: shop.guildId } });
    expect(await web.takeLogin('digest-1')).toBeNull();

    const token = { projectId: shop.t.projectId, userId: user, accessTokenSealed: 'sealed-a', refreshTokenSealed: null, expiresAt: new Date(now.getTime() + 3_600_000) };
    await Promise.all([web.saveRejoin({ ...token, guildId: shop.guildId, dedupeKey: 'rejoin:digest-1', now }), web.saveRejoin({ ...token, guildId: shop.guildId, dedupeKey: 'rejoin:digest-1', now })]);
    const rows = rowsOf<{ plan_id: string | null; guild_id: string; state: string }>(await h.database.db.execute(sql`SELECT plan_id, guild_id, state FROM guild_joins WHERE user_id = ${user}`));
    expect(rows).toStrictEqual([{ plan_id: null, guild_id: shop.guildId, state: 'pending' }]);
    expect(rowsOf(await h.database.db.execute(sql`SELECT 1 FROM discord_member_tokens WHERE user_id = ${user} AND access_token_sealed = 'sealed-a'`))).toHaveLength(1);

    const claimed = (await joins.claim(new Date(now.getTime() + 1000), new Date(now.getTime() + 60_000), 10)).filter((j) => j.userId === user);
    expect(claimed).toMatchObject([{ guildIds: [shop.guildId], accessTokenSealed: 'sealed-a' }]);
    await joins.failed(claimed[0]!, shop.guildId, { code: '30001', message: 'Maximum number of guilds reached' }, new Date());
    const failedEvents = rowsOf<{ data: { user_id: string; target_id: string } | string }>(
      await h.database.db.execute(sql`SELECT data FROM events WHERE project_id = ${shop.t.projectId} AND type = 'access.failed'`),
    ).map((e) => (typeof e.data === 'string' ? JSON.parse(e.data) : e.data) as { user_id: string; target_id: string });
    expect(failedEvents.filter((e) => e.user_id === user).map((e) => e.target_id)).toStrictEqual([role!.id]);
    const page = await h.container.stores.portalLinks.pageOf(shop.t.projectId, user, new Date(), 20);
    expect(page).toMatchObject({ discordJoin: true, joins: [{ guildId: shop.guildId, state: 'failed', lastError: '30001: Maximum number of guilds reached' }] });
    expect(page.access).toMatchObject([{ targetId: role!.id, guildId: shop.guildId, state: 'waiting_for_member' }]);
  });

  it('the renewal flag follows the newest event: an older one never overwrites it, a deletion leaves it', async () => {
    const m = await paidMember(h);
    const paid = h.container.stores.paidMemberships;
    const set = (cancelAtPeriodEnd: boolean | null, at: string, status = 'active') =>
      paid.setSubscriptionStatus({ projectId: m.t.projectId, subscriptionId: m.subscriptionId!, userId: null, status, cancelAtPeriodEnd, eventAt: new Date(at) }, new Date());
    const flag = async () => (await h.container.stores.portalLinks.membershipsOf(m.t.projectId, m.user, new Date()))[0]!.cancelAtPeriodEnd;
    expect(await set(true, '2030-01-01T00:00:10.000Z')).toHaveLength(1);
    expect(await flag()).toBe(true);
    // An event older than the one that set it changes nothing.
    expect(await set(false, '2030-01-01T00:00:05.000Z')).toStrictEqual([]);
    expect(await flag()).toBe(true);
    // A newer one without the flag (a deletion) keeps it.
    expect(await set(null, '2030-01-01T00:00:20.000Z', 'canceled')).toHaveLength(1);
    expect(await flag()).toBe(true);
    expect(await set(false, '2030-01-01T00:00:30.000Z')).toHaveLength(1);
    expect(await flag()).toBe(false);
  });
});
