import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { headingOf, openPage, pathOf, payLinkStarted } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { deliverAll, membershipOf } from '../support/payments.js';

/**
 * A paid pay link is applied exactly once (docs/front-desk.md, "The done page"): the member's done
 * page, Stripe's webhook and a second tab of the done page racing for the same payment grant one
 * membership period, record one payment and write one membership.created, on both storages.
 */
describe('a pay link paid: the done page and Stripe\'s event racing', () => {
  const h = useHarness();

  const countOf = async (query: ReturnType<typeof sql>) => rowsOf(await h.database.db.execute(query)).length;

  for (const recurring of [false, true]) {
    it(`${recurring ? 'a subscription' : 'a one-time payment'}: two done pages and the webhook at once apply it once`, async () => {
      for (let round = 0; round < 3; round++) {
        const { t, stripe, user, plan, link } = await payLinkStarted(h, { recurring });
        const opened = await openPage(h, pathOf(link.url));
        expect(opened.statusCode, opened.body).toBe(303);
        const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(String(opened.headers.location))![1]!;
        const events = h.stripe.world.pay(sessionId);
        const done = `${pathOf(link.url)}/done`;
        const [first, second] = await Promise.all([openPage(h, done), openPage(h, done), deliverAll(h, stripe, events)]);
        for (const page of [first, second]) expect(headingOf(page.body), page.body).toBe('You are in!');
        const membership = await membershipOf(t, user);
        expect(membership?.plan_id).toBe(plan.plan_id);
        // One period of 30 days from about now: granted once.
        const days = (Date.parse(membership!.membership_end_date) - Date.now()) / 86_400_000;
        expect(days).toBeGreaterThan(29.9);
        expect(days).toBeLessThan(30.1);
        expect(await countOf(sql`SELECT id FROM payments WHERE project_id = ${t.projectId}`)).toBe(1);
        expect(await countOf(sql`SELECT id FROM events WHERE project_id = ${t.projectId} AND type = 'membership.created'`)).toBe(1);
        expect(await countOf(sql`SELECT id FROM events WHERE project_id = ${t.projectId} AND type = 'membership.extended'`)).toBe(0);
        expect(await countOf(sql`SELECT id FROM events WHERE project_id = ${t.projectId} AND type = 'payment.succeeded'`)).toBe(1);
        expect(await countOf(sql`SELECT 1 FROM pay_links WHERE project_id = ${t.projectId} AND completed_at IS NOT NULL`)).toBe(1);
      }
    });
  }
});
