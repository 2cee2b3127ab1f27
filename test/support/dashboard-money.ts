import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/database/db.js';
import type { Harness, Tenant } from './harness.js';

/**
 * A project with money to show (the dashboard's money page): two plans, memberships begun over the
 * last 20 days (some ended), and their payments (a monthly subscription's, one-time ones, a refund,
 * a failure), written at chosen instants so the figures are known. Returns the days used.
 */
export async function seedMoney(h: Harness, t: Tenant): Promise<{ monthly: string; once: string }> {
  const db = h.database.db;
  const plans = rowsOf<{ id: string; name: string }>(
    await db.execute(sql`
      INSERT INTO plans (project_id, name, price, currency, duration, price_formatted, recurring, one_time) VALUES
        (${t.projectId}, 'Monthly', 12, 'USD', '1 month', '$12.00', true, false),
        (${t.projectId}, 'Day pass <b>', 3, 'EUR', '1 day', '€3.00', false, true)
      RETURNING id, name`),
  );
  const monthly = plans.find((p) => p.name === 'Monthly')!.id;
  const once = plans.find((p) => p.name !== 'Monthly')!.id;
  // Ten monthly members who joined 2 to 20 days ago and stay; five day passes, ended.
  await db.execute(sql`
    INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date, created_at, updated_at)
    SELECT ${t.projectId}, 'm' || g, ${monthly}, now() - make_interval(days => 2 * g), now() - make_interval(days => 2 * g) + interval '1 month',
           now() - make_interval(days => 2 * g), now() - make_interval(days => 2 * g)
    FROM generate_series(1, 10) AS g`);
  await db.execute(sql`
    INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, subscription_id, created_at, updated_at)
    SELECT ${t.projectId}, 'stripe', 'in_' || g, 'm' || g, ${monthly}, 1200, 'USD', CASE WHEN g = 3 THEN 'failed' ELSE 'succeeded' END, 'sub_' || g,
           now() - make_interval(days => 2 * g), now() - make_interval(days => 2 * g)
    FROM generate_series(1, 10) AS g`);
  await db.execute(sql`
    INSERT INTO memberships (project_id, user_id, plan_id, start_date, end_date, created_at, updated_at)
    SELECT ${t.projectId}, 'd' || g, ${once}, now() - make_interval(days => 3 * g + 1), now() - make_interval(days => 3 * g),
           now() - make_interval(days => 3 * g + 1), now() - make_interval(days => 3 * g + 1)
    FROM generate_series(1, 5) AS g`);
  await db.execute(sql`
    INSERT INTO payments (project_id, provider, payment_key, user_id, plan_id, amount_minor, currency, status, created_at, updated_at)
    SELECT ${t.projectId}, 'stripe', 'pi_' || g, 'd' || g, ${once}, 300, 'EUR', CASE WHEN g = 5 THEN 'refunded' ELSE 'succeeded' END,
           now() - make_interval(days => 3 * g + 1), now() - make_interval(days => 3 * g)
    FROM generate_series(1, 5) AS g`);
  return { monthly, once };
}
