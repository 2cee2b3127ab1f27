import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { adminsPath, createAdmin } from '../support/admins.js';
import { useHarness, type Harness, type Tenant } from '../support/harness.js';
import { seedUser } from '../support/keys.js';

/**
 * Admins on both storages (docs/dashboard.md, "Admins"): one admin row per user however many
 * requests race to make it, and the user's is_admin moved in the same statement as the admin row.
 */
describe('admins store', () => {
  const h = useHarness();

  const state = async (harness: Harness, t: Tenant, id: string) => {
    const rows = rowsOf<{ is_admin: boolean; admins: number }>(
      await harness.database.db.execute(sql`
        SELECT u.is_admin, (SELECT count(*)::int FROM admins a WHERE a.project_id = u.project_id AND a.user_id = u.user_id) AS admins
        FROM users u WHERE u.project_id = ${t.projectId} AND u.user_id = ${id}`),
    );
    return rows[0];
  };

  it('six requests making the same user an admin at once: one 201, five 409s, one row, is_admin true', async () => {
    const t = await h.tenant();
    const id = await seedUser(t);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => t.request({ method: 'POST', url: adminsPath(t), payload: { user_id: id, permissions: [i % 2 ? 'all' : 'plans:read'] } })),
    );
    expect(answers.map((a) => a.statusCode).sort(), answers.map((a) => a.body).join('\n')).toStrictEqual([201, 409, 409, 409, 409, 409]);
    expect(await state(h, t, id)).toStrictEqual({ is_admin: true, admins: 1 });
  });

  it('removing an admin clears is_admin with the row; the user row stays', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['all']);
    expect(await state(h, t, admin.user_id)).toStrictEqual({ is_admin: true, admins: 1 });
    const res = await t.request({ method: 'DELETE', url: `${adminsPath(t)}/${admin.user_id}` });
    expect(res.statusCode, res.body).toBe(204);
    expect(await state(h, t, admin.user_id)).toStrictEqual({ is_admin: false, admins: 0 });
  });

  it('AdminsService.may: all, or the exact permission, and nothing for a user who is not an admin', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['memberships:read']);
    const root = await createAdmin(t, ['all']);
    const plain = await seedUser(t);
    const admins = h.services.admins;
    expect(await admins.may(t.projectId, admin.user_id, 'memberships:read')).toBe(true);
    expect(await admins.may(t.projectId, admin.user_id, 'memberships:update')).toBe(false);
    expect(await admins.may(t.projectId, root.user_id, 'memberships:update')).toBe(true);
    expect(await admins.may(t.projectId, plain, 'memberships:read')).toBe(false);
  });
});
