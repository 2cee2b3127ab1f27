import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import type { Result } from '../../src/domain/errors.js';
import { actorOf, seedMembers } from '../support/dashboard-members.js';
import { eventRows, membershipRow } from '../support/api.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { paidMember } from '../support/portal.js';

/**
 * A member's page and its actions on both storages (docs/dashboard-members.md): each action runs
 * through the API's own service (its event written as the API writes it), is recorded in the audit
 * log, and without its permission changes nothing and records nothing.
 */
describe('dashboard member page and actions', () => {
  const h = useHarness();

  const audit = async (t: Tenant) =>
    rowsOf<{ action: string; subject: string; details: Record<string, unknown>; actor_user_id: string | null }>(
      await h.database.db.execute(sql`SELECT action, subject, details, actor_user_id FROM dashboard_audit WHERE project_id = ${t.projectId} ORDER BY id`),
    ).map((r) => ({ ...r, details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details }));
  const value = <T>(r: Result<T>): T => {
    if (!r.ok) throw new Error(`${r.error.status} ${r.error.message}`);
    return r.value;
  };
  const refusal = <T>(r: Result<T>) => (r.ok ? 'done' : `${r.error.status} ${r.error.message}`);
  const actions = () => h.services.dashboardMemberActions;

  it("a member's page: memberships, access rows with their last error, messages, ban, unreachable", async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    await h.database.db.execute(sql`INSERT INTO notifications (project_id, user_id, membership_id, kind, dedupe_key, platform, state, last_error)
      VALUES (${t.projectId}, ${s.m.failed.userId}, ${s.m.failed.membershipId}, 'reminder', 'r1', 'discord', 'unreachable', '50007: Cannot send messages to this user')`);
    const page = value(await h.services.dashboardMembers.member(actorOf(t, ['memberships:read']), s.m.failed.userId));
    expect(page.memberships.map((m) => m.membership_id)).toStrictEqual([s.m.failed.membershipId]);
    expect(page.status).toBe('active');
    expect(page.access).toMatchObject([{ targetName: 'VIP role', state: 'failed', lastError: { code: '50013', message: 'Missing Permissions' } }]);
    expect(page.notifications.items).toMatchObject([{ kind: 'reminder', state: 'unreachable', last_error: '50007: Cannot send messages to this user' }]);
    expect(page.ban).toBeNull();
    expect(page.canCancelRenewal).toBe(false);
    const banned = value(await h.services.dashboardMembers.member(actorOf(t), s.m.banned.userId));
    expect(banned).toMatchObject({ status: 'banned', ban: { reason: 'spam' } });
    expect(value(await h.services.dashboardMembers.member(actorOf(t), s.m.unlinked.userId)).user.unreachable).toMatchObject([{ platform: 'discord', reason: 'dm_closed' }]);
    expect(refusal(await h.services.dashboardMembers.member(actorOf(t), '123456789012345678'))).toBe('404 User not found');
  });

  it('add days and set the end date: the API extend and its event, recorded; bad input changes nothing', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const owner = actorOf(t);
    const before = Date.parse(s.m.ada.endDate);
    value(await actions().extend(owner, s.m.ada.userId, { days: '10' }));
    expect(Date.parse((await membershipRow(h, t.projectId, s.m.ada.userId))!.end_date)).toBe(before + 10 * 86_400_000);
    // An expired member's days count from now.
    value(await actions().extend(owner, s.m.expired.userId, { days: '1' }));
    const revived = Date.parse((await membershipRow(h, t.projectId, s.m.expired.userId))!.end_date);
    expect(Math.abs(revived - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    value(await actions().extend(owner, s.m.bob.userId, { end_date: '2031-02-03' }));
    expect((await membershipRow(h, t.projectId, s.m.bob.userId))!.end_date).toBe('2031-02-03T00:00:00.000Z');
    const extended = (await eventRows(h, t.projectId)).filter((e) => e.type === 'membership.extended');
    expect(extended).toHaveLength(3);
    expect(extended[2]!.data).toMatchObject({ membership: { user_id: s.m.bob.userId, membership_end_date: '2031-02-03T00:00:00.000Z' }, previous_end_date: s.m.bob.endDate });
    expect((await audit(t)).map((a) => [a.action, a.subject, a.details.days ?? a.details.end_date])).toStrictEqual([
      ['membership.extend', s.m.ada.userId, 10],
      ['membership.extend', s.m.expired.userId, 1],
      ['membership.extend', s.m.bob.userId, '2031-02-03T00:00:00.000Z'],
    ]);
    const bad: [Record<string, string>, string][] = [
      [{ days: '0' }, '422 Days must be a whole number from 1 to 3650'],
      [{ days: '1.5' }, '422 Days must be a whole number from 1 to 3650'],
      [{ end_date: '2031-02-30' }, '422 2031-02-30 is not a real date'],
      [{ end_date: '2020-01-01' }, '422 The end date must be in the future (use "End now" to end the membership)'],
      [{ end_date: 'tomorrow' }, '422 The end date must be a date (YYYY-MM-DD), with a time (HH:MM) if you like'],
      [{ days: '2', end_date: '2031-01-01' }, '422 Give either days to add or an end date, not both'],
      [{}, '422 Give days to add or an end date'],
    ];
    for (const [form, message] of bad) expect(refusal(await actions().extend(owner, s.m.ada.userId, form)), JSON.stringify(form)).toBe(message);
    expect(refusal(await actions().extend(owner, '123456789012345678', { days: '1' }))).toBe('404 Membership not found for user 123456789012345678');
    expect(await audit(t)).toHaveLength(3);
  });

  it('an admin without memberships:update extends nothing, ends nothing, records nothing; ban needs ban:add', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const reader = actorOf(t, ['memberships:read', 'ban:remove'], s.m.bob.userId);
    const events = (await eventRows(h, t.projectId)).length;
    expect(refusal(await actions().extend(reader, s.m.ada.userId, { days: '10' }))).toBe('403 This needs the permission memberships:update');
    expect(refusal(await actions().endNow(reader, s.m.ada.userId))).toBe('403 This needs the permission memberships:update');
    expect(refusal(await actions().resync(reader, s.m.ada.userId))).toBe('403 This needs the permission memberships:update');
    expect(refusal(await actions().portalLink(reader, s.m.ada.userId))).toBe('403 This needs the permission memberships:update');
    expect(refusal(await actions().cancelRenewal(reader, s.m.ada.userId))).toBe('403 This needs the permission memberships:update');
    expect(refusal(await actions().ban(reader, s.m.ada.userId, {}))).toBe('403 This needs the permission ban:add');
    expect((await membershipRow(h, t.projectId, s.m.ada.userId))!.end_date).toBe(s.m.ada.endDate);
    expect((await eventRows(h, t.projectId)).length).toBe(events);
    expect(await audit(t)).toStrictEqual([]);
    // ban:remove alone lifts a ban, recorded with the admin as actor.
    value(await actions().unban(reader, s.m.banned.userId));
    expect((await audit(t)).map((a) => [a.action, a.actor_user_id])).toStrictEqual([['ban.remove', s.m.bob.userId]]);
  });

  it('ban and unban through the users service: the ban row, user.banned/unbanned, audited; twice is a clear refusal', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const owner = actorOf(t);
    value(await actions().ban(owner, s.m.ada.userId, { reason: ' chargeback ' }));
    const row = rowsOf<{ banned_by: string; reason: string }>(await h.database.db.execute(sql`SELECT banned_by, reason FROM bans WHERE project_id = ${t.projectId} AND user_id = ${s.m.ada.userId}`));
    expect(row).toStrictEqual([{ banned_by: 'dashboard:owner', reason: 'chargeback' }]);
    expect(refusal(await actions().ban(owner, s.m.ada.userId, {}))).toBe(`409 User ${s.m.ada.userId} is already banned`);
    value(await actions().unban(owner, s.m.ada.userId));
    expect(refusal(await actions().unban(owner, s.m.ada.userId))).toBe('409 This member is not banned');
    expect(refusal(await actions().ban(owner, s.m.bob.userId, { reason: 'x'.repeat(501) }))).toBe('422 The reason must be at most 500 characters');
    const types = (await eventRows(h, t.projectId)).map((e) => e.type).filter((x) => x.startsWith('user.'));
    expect(types).toStrictEqual(['user.banned', 'user.banned', 'user.unbanned']);
    expect((await audit(t)).map((a) => [a.action, a.details])).toStrictEqual([['ban.add', { reason: 'chargeback' }], ['ban.remove', {}]]);
  });

  it('end now sets the end date to now (expired at once); resync, portal link and invite are recorded, the link is not', async () => {
    const t = await h.tenant();
    const s = await seedMembers(h, t);
    const owner = actorOf(t);
    value(await actions().endNow(owner, s.m.ada.userId));
    const page = value(await h.services.dashboardMembers.member(owner, s.m.ada.userId));
    expect(page.memberships[0]!.status).toBe('expired');
    expect(refusal(await actions().endNow(owner, s.m.ada.userId))).toBe('409 This membership has already ended');
    const resynced = value(await actions().resync(owner, s.m.failed.userId));
    expect(resynced.notice).toMatch(/^Access is being applied again/);
    const link = value(await actions().portalLink(owner, s.m.bob.userId));
    expect(link.link?.url).toMatch(/\/portal\/[A-Za-z0-9_-]+$/);
    expect(refusal(await actions().invite(owner, s.m.bob.userId, s.targetId))).toBe('409 The member is not waiting to join that chat');
    expect(refusal(await actions().invite(owner, s.m.bob.userId, 'nope'))).toBe('422 Choose the Telegram chat to invite to');
    expect(refusal(await actions().cancelRenewal(owner, s.m.bob.userId))).toBe('409 This membership has no renewal to cancel');
    const rows = await audit(t);
    expect(rows.map((a) => a.action)).toStrictEqual(['membership.end', 'access.resync', 'portal-link.create']);
    expect(JSON.stringify(rows)).not.toContain(link.link!.url);
  });

  it('cancel renewal and end now of a Stripe subscription go through the portal\'s Stripe path', async () => {
    const paid = await paidMember(h);
    const owner = actorOf(paid.t);
    const page = value(await h.services.dashboardMembers.member(owner, paid.user));
    expect(page.canCancelRenewal).toBe(true);
    value(await actions().cancelRenewal(owner, paid.user));
    expect(h.stripe.world.subscriptions.get(paid.subscriptionId!)?.cancel_at_period_end).toBe(true);
    expect(value(await h.services.dashboardMembers.member(owner, paid.user)).status).toBe('cancelling');
    expect(refusal(await actions().cancelRenewal(owner, paid.user))).toBe('409 This membership has no renewal to cancel');
    const again = await paidMember(h);
    const done = value(await actions().endNow(actorOf(again.t), again.user));
    expect(done.notice).toBe('The membership has ended and its renewal is cancelled.');
    expect(h.stripe.world.subscriptions.get(again.subscriptionId!)?.cancel_at_period_end).toBe(true);
  });
});
