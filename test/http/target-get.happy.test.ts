import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createMembership, expectSuccess, expireMembership } from '../support/api.js';
import { createPlan, createTarget, getTarget, grant } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetGet } from '../support/operations.catalogue.js';

const RETRIEVED = 'Target retrieved successfully';

describe(`${targetGet.name}: happy`, () => {
  const h = useHarness();

  it('answers total 1 and data an array of one target', async () => {
    const t = await h.tenant();
    const target = await createTarget(t);
    const path = `${t.base}/targets/${target.target_id}`;
    const res = await t.request({ method: 'GET', url: path });
    expectSuccess(res, { method: 'GET', path, total: 1, message: RETRIEVED, data: [target] });
  });

  describe('computed counts', () => {
    /** A target granted by two plans, and a plan that does not grant it. */
    async function setup(t: Tenant) {
      const target = await createTarget(t);
      const [a, b, unrelated] = [await createPlan(t), await createPlan(t), await createPlan(t)];
      await grant(t, a.plan_id, target.target_id);
      await grant(t, b.plan_id, target.target_id);
      return { target, a, b, unrelated };
    }

    it('plan_count counts the plans granting the target, not deleted ones', async () => {
      const t = await h.tenant();
      const { target, a } = await setup(t);
      expect((await getTarget(t, target.target_id)).plan_count).toBe(2);
      await t.request({ method: 'DELETE', url: `${t.base}/plans/${a.plan_id}` });
      expect((await getTarget(t, target.target_id)).plan_count).toBe(1);
    });

    it('participant_count counts users with an active membership on a plan granting it', async () => {
      const t = await h.tenant();
      const { target, a, b, unrelated } = await setup(t);
      await createMembership(t, { planId: a.plan_id });
      await createMembership(t, { planId: b.plan_id });
      await createMembership(t, { planId: unrelated.plan_id });
      await createMembership(t);
      expect(await getTarget(t, target.target_id)).toMatchObject({ plan_count: 2, participant_count: 2 });
    });

    it('participant_count leaves out expired memberships and ones past their end date', async () => {
      const t = await h.tenant();
      const { target, a } = await setup(t);
      const expired = await createMembership(t, { planId: a.plan_id });
      const lapsed = await createMembership(t, { planId: a.plan_id });
      await createMembership(t, { planId: a.plan_id });
      await expireMembership(h, expired.membership_id);
      // Past its end date but not yet swept: it no longer grants access.
      await h.database.db.execute(sql`UPDATE memberships SET end_date = now() - interval '1 minute' WHERE id = ${lapsed.membership_id}`);
      expect((await getTarget(t, target.target_id)).participant_count).toBe(1);
    });

    it('participant_count follows membership changes at once (it is computed, not stored)', async () => {
      const t = await h.tenant();
      const { target, a } = await setup(t);
      const m = await createMembership(t, { planId: a.plan_id });
      expect((await getTarget(t, target.target_id)).participant_count).toBe(1);
      await t.request({ method: 'DELETE', url: `${t.base}/memberships/${m.membership_id}` });
      expect((await getTarget(t, target.target_id)).participant_count).toBe(0);
    });

    it('a disabled target keeps its counts (members keep access)', async () => {
      const t = await h.tenant();
      const { target, a } = await setup(t);
      await createMembership(t, { planId: a.plan_id });
      await t.request({ method: 'PATCH', url: `${t.base}/targets/${target.target_id}`, payload: { is_enabled: false } });
      expect(await getTarget(t, target.target_id)).toMatchObject({ is_enabled: false, plan_count: 2, participant_count: 1 });
    });
  });
});
