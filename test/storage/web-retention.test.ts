import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { HistoryPruner } from '../../src/domain/retention/history.pruner.js';
import { createLogger } from '../../src/logger.js';
import { RetentionStore } from '../../src/store/retention.store.js';
import { createPlan } from '../support/catalogue.js';
import { onPostgres, useHarness } from '../support/harness.js';

/**
 * Members on the web in the history pruner (docs/operations.md, "Retention"), on both storages:
 * settled guild joins made before the retention go, pending ones stay whatever their age; logins
 * with Discord that expired before it go.
 */

const h = useHarness();
const DAY = 86_400_000;

describe(`web history retention (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('prunes settled guild joins and expired logins past the retention, and nothing else', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY).toISOString();
    const join = (key: string, state: string, daysAgo: number) =>
      h.database.db.execute(sql`
        INSERT INTO guild_joins (project_id, user_id, plan_id, dedupe_key, state, created_at)
        VALUES (${t.projectId}, '123456789012345678', ${plan.plan_id}, ${key}, ${state}, ${ago(daysAgo)}::timestamptz)`);
    await join('old-joined', 'joined', 40);
    await join('old-failed', 'failed', 40);
    await join('old-pending', 'pending', 40);
    await join('new-joined', 'joined', 1);
    const login = (hash: string, expiredDaysAgo: number) =>
      h.database.db.execute(sql`
        INSERT INTO web_logins (state_hash, project_id, plan_id, code_verifier_sealed, created_at, expires_at)
        VALUES (${hash}, ${t.projectId}, ${plan.plan_id}, 'v1.x', ${ago(expiredDaysAgo)}::timestamptz, ${ago(expiredDaysAgo)}::timestamptz)`);
    await login('old', 31);
    await login('recent', 2);

    const pruner = new HistoryPruner(new RetentionStore(h.database.db), { now: () => new Date(now) }, createLogger('silent'), {
      retentionMs: 30 * DAY,
      intervalMs: 60_000,
      batchSize: 1,
    });
    expect(await pruner.pruneOnce()).toMatchObject({ guildJoins: 2, webLogins: 1 });
    const joins = rowsOf<{ dedupe_key: string }>(await h.database.db.execute(sql`SELECT dedupe_key FROM guild_joins WHERE project_id = ${t.projectId} ORDER BY dedupe_key`));
    expect(joins.map((r) => r.dedupe_key)).toStrictEqual(['new-joined', 'old-pending']);
    const logins = rowsOf<{ state_hash: string }>(await h.database.db.execute(sql`SELECT state_hash FROM web_logins WHERE project_id = ${t.projectId}`));
    expect(logins.map((r) => r.state_hash)).toStrictEqual(['recent']);
    expect(await pruner.pruneOnce()).toMatchObject({ guildJoins: 0, webLogins: 0 });
  });
});
