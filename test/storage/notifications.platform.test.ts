import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { insertIntegration } from '../support/access-seed.js';
import { createPlan } from '../support/catalogue.js';
import { onPostgres, useHarness, userId, type Tenant } from '../support/harness.js';

/**
 * The platform a member's message goes to (docs/lifecycle.md, docs/front-desk.md "Confirmations"),
 * on PGlite and PostgreSQL: that of the plan's targets, else the project's one bot (the first by
 * name), and no message where the project has no bot there.
 */
describe(`the platform of a member's message (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  const h = useHarness();
  const now = new Date('2026-03-01T00:00:00.000Z');

  async function member(t: Tenant, planId: string): Promise<string> {
    const user = userId();
    await h.database.db.execute(sql`
      INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date) VALUES (${t.projectId}, ${user}, ${planId}, ${now.toISOString()}, '2026-04-01T00:00:00Z')`);
    return user;
  }

  async function confirmationPlatform(t: Tenant, planId: string): Promise<string[]> {
    const user = await member(t, planId);
    await h.container.stores.notifications.queueConfirmation({ projectId: t.projectId, userId: user, planId, paymentKey: randomUUID() }, now);
    return rowsOf<{ platform: string }>(
      await h.database.db.execute(sql`SELECT platform FROM notifications WHERE project_id = ${t.projectId} AND user_id = ${user}`),
    ).map((r) => r.platform);
  }

  it("the plan's targets' platform over the project's first bot; the first bot for a plan with none; none without a bot there", async () => {
    const t = await h.tenant();
    const withTelegram = await createPlan(t, { plan_name: 'Telegram plan' });
    const bare = await createPlan(t, { plan_name: 'No targets' });
    const chat = randomUUID();
    await h.database.db.execute(sql`
      INSERT INTO targets (id, project_id, name, platform, kind, external_id) VALUES (${chat}, ${t.projectId}, 'VIP chat', 'telegram', 'group', '-100777')`);
    await h.database.db.execute(sql`INSERT INTO plan_targets (plan_id, target_id) VALUES (${withTelegram.plan_id}, ${chat})`);
    // No bot yet: nothing is queued.
    expect(await confirmationPlatform(t, withTelegram.plan_id)).toStrictEqual([]);
    expect(await confirmationPlatform(t, bare.plan_id)).toStrictEqual([]);
    // A Discord bot only: the plan granting a Telegram chat has no bot there.
    await insertIntegration(h, t.projectId, { platform: 'discord' });
    expect(await confirmationPlatform(t, withTelegram.plan_id)).toStrictEqual([]);
    expect(await confirmationPlatform(t, bare.plan_id)).toStrictEqual(['discord']);
    await insertIntegration(h, t.projectId, { platform: 'telegram' });
    expect(await confirmationPlatform(t, withTelegram.plan_id)).toStrictEqual(['telegram']);
    expect(await confirmationPlatform(t, bare.plan_id)).toStrictEqual(['discord']);
  });
});
