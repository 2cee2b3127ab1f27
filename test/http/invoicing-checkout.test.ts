import { describe, expect, it } from 'vitest';
import { useHarness, userId } from '../support/harness.js';
import { checkout, deliverAll } from '../support/payments.js';
import { paidMember } from '../support/portal.js';

/** docs/portal.md, "Invoicing details": a checkout of a member with details and a Stripe customer is that customer's, with the details. */
describe('invoicing details at checkout', () => {
  const h = useHarness();
  /** What tenure sent Stripe to make the session. */
  const sent = (sessionId: string) => h.stripe.world.session(sessionId).params;

  it('updates the customer with the details, makes the session for them, and their next payment is theirs', async () => {
    const m = await paidMember(h, { recurring: false });
    const customer = h.stripe.world.session(m.sessionId).customer!;
    const patch = await m.t.request({ method: 'PATCH', url: `${m.t.base}/users/${m.user}/invoicing`, payload: { name: 'Ada Lovelace', company: 'Engines Ltd', vat_id: 'GB123456789', address: { line1: '1 Main St', city: 'London', country: 'GB' } } });
    expect(patch.statusCode, patch.body).toBe(200);
    const again = await checkout(m.t, m.plan.plan_id, m.user);
    expect(h.stripe.world.session(again.session_id).customer).toBe(customer);
    expect(sent(again.session_id)).toMatchObject({ customer });
    expect(h.stripe.customers.get(customer)).toMatchObject({
      name: 'Ada Lovelace',
      business_name: 'Engines Ltd',
      address: { line1: '1 Main St', city: 'London', country: 'GB' },
      invoice_settings: { custom_fields: [{ name: 'VAT ID', value: 'GB123456789' }] },
    });
    await deliverAll(h, m.stripe, h.stripe.world.pay(again.session_id));
    const payments = (await m.t.request({ method: 'GET', url: `${m.t.base}/payments?user_id=${m.user}` })).json().data as { customer_id: string }[];
    expect(payments.map((p) => p.customer_id)).toStrictEqual([customer, customer]);
  });

  it('names no customer for a member without details, or without a customer yet', async () => {
    const m = await paidMember(h, { recurring: false });
    const plain = await checkout(m.t, m.plan.plan_id, m.user);
    expect(sent(plain.session_id)).not.toHaveProperty('customer');
    const newcomer = userId();
    await m.t.request({ method: 'PATCH', url: `${m.t.base}/users/${newcomer}/invoicing`, payload: { name: 'Grace Hopper' } });
    const first = await checkout(m.t, m.plan.plan_id, newcomer);
    expect(sent(first.session_id)).not.toHaveProperty('customer');
  });
});
