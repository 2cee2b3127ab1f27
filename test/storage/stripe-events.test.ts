import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createPlan } from '../support/catalogue.js';
import { userId, useHarness } from '../support/harness.js';
import { checkout, connectStripe, deliver } from '../support/payments.js';

/**
 * Each Stripe event id is applied once on both storages, however many deliveries of it race
 * (Stripe retries a delivery it thinks timed out while the first is still running), the two
 * events of one subscription payment racing each other make one payment and one membership, and
 * a refund racing the payment it refunds is never lost (docs/payments.md, "Out of order").
 */
describe('Stripe events applied once under concurrent deliveries', () => {
  const h = useHarness();

  it('five concurrent deliveries of one event: one applied, four duplicates, one payment, one membership, one event each', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_duration: '30 days', plan_data: { plan_recurring: true, plan_one_time: false } });
    const user = userId();
    const session = await checkout(t, plan.plan_id, user);
    const events = h.stripe.world.pay(session.session_id);
    const completed = events.find((e) => e.type === 'checkout.session.completed')!;
    const invoicePaid = events.find((e) => e.type === 'invoice.paid')!;
    const answers = await Promise.all([...Array.from({ length: 5 }, () => deliver(h, stripe, completed)), deliver(h, stripe, invoicePaid), deliver(h, stripe, invoicePaid)]);
    for (const a of answers) expect(a.statusCode, a.body).toBe(200);
    const results = answers.map((a) => a.json().data.result as string);
    expect(results.slice(0, 5).filter((r) => r === 'applied')).toHaveLength(1);
    expect(results.slice(5).filter((r) => r === 'applied')).toHaveLength(1);
    const counts = rowsOf<{ payments: number; memberships: number; created: number; succeeded: number; ledger: number }>(
      await h.database.db.execute(sql`SELECT
        (SELECT count(*)::int FROM payments WHERE project_id = ${t.projectId}) AS payments,
        (SELECT count(*)::int FROM memberships WHERE project_id = ${t.projectId}) AS memberships,
        (SELECT count(*)::int FROM events WHERE project_id = ${t.projectId} AND type = 'membership.created') AS created,
        (SELECT count(*)::int FROM events WHERE project_id = ${t.projectId} AND type = 'payment.succeeded') AS succeeded,
        (SELECT count(*)::int FROM payment_events WHERE merchant_account_id = ${stripe.view.merchant_account_id}) AS ledger`),
    )[0];
    // The two events of the first invoice may race: whichever commits second finds the payment recorded.
    expect(counts).toStrictEqual({ payments: 1, memberships: 1, created: 1, succeeded: 1, ledger: 2 });
  });

  it('a full refund delivered at the same moment as its payment: whichever commits first, the payment ends refunded and no access is left', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_duration: '30 days' });
    const users = Array.from({ length: 6 }, () => userId());
    await Promise.all(
      users.map(async (user, i) => {
        const session = await checkout(t, plan.plan_id, user);
        const paid = h.stripe.world.pay(session.session_id);
        const completed = paid.find((e) => e.type === 'checkout.session.completed')!;
        const refund = h.stripe.world.refund((completed.data.object as { payment_intent: string }).payment_intent)[0]!;
        const answers = await Promise.all(i % 2 === 0 ? [deliver(h, stripe, refund), deliver(h, stripe, completed)] : [deliver(h, stripe, completed), deliver(h, stripe, refund)]);
        for (const a of answers) expect(a.statusCode, a.body).toBe(200);
      }),
    );
    const rows = rowsOf<{ user_id: string; payment: string; membership: string | null }>(
      await h.database.db.execute(sql`SELECT p.user_id, p.status AS payment, m.status AS membership
        FROM payments p LEFT JOIN memberships m ON m.project_id = p.project_id AND m.user_id = p.user_id
        WHERE p.project_id = ${t.projectId} ORDER BY p.user_id`),
    );
    expect(rows).toHaveLength(users.length);
    // Paid first: granted, then ended by the refund; refunded first: recorded refunded, never granted.
    for (const row of rows) expect([row.payment, row.membership], row.user_id).toSatisfy(([payment, membership]) => payment === 'refunded' && membership !== 'active');
    const left = rowsOf<{ n: number; refunded: number }>(
      await h.database.db.execute(sql`SELECT (SELECT count(*)::int FROM held_reversals WHERE project_id = ${t.projectId}) AS n,
        (SELECT count(*)::int FROM events WHERE project_id = ${t.projectId} AND type = 'payment.refunded') AS refunded`),
    )[0];
    expect(left).toStrictEqual({ n: 0, refunded: users.length });
  });
});
