import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { eventRows, expectError, projectState } from '../support/api.js';
import { createTarget, getTarget, snowflake, targetBody } from '../support/catalogue.js';
import { useHarness, userId, type Harness, type Tenant } from '../support/harness.js';

/**
 * A target's `on_expiry` (what losing access does there) and its `health` (docs/plans-targets.md):
 * the default of each kind, the values each kind allows, and a PATCH as the owner's "I fixed it",
 * which puts the target back to ok and its failed access rows back to pending.
 */
describe('targets: on_expiry and health', () => {
  const h = useHarness();

  const guildOf = async (t: Tenant) => (await createTarget(t, { kind: 'guild', target_name: 'Server' })).target_id;

  it.each([
    ['discord', 'role', 'remove_role'],
    ['discord', 'guild', 'none'],
    ['discord', 'channel', 'none'],
    ['telegram', 'group', 'kick'],
    ['telegram', 'channel', 'kick'],
  ] as const)('a %s %s without its own on_expiry shows its kind’s default, %s, and health ok', async (platform, kind, want) => {
    const t = await h.tenant();
    const external = platform === 'telegram' ? `-100${snowflake().slice(0, 10)}` : snowflake();
    const target = await createTarget(t, { platform, kind, external_id: external });
    expect(target).toMatchObject({ on_expiry: want, health: 'ok', health_error: null });
    // The column keeps null: the default is read, so a later change of default reaches it.
    expect(await column(h, target.target_id)).toStrictEqual({ on_expiry: null, health: 'ok' });
  });

  it.each([
    ['discord', 'role', 'none'],
    ['discord', 'guild', 'kick'],
    ['telegram', 'group', 'none'],
  ] as const)('a %s %s takes on_expiry %s when created with it', async (platform, kind, value) => {
    const t = await h.tenant();
    const target = await createTarget(t, { platform, kind, external_id: platform === 'telegram' ? '-1002' : snowflake(), on_expiry: value });
    expect(target.on_expiry).toBe(value);
    expect(await getTarget(t, target.target_id)).toStrictEqual(target);
  });

  it.each([
    ['discord', 'role', 'kick', 'on_expiry kick is not allowed for a discord role; use one of: none, remove_role'],
    ['discord', 'guild', 'remove_role', 'on_expiry remove_role is not allowed for a discord guild; use one of: kick, none'],
    ['discord', 'channel', 'kick', 'on_expiry kick is not allowed for a discord channel; use one of: none'],
    ['telegram', 'channel', 'remove_role', 'on_expiry remove_role is not allowed for a telegram channel; use one of: kick, none'],
  ] as const)('POST: a %s %s with on_expiry %s → 422 naming the allowed values, nothing created', async (platform, kind, value, message) => {
    const t = await h.tenant();
    const before = await projectState(h, t.projectId);
    const path = `${t.base}/targets`;
    const payload = targetBody({ platform, kind, external_id: platform === 'telegram' ? '@tenure_vip' : snowflake(), on_expiry: value });
    const res = await t.request({ method: 'POST', url: path, payload });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', message, method: 'POST', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('POST and PATCH: a value that is no on_expiry at all → 422 listing them', async () => {
    const t = await h.tenant();
    const message = 'on_expiry must be one of: remove_role, kick, none, or null';
    const path = `${t.base}/targets`;
    expectError(await t.request({ method: 'POST', url: path, payload: targetBody({ on_expiry: 'ban' }) }), {
      status: 422,
      code: 'VALIDATION_ERROR',
      message,
      method: 'POST',
      path,
    });
    const target = await createTarget(t);
    const one = `${t.base}/targets/${target.target_id}`;
    expectError(await t.request({ method: 'PATCH', url: one, payload: { on_expiry: 'REMOVE_ROLE' } }), {
      status: 422,
      code: 'VALIDATION_ERROR',
      message,
      method: 'PATCH',
      path: one,
    });
  });

  it('PATCH sets on_expiry (alone it is a change), null puts the kind’s default back; each write is a target.updated event', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const set = await t.request({ method: 'PATCH', url: `${t.base}/targets/${target.target_id}`, payload: { on_expiry: 'none' } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data).toStrictEqual({ ...target, on_expiry: 'none' });
    expect(await column(h, target.target_id)).toMatchObject({ on_expiry: 'none' });
    const back = await t.request({ method: 'PATCH', url: `${t.base}/targets/${target.target_id}`, payload: { on_expiry: null } });
    expect(back.json().data, back.body).toStrictEqual(target);
    expect(await column(h, target.target_id)).toMatchObject({ on_expiry: null });
    // A rename keeps the target's own value.
    await t.request({ method: 'PATCH', url: `${t.base}/targets/${target.target_id}`, payload: { on_expiry: 'none' } });
    const renamed = await t.request({ method: 'PATCH', url: `${t.base}/targets/${target.target_id}`, payload: { target_name: 'Renamed' } });
    expect(renamed.json().data).toMatchObject({ on_expiry: 'none', target_name: 'Renamed' });
    const updates = (await eventRows(h, t.projectId)).filter((e) => e.type === 'target.updated');
    expect(updates.map((e) => (e.data.target as { on_expiry: string }).on_expiry)).toStrictEqual(['none', 'remove_role', 'none', 'none']);
  });

  it('PATCH one: an on_expiry the kind does not allow → 422 naming the allowed values, nothing changed', async () => {
    const t = await h.tenant();
    const guild = await guildOf(t);
    const path = `${t.base}/targets/${guild}`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'PATCH', url: path, payload: { on_expiry: 'remove_role', target_name: 'X' } });
    expectError(res, {
      status: 422,
      code: 'VALIDATION_ERROR',
      message: 'on_expiry remove_role is not allowed for a discord guild; use one of: kick, none',
      method: 'PATCH',
      path,
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('PATCH batch: an item whose on_expiry its kind does not allow → 422 naming the item, nothing changed', async () => {
    const t = await h.tenant();
    const [role, guild] = [await createTarget(t), await guildOf(t)];
    const path = `${t.base}/targets`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({
      method: 'PATCH',
      url: path,
      payload: [
        { target_id: role.target_id, on_expiry: 'none' },
        { target_id: guild, on_expiry: 'remove_role' },
      ],
    });
    expectError(res, {
      status: 422,
      code: 'VALIDATION_ERROR',
      message: `Item 1 (target_id ${guild}): on_expiry remove_role is not allowed for a discord guild; use one of: kick, none`,
      method: 'PATCH',
      path,
    });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('an unhealthy target shows health and health_error; a PATCH puts it back to ok and its failed rows back to pending', async () => {
    const t = await h.tenant();
    const [target, other] = [await createTarget(t), await createTarget(t)];
    const error = { code: '50013', message: 'Missing Permissions' };
    for (const id of [target.target_id, other.target_id]) {
      await h.database.db.execute(sql`UPDATE targets SET health = 'unhealthy', health_error = ${JSON.stringify(error)}::jsonb WHERE id = ${id}`);
    }
    const [failed, synced] = [userId(), userId()];
    await insertAccess(h, t, target.target_id, failed, { state: 'failed', applied: null, last_error: error, attempts: 1 });
    await insertAccess(h, t, target.target_id, synced, { state: 'synced', applied: 'granted', last_error: null, attempts: 1 });
    await insertAccess(h, t, other.target_id, failed, { state: 'failed', applied: null, last_error: error, attempts: 1 });
    expect(await getTarget(t, target.target_id)).toMatchObject({ health: 'unhealthy', health_error: error });

    const res = await t.request({ method: 'PATCH', url: `${t.base}/targets/${target.target_id}`, payload: { target_name: 'Fixed' } });
    expect(res.json().data, res.body).toMatchObject({ health: 'ok', health_error: null, target_name: 'Fixed' });
    expect(await accessRows(h, t)).toStrictEqual([
      { target_id: other.target_id, user_id: failed, state: 'failed', attempts: 1, last_error: error },
      { target_id: target.target_id, user_id: failed, state: 'pending', attempts: 0, last_error: null },
      { target_id: target.target_id, user_id: synced, state: 'synced', attempts: 1, last_error: null },
    ].sort((a, b) => (a.target_id + a.user_id).localeCompare(b.target_id + b.user_id)));
    // The batch update does the same for each of its targets.
    const batch = await t.request({ method: 'PATCH', url: `${t.base}/targets`, payload: [{ target_id: other.target_id, is_enabled: true }] });
    expect(batch.json().data[0], batch.body).toMatchObject({ health: 'ok', health_error: null });
    expect((await accessRows(h, t)).filter((r) => r.state === 'failed')).toStrictEqual([]);
  });
});

async function column(h: Harness, targetId: string) {
  return rowsOf<{ on_expiry: string | null; health: string }>(
    await h.database.db.execute(sql`SELECT on_expiry, health FROM targets WHERE id = ${targetId}`),
  )[0];
}

async function insertAccess(
  h: Harness,
  t: Tenant,
  targetId: string,
  user: string,
  row: { state: string; applied: string | null; last_error: object | null; attempts: number },
) {
  await h.database.db.execute(sql`
    INSERT INTO access (project_id, target_id, user_id, platform, kind, external_id, on_expiry, desired, applied, state, last_error, attempts)
    SELECT ${t.projectId}, id, ${user}, platform, kind, external_id, 'remove_role', 'granted', ${row.applied}, ${row.state},
           ${row.last_error === null ? null : JSON.stringify(row.last_error)}::jsonb, ${row.attempts}
    FROM targets WHERE id = ${targetId}`);
}

async function accessRows(h: Harness, t: Tenant) {
  return rowsOf<{ target_id: string; user_id: string; state: string; attempts: number; last_error: object | null }>(
    await h.database.db.execute(sql`
      SELECT target_id, user_id, state, attempts, last_error FROM access WHERE project_id = ${t.projectId}
      ORDER BY target_id::text || user_id`),
  );
}
