import { describe, expect, it } from 'vitest';
import { canonical, parentsFirst, readMembership, readPlan, readTarget, type SourceTarget } from './move-in-rules.js';

const plan = {
  plan_id: '7b0c7f4e-1f2a-4c3b-9d1e-2a3b4c5d6e7f',
  plan_name: 'Monthly',
  plan_price: '10.00',
  plan_currency: 'USD',
  plan_duration: '1 month',
  plan_price_formatted: '$10.00',
  plan_data: { plan_recurring: true, plan_one_time: false },
  plan_targets: [{ target_id: 't1' }, { target_id: 't2' }],
};

describe('the hosted product objects read for a move', () => {
  it('reads a plan with the ids of the targets it grants, and refuses one tenure could not hold', () => {
    expect(readPlan(plan)).toEqual({
      ok: true,
      value: {
        sourceId: plan.plan_id,
        targetIds: ['t1', 't2'],
        input: {
          plan_name: 'Monthly',
          plan_price: '10.00',
          plan_currency: 'USD',
          plan_duration: '1 month',
          plan_price_formatted: '$10.00',
          plan_data: { plan_recurring: true, plan_one_time: false },
        },
      },
    });
    expect(readPlan({ ...plan, plan_price: '10.999' })).toMatchObject({ ok: false, reason: expect.stringMatching(/plan_price 10.999/) });
    expect(readPlan({ ...plan, plan_duration: 'lifetime' })).toMatchObject({ ok: false, reason: expect.stringMatching(/plan_duration lifetime/) });
    expect(readPlan({ ...plan, plan_id: 'p-1' })).toMatchObject({ ok: false, reason: 'plan_id p-1 is not a UUID' });
  });

  it('puts every parent target before its children, whatever the order read', () => {
    const t = (id: string, parent: string | null) => ({ sourceId: id, sourceParentId: parent }) as SourceTarget;
    const ordered = parentsFirst([t('role', 'guild'), t('channel', null), t('guild', null), t('orphan', 'gone')]).map((x) => x.sourceId);
    expect(ordered).toEqual(['guild', 'role', 'channel', 'orphan']);
  });

  it('reads a target and a membership, refusing what tenure would not accept', () => {
    const target = { target_id: 't1', target_name: 'Club', platform: 'discord', kind: 'guild', external_id: '123456789012345678', is_enabled: false };
    expect(readTarget(target)).toMatchObject({ ok: true, value: { sourceId: 't1', input: { is_enabled: false, on_expiry: null } } });
    expect(readTarget({ ...target, platform: 'slack' })).toMatchObject({ ok: false });
    const m = { membership_id: 'm1', user_id: '42', plan_id: null, membership_end_date: '2030-01-02T03:04:05.678Z', user_name: { first_name: null, username: null } };
    expect(readMembership(m)).toMatchObject({ ok: true, value: { userId: '42', userName: null, subscriptionId: null } });
    expect(readMembership({ ...m, user_id: 'bob' })).toMatchObject({ ok: false, reason: 'user_id bob is not a string of digits' });
  });

  it('compares settings values whatever the order of their keys', () => {
    expect(canonical({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(canonical({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
    expect(canonical({ a: 1 })).not.toBe(canonical({ a: '1' }));
  });
});
