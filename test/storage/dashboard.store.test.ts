import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { SESSION_IDLE_MS, SESSION_MAX_MS, LINK_TTL_MS } from '../../src/domain/dashboard/sessions.service.js';
import { digestOf } from '../../src/domain/dashboard/tokens.js';
import { createAdmin } from '../support/admins.js';
import { useHarness } from '../support/harness.js';
import { ManualClock } from '../support/webhook-harness.js';

/**
 * The dashboard's sessions, links and audit log on both storages (docs/dashboard.md): a link spent
 * once however many requests race for it, the idle and absolute expiry, revocation, permissions
 * read afresh, and the audit log newest first in pages.
 */
describe('dashboard sessions and audit', () => {
  const clock = new ManualClock(new Date());
  const h = useHarness({ clock });
  const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

  it('a link is spent once: five racing spends start one session; the table keeps only digests', async () => {
    const t = await h.tenant();
    const made = await h.services.dashboardSessions.createLink(t.projectId, null);
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    const token = tokenOf(made.value.url);
    expect(made.value.url).toMatch(/\/dashboard\/sign-in\/[A-Za-z0-9_-]{43}$/);
    const spends = await Promise.all(Array.from({ length: 5 }, () => h.services.dashboardSessions.spendLink(token, 'UA')));
    expect(spends.filter((s) => s.kind === 'ok')).toHaveLength(1);
    expect(spends.filter((s) => s.kind === 'refused').map((s) => (s.kind === 'refused' ? s.reason : ''))).toStrictEqual(['used', 'used', 'used', 'used']);
    const rows = rowsOf<{ token_hash: string }>(await h.database.db.execute(sql`SELECT token_hash FROM dashboard_sessions WHERE project_id = ${t.projectId}`));
    expect(rows).toHaveLength(1);
    const ok = spends.find((s) => s.kind === 'ok');
    expect(rows[0]!.token_hash).toBe(digestOf(ok!.kind === 'ok' ? ok!.token : ''));
    const links = rowsOf<{ token_hash: string }>(await h.database.db.execute(sql`SELECT token_hash FROM dashboard_links WHERE project_id = ${t.projectId}`));
    expect(links[0]!.token_hash).toBe(digestOf(token));
  });

  it('a link expires after 15 minutes; an admin link needs an admin; unknown projects and users are refused', async () => {
    const t = await h.tenant();
    const s = h.services.dashboardSessions;
    const made = await s.createLink(t.projectId, null);
    if (!made.ok) throw made.error;
    clock.advance(LINK_TTL_MS + 1);
    expect(await s.spendLink(tokenOf(made.value.url), undefined)).toStrictEqual({ kind: 'refused', reason: 'expired' });
    const unknown = await s.createLink('00000000-0000-4000-8000-000000000000', null);
    expect(unknown.ok ? null : unknown.error.message).toBe('Project 00000000-0000-4000-8000-000000000000 not found');
    const notAdmin = await s.createLink(t.projectId, '123456789012345678');
    expect(notAdmin.ok ? null : notAdmin.error.message).toBe(`User 123456789012345678 is not an admin of project ${t.projectId}`);
    const admin = await createAdmin(t, ['memberships:read']);
    const adminLink = await s.createLink(t.projectId, admin.user_id);
    if (!adminLink.ok) throw adminLink.error;
    // Removed between the link and its use: the link starts nothing.
    await t.request({ method: 'DELETE', url: `${t.base}/admins/${admin.user_id}` });
    expect(await s.spendLink(tokenOf(adminLink.value.url), undefined)).toStrictEqual({ kind: 'refused', reason: 'not-admin' });
  });

  it('a session lasts 12 h after its last use, never past 7 days; revoked or removed it resolves to nothing', async () => {
    const t = await h.tenant();
    const s = h.services.dashboardSessions;
    const admin = await createAdmin(t, ['admins:read']);
    const started = await s.start(t.projectId, admin.user_id, 'discord', 'Browser/1.0');
    const actor = await s.resolve(t.projectId, started.token);
    expect(actor).toMatchObject({ projectId: t.projectId, userId: admin.user_id, permissions: ['admins:read'], method: 'discord' });
    expect(await s.resolve('00000000-0000-4000-8000-000000000000', started.token)).toBeNull();
    // Used every 11 hours, it lives on until 7 days after it began, and not a moment longer.
    for (let used = 0; used < 15; used++) {
      clock.advance(SESSION_IDLE_MS - 3_600_000);
      expect(await s.resolve(t.projectId, started.token), `use ${used}`).not.toBeNull();
    }
    clock.advance(SESSION_MAX_MS - 15 * (SESSION_IDLE_MS - 3_600_000));
    expect(await s.resolve(t.projectId, started.token)).toBeNull();

    const idle = await s.start(t.projectId, admin.user_id, 'telegram', undefined);
    clock.advance(SESSION_IDLE_MS - 1_000);
    expect(await s.resolve(t.projectId, idle.token)).not.toBeNull();
    clock.advance(SESSION_IDLE_MS + 1_000);
    expect(await s.resolve(t.projectId, idle.token)).toBeNull();

    // Permissions are read on every request.
    const live = await s.start(t.projectId, admin.user_id, 'discord', undefined);
    await t.request({ method: 'PUT', url: `${t.base}/admins/${admin.user_id}`, payload: { permissions: ['plans:read'] } });
    expect((await s.resolve(t.projectId, live.token))?.permissions).toStrictEqual(['plans:read']);
    const self = (await s.resolve(t.projectId, live.token))!;
    const revoked = await s.revoke(self, self.sessionId);
    expect(revoked.ok && revoked.value.self).toBe(true);
    expect(await s.resolve(t.projectId, live.token)).toBeNull();
    expect((await s.revoke(self, self.sessionId)).ok).toBe(false);

    const other = await s.start(t.projectId, admin.user_id, 'discord', undefined);
    await t.request({ method: 'DELETE', url: `${t.base}/admins/${admin.user_id}` });
    expect(await s.resolve(t.projectId, other.token)).toBeNull();
  });

  it('listing: admins:read sees every session, others their own; revoking another needs admins:update', async () => {
    const t = await h.tenant();
    const s = h.services.dashboardSessions;
    const reader = await createAdmin(t, ['admins:read']);
    const plain = await createAdmin(t, ['plans:read']);
    const r = (await s.resolve(t.projectId, (await s.start(t.projectId, reader.user_id, 'discord', 'A')).token))!;
    const p = (await s.resolve(t.projectId, (await s.start(t.projectId, plain.user_id, 'telegram', 'B')).token))!;
    expect((await s.list(r, { limit: 50, offset: 0 })).total).toBe(2);
    const own = await s.list(p, { limit: 50, offset: 0 });
    expect(own.items.map((i) => i.userId)).toStrictEqual([plain.user_id]);
    expect((await s.revoke(r, p.sessionId)).ok).toBe(false);
    expect((await s.revoke(p, r.sessionId)).ok).toBe(false);
    expect(await s.resolve(t.projectId, (await s.start(t.projectId, plain.user_id, 'discord', undefined)).token)).not.toBeNull();
  });

  it('the audit log: newest first, paged, with the actor and the session', async () => {
    const t = await h.tenant();
    const s = h.services.dashboardSessions;
    const admin = await createAdmin(t, ['all'], { first_name: 'Ada' });
    const actor = (await s.resolve(t.projectId, (await s.start(t.projectId, admin.user_id, 'discord', undefined)).token))!;
    for (let i = 0; i < 5; i++) await h.services.dashboardAudit.record(actor, 'plan.update', `plan-${i}`, { n: i });
    const first = await h.services.dashboardAudit.list(t.projectId, { limit: 2, offset: 0 });
    expect(first.total).toBe(5);
    expect(first.items.map((e) => e.subject)).toStrictEqual(['plan-4', 'plan-3']);
    expect(first.items[0]).toMatchObject({ actorUserId: admin.user_id, actorName: 'Ada', sessionId: actor.sessionId, action: 'plan.update', details: { n: 4 } });
    const last = await h.services.dashboardAudit.list(t.projectId, { limit: 2, offset: 4 });
    expect(last.items.map((e) => e.subject)).toStrictEqual(['plan-0']);
    expect((await h.services.dashboardAudit.list((await h.tenant()).projectId, { limit: 2, offset: 0 })).total).toBe(0);
  });
});
