import { describe, expect, it } from 'vitest';
import { useHarness, userId, type Tenant } from '../support/harness.js';
import { CHECKOUT_URLS, checkout, checkoutPath, deliverAll } from '../support/payments.js';
import { csrfOf, openPortal, paidMember, portalLink } from '../support/portal.js';
import { pathOf } from '../support/front-desk.js';

/** docs/portal.md, "Invoicing details": a checkout of a member with details is for a Stripe customer carrying them. */
describe('invoicing details at checkout', () => {
  const h = useHarness();
  /** What tenure sent Stripe to make the session. */
  const sent = (sessionId: string) => h.stripe.world.session(sessionId).params;
  /** Another checkout of the member's (another success URL: another session). */
  const checkoutAgain = async (t: Tenant, planId: string, user: string, successUrl: string) => {
    const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: planId, user_id: user, ...CHECKOUT_URLS, success_url: successUrl } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { session_id: string };
  };

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

  it('on a first checkout creates one customer carrying the details, which the next checkouts and the payment keep', async () => {
    const m = await paidMember(h, { recurring: false });
    const newcomer = userId();
    const patch = await m.t.request({ method: 'PATCH', url: `${m.t.base}/users/${newcomer}/invoicing`, payload: { name: 'Grace Hopper', company: 'Navy Labs', vat_id: 'DE123456789', address: { line1: '2 Side St', city: 'Berlin', country: 'DE' } } });
    expect(patch.statusCode, patch.body).toBe(200);
    const from = h.stripe.calls.length;
    const created = () => h.stripe.calls.slice(from).filter((c) => c.method === 'POST' && c.path === '/v1/customers');
    const first = await checkout(m.t, m.plan.plan_id, newcomer);
    const customer = h.stripe.world.session(first.session_id).customer!;
    expect(sent(first.session_id)).toMatchObject({ customer });
    expect(h.stripe.customers.get(customer)).toMatchObject({
      name: 'Grace Hopper',
      business_name: 'Navy Labs',
      address: { line1: '2 Side St', line2: null, city: 'Berlin', postal_code: null, country: 'DE' },
      invoice_settings: { custom_fields: [{ name: 'VAT ID', value: 'DE123456789' }] },
      metadata: { project_id: m.t.projectId, user_id: newcomer },
    });
    // Started again before paying: Stripe answers the same key with the same customer.
    const second = await checkoutAgain(m.t, m.plan.plan_id, newcomer, 'https://shop.example.com/again');
    expect(h.stripe.world.session(second.session_id).customer).toBe(customer);
    expect(new Set(created().map((c) => c.idempotencyKey)).size).toBe(1);
    expect([...h.stripe.customers.values()].filter((c) => c.metadata.user_id === newcomer)).toHaveLength(1);
    await deliverAll(h, m.stripe, h.stripe.world.pay(second.session_id));
    const payments = (await m.t.request({ method: 'GET', url: `${m.t.base}/payments?user_id=${newcomer}` })).json().data as { customer_id: string }[];
    expect(payments.map((p) => p.customer_id)).toStrictEqual([customer]);
    // Paid, the customer is the member's on this account: the next checkout updates it, creating none.
    const before = created().length;
    const third = await checkoutAgain(m.t, m.plan.plan_id, newcomer, 'https://shop.example.com/third');
    expect(sent(third.session_id)).toMatchObject({ customer });
    expect(created()).toHaveLength(before);
  });

  it('remembers the customer it made: a checkout started again after the details changed, and Manage billing, use it', async () => {
    const m = await paidMember(h, { recurring: false });
    const newcomer = userId();
    const patch = (payload: Record<string, unknown>) => m.t.request({ method: 'PATCH', url: `${m.t.base}/users/${newcomer}/invoicing`, payload });
    expect((await patch({ name: 'Grace Hopper', address: { line1: '2 Side St', city: 'Berlin', country: 'DE' } })).statusCode).toBe(200);
    const from = h.stripe.calls.length;
    const created = () => h.stripe.calls.slice(from).filter((c) => c.method === 'POST' && c.path === '/v1/customers');
    const first = await checkout(m.t, m.plan.plan_id, newcomer);
    const customer = h.stripe.world.session(first.session_id).customer!;
    expect(customer).toMatch(/^cus_/);
    // Other details make another creation key: without the remembered customer this made a second one.
    const changed = await patch({ name: 'Grace B. Hopper', company: 'Navy Labs', vat_id: 'DE123456789' });
    expect(changed.statusCode, changed.body).toBe(200);
    const second = await checkoutAgain(m.t, m.plan.plan_id, newcomer, 'https://shop.example.com/again');
    expect(sent(second.session_id)).toMatchObject({ customer });
    expect(created()).toHaveLength(1);
    expect([...h.stripe.customers.values()].filter((c) => c.metadata.user_id === newcomer)).toHaveLength(1);
    expect(h.stripe.customers.get(customer)).toMatchObject({ name: 'Grace B. Hopper', business_name: 'Navy Labs', invoice_settings: { custom_fields: [{ name: 'VAT ID', value: 'DE123456789' }] } });
    // Before any payment, Manage billing opens Stripe's page for that same customer.
    const portalPath = pathOf(await portalLink(m.t, newcomer));
    const { browser, page } = await openPortal(h, portalPath);
    expect(page.body).toContain('Manage billing');
    const billing = await browser.post(`${portalPath}/billing`, { _csrf: csrfOf(page.body)! });
    expect(billing.statusCode, billing.body).toBe(303);
    const portalSession = h.stripe.calls.slice(from).filter((c) => c.path === '/v1/billing_portal/sessions').at(-1);
    expect(portalSession?.params).toMatchObject({ customer });
    expect(created()).toHaveLength(1);
  });

  it('creates no customer up front for a member without details', async () => {
    const m = await paidMember(h, { recurring: false });
    const newcomer = userId();
    // The fake Stripe is the file's: only the calls from here on are this test's.
    const from = h.stripe.calls.length;
    for (const user of [m.user, newcomer]) {
      const plain = await checkout(m.t, m.plan.plan_id, user);
      expect(sent(plain.session_id)).not.toHaveProperty('customer');
    }
    expect(h.stripe.calls.slice(from).filter((c) => c.path === '/v1/customers')).toStrictEqual([]);
  });
});
