import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { eventRows, expectError, projectState } from '../support/api.js';
import { useHarness, type Harness, type Tenant } from '../support/harness.js';
import { checkoutStarted, deliver, deliverAll, membershipOf, merchantAccountsPath, pick, type ConnectedStripe } from '../support/payments.js';

/**
 * Stripe's events in, access out (docs/payments.md): events made by the fake Stripe's world as
 * Stripe would send them, signed with stripe-node's generateTestHeaderString, delivered to the real
 * app: memberships created, extended and ended with their events, each event id applied once,
 * in whatever order the events arrive.
 */

const DAY = 86_400_000;
const GRACE_DAYS = 3;


const endIn = (m: { membership_end_date: string } | undefined) => (Date.parse(m!.membership_end_date) - Date.now()) / DAY;
const typesOf = async (h: Harness, t: Tenant) => (await eventRows(h, t.projectId)).map((e) => e.type);



describe('POST /v2/stripe/events/{merchant_account_id}', () => {
  const h = useHarness({ env: { TENURE_PAYMENTS_GRACE_PERIOD: `${GRACE_DAYS}d` } });

  it('a paid one-time checkout creates the membership for the plan duration, with payment.succeeded and membership.created; a redelivery changes nothing', async () => {
    const { t, stripe, plan, user, session } = await checkoutStarted(h);
    const events = h.stripe.world.pay(session.session_id);
    const receipts = await deliverAll(h, stripe, events);
    expect(receipts.map((r) => [r.type, r.result])).toStrictEqual([['charge.succeeded', 'applied'], ['checkout.session.completed', 'applied']]);
    expect(receipts[1]!.outcome).toBe('applied: membership created');
    const m = await membershipOf(t, user);
    expect(m).toMatchObject({ plan_id: plan.plan_id, status: 'active', subscription_id: null, subscription_status: null });
    expect(endIn(m)).toBeGreaterThan(29.99);
    expect(endIn(m)).toBeLessThan(30.01);
    expect(await typesOf(h, t)).toStrictEqual(['plan.created', 'payment.succeeded', 'membership.created']);
    const payment = (await eventRows(h, t.projectId))[1]!.data as { payment: Record<string, unknown> };
    expect(payment.payment).toMatchObject({ user_id: user, plan_id: plan.plan_id, amount: '10.00', amount_minor: 1000, currency: 'USD', status: 'succeeded', checkout_session_id: session.session_id, payment_intent_id: expect.stringMatching(/^pi_/) });
    // Stripe redelivers (at least once): the same event id changes nothing.
    const before = await projectState(h, t.projectId);
    const again = await deliver(h, stripe, pick(events, 'checkout.session.completed'));
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ message: 'Event received already: nothing changed', data: { result: 'duplicate', outcome: null } });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('a subscription: invoice.paid and checkout.session.completed are one payment whatever their order; each renewal extends by the plan duration', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h, { recurring: true });
    const events = h.stripe.world.pay(session.session_id);
    // Out of order: the session's completion first, the invoice after.
    const receipts = await deliverAll(h, stripe, [pick(events, 'checkout.session.completed'), pick(events, 'invoice.paid')]);
    expect(receipts.map((r) => r.outcome)).toStrictEqual(['applied: membership created', 'recorded already: the payment was applied by another event']);
    const sub = (pick(events, 'checkout.session.completed').data.object as { subscription: string }).subscription;
    expect(await membershipOf(t, user)).toMatchObject({ subscription_id: sub, subscription_status: 'active', status: 'active' });
    expect(endIn(await membershipOf(t, user))).toBeGreaterThan(29.99);
    const renewal = await deliverAll(h, stripe, h.stripe.world.renew(sub));
    expect(renewal.at(-1)!.outcome).toBe('applied: membership extended by the plan duration');
    expect(endIn(await membershipOf(t, user))).toBeGreaterThan(59.99);
    expect((await typesOf(h, t)).filter((x) => x.startsWith('payment.') || x.startsWith('membership.'))).toStrictEqual([
      'payment.succeeded',
      'membership.created',
      'payment.succeeded',
      'membership.extended',
    ]);
  });

  it('a refund after a renewal ends the membership at once: payment.refunded and membership.expired', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h, { recurring: true });
    const first = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, first);
    const sub = (pick(first, 'checkout.session.completed').data.object as { subscription: string }).subscription;
    const renewal = h.stripe.world.renew(sub);
    await deliverAll(h, stripe, renewal);
    const pi = (pick(renewal, 'charge.succeeded').data.object as { payment_intent: string }).payment_intent;
    const [refund] = await deliverAll(h, stripe, h.stripe.world.refund(pi));
    expect(refund!.outcome).toBe('applied: payment refunded, membership ended');
    const m = await membershipOf(t, user);
    expect(m!.status).toBe('expired');
    expect(endIn(m)).toBeLessThanOrEqual(0);
    expect((await typesOf(h, t)).slice(-2)).toStrictEqual(['payment.refunded', 'membership.expired']);
  });

  it('a dispute ends the membership at once', async () => {
    const { t, stripe, user, session } = await checkoutStarted(h);
    const events = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, events);
    const pi = (pick(events, 'checkout.session.completed').data.object as { payment_intent: string }).payment_intent;
    const [dispute] = await deliverAll(h, stripe, h.stripe.world.dispute(pi));
    expect(dispute!.outcome).toBe('applied: payment disputed, membership ended');
    expect((await membershipOf(t, user))!.status).toBe('expired');
    expect((await typesOf(h, t)).slice(-2)).toStrictEqual(['payment.disputed', 'membership.expired']);
  });

  /** A subscriber whose paid-through date passes (as if 30 days went by), then whose renewal fails: its events delivered. */
  async function renewalFailed() {
    const { t, stripe, user, session } = await checkoutStarted(h, { recurring: true });
    const first = h.stripe.world.pay(session.session_id);
    await deliverAll(h, stripe, first);
    const sub = (pick(first, 'checkout.session.completed').data.object as { subscription: string }).subscription;
    await h.database.db.execute(sql`UPDATE memberships SET end_date = now() + interval '1 hour' WHERE subscription_id = ${sub}`);
    const failed = h.stripe.world.failRenewal(sub);
    const receipts = await deliverAll(h, stripe, failed);
    return { t, stripe, user, sub, failed, receipts };
  }

  it('past_due keeps access through the grace period; the subscription deleted ends it; a stale update after that changes nothing', async () => {
    const { t, stripe, user, sub, failed, receipts } = await renewalFailed();
    expect(receipts.map((r) => r.outcome)).toStrictEqual(['applied: payment failed recorded', 'applied: subscription past_due, access kept for the grace period']);
    const kept = await membershipOf(t, user);
    expect(kept).toMatchObject({ subscription_status: 'past_due', status: 'active' });
    expect(endIn(kept)).toBeGreaterThan(GRACE_DAYS - 0.01);
    expect(endIn(kept)).toBeLessThan(GRACE_DAYS + 0.01);
    expect((await typesOf(h, t)).slice(-2)).toStrictEqual(['payment.failed', 'membership.extended']);
    // Stripe gives up: the subscription is deleted, access ends now.
    const stale = { ...pick(failed, 'customer.subscription.updated'), id: `evt_stale_${Date.now()}` };
    h.stripe.world.now = () => Math.floor(Date.now() / 1000) + 60;
    const [deleted] = await deliverAll(h, stripe, h.stripe.world.cancel(sub));
    h.stripe.world.now = () => Math.floor(Date.now() / 1000);
    expect(deleted!.outcome).toBe('applied: subscription canceled, membership ended');
    expect(await membershipOf(t, user)).toMatchObject({ subscription_status: 'canceled', status: 'expired' });
    // An update older than the deletion, arriving after it (another id), changes nothing.
    const before = await projectState(h, t.projectId);
    const [late] = await deliverAll(h, stripe, [stale]);
    expect(late!.outcome).toMatch(/^ignored: no membership holds subscription .* or a later event set its status$/);
    const after = await projectState(h, t.projectId);
    expect(after.memberships).toStrictEqual(before.memberships);
    expect(after.events).toStrictEqual(before.events);
  });

  it('a failed renewal paid on Stripe\u2019s retry (the same invoice) becomes the payment and extends the membership', async () => {
    const { t, stripe, user, sub, failed } = await renewalFailed();
    const invoiceId = (pick(failed, 'invoice.payment_failed').data.object as { id: string }).id;
    const retried = h.stripe.world.renew(sub);
    expect((pick(retried, 'invoice.paid').data.object as { id: string }).id).toBe(invoiceId);
    const receipts = await deliverAll(h, stripe, retried);
    expect(receipts.map((r) => r.outcome)).toContain('applied: membership extended by the plan duration');
    const m = await membershipOf(t, user);
    expect(m).toMatchObject({ subscription_status: 'active', status: 'active' });
    // Paid through the grace period's end, plus the plan's 30 days.
    expect(endIn(m)).toBeGreaterThan(GRACE_DAYS + 30 - 0.01);
    const payments = await h.database.db.execute(sql`SELECT status FROM payments WHERE project_id = ${t.projectId} AND invoice_id = ${invoiceId}`);
    expect((payments as unknown as { rows: { status: string }[] }).rows).toStrictEqual([{ status: 'succeeded' }]);
    expect((await typesOf(h, t)).filter((type) => type === 'payment.succeeded')).toHaveLength(2);
    // Delivered again, the retry's events change nothing.
    const again = await deliverAll(h, stripe, retried);
    expect(again.map((r) => r.result)).toStrictEqual(again.map(() => 'duplicate'));
    expect(endIn(await membershipOf(t, user))).toBeCloseTo(endIn(m), 3);
  });

  it('refuses a bad or missing signature (400), an account without a webhook secret (409), an unknown account (404), changing nothing', async () => {
    const { t, stripe, session } = await checkoutStarted(h);
    const [, completed] = h.stripe.world.pay(session.session_id);
    const before = await projectState(h, t.projectId);
    const path = stripe.view.webhook_path;
    const wrong = await deliver(h, stripe, completed!, { secret: 'whsec_someoneelse' });
    expectError(wrong, { status: 400, code: 'BAD_REQUEST', method: 'POST', path, message: expect.stringContaining('does not sign this body') });
    const unsigned = await h.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(completed) });
    expectError(unsigned, { status: 400, code: 'BAD_REQUEST', method: 'POST', path, message: 'The Stripe-Signature header is missing' });
    // A signed body altered after signing.
    const tampered = await h.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(completed), secret: stripe.webhookSecret }) },
      payload: JSON.stringify({ ...completed, id: 'evt_other' }),
    });
    expect(tampered.statusCode, tampered.body).toBe(400);
    const unknown = { ...stripe, view: { ...stripe.view, webhook_path: '/v2/stripe/events/00000000-0000-4000-8000-000000000000' } };
    expectError(await deliver(h, unknown, completed!), { status: 404, code: 'NOT_FOUND', method: 'POST', path: unknown.view.webhook_path, message: 'Merchant account not found' });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    // Without a stored signing secret the account cannot check anything.
    const t2 = await h.tenant();
    const { secretKey } = h.stripe.world.addAccount();
    const bare = (await t2.request({ method: 'POST', url: merchantAccountsPath(t2), payload: { provider: 'stripe', environment: 'sandbox', secret_key: secretKey } })).json().data;
    const res = await deliver(h, { view: bare, webhookSecret: stripe.webhookSecret } as ConnectedStripe, completed!);
    expectError(res, { status: 409, code: 'CONFLICT', method: 'POST', path: bare.webhook_path, message: expect.stringContaining('has no webhook_secret') });
  });

  it('ignores (once) events tenure does not act on, other projects\' checkouts, and events of the other mode', async () => {
    const { t, stripe, session } = await checkoutStarted(h);
    const events = h.stripe.world.pay(session.session_id);
    const completed = pick(events, 'checkout.session.completed');
    const foreign = { ...completed, id: 'evt_foreign1', data: { object: { ...completed.data.object, metadata: { project_id: '00000000-0000-4000-8000-000000000000', plan_id: 'x', user_id: '1' } } } };
    const live = { ...completed, id: 'evt_livemode1', livemode: true };
    const before = await projectState(h, t.projectId);
    const receipts = await deliverAll(h, stripe, [pick(events, 'charge.succeeded'), foreign, live]);
    expect(receipts.map((r) => r.outcome)).toStrictEqual([
      'ignored: tenure does not act on charge.succeeded',
      'ignored: the payment names no member of this project',
      'ignored: a live-mode event for a sandbox account',
    ]);
    const after = await projectState(h, t.projectId);
    expect(after.memberships).toStrictEqual(before.memberships);
    expect(after.events).toStrictEqual(before.events);
  });
});
