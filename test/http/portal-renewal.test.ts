import { describe, expect, it } from 'vitest';
import { cancelOnStripe } from '../support/fake-stripe-billing.js';
import { headingOf } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { deliverAll, membershipOf } from '../support/payments.js';
import { csrfOf, openPortal, paidMember, portalLink, textOf } from '../support/portal.js';
import { pathOf } from '../support/front-desk.js';

/** docs/portal.md, "Cancelling a renewal": in the portal or on Stripe, the same state; resumed; ended at the period's end. */
describe('the portal: cancelling and resuming a renewal', () => {
  const h = useHarness();

  it('cancels with a confirmation step: Stripe is told cancel_at_period_end, access stays until the end date, and the page says so', async () => {
    const m = await paidMember(h);
    const before = (await membershipOf(m.t, m.user))!;
    const { browser, page } = await openPortal(h, m.portalPath);
    expect(textOf(page.body)).toContain(`Renews on`);
    const confirmHref = new RegExp(`href="(${m.portalPath}/renewal/[0-9a-f-]{36}/cancel)"`).exec(page.body)![1]!;

    // The first step changes nothing; it asks.
    const confirm = await browser.get(confirmHref);
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(headingOf(confirm.body)).toBe('Cancel the renewal of Gold?');
    expect(h.stripe.world.subscriptions.get(m.subscriptionId!)!.cancel_at_period_end).toBe(false);

    const done = await browser.post(confirmHref, { _csrf: csrfOf(confirm.body)! });
    expect(done.statusCode, done.body).toBe(303);
    expect(done.headers.location).toBe(`${m.portalPath}?done=cancelled`);
    expect(h.stripe.world.subscriptions.get(m.subscriptionId!)!.cancel_at_period_end).toBe(true);
    const call = h.stripe.calls.find((c) => c.method === 'POST' && c.path === `/v1/subscriptions/${m.subscriptionId}`)!;
    expect(call.params).toStrictEqual({ cancel_at_period_end: 'true' });

    const after = await browser.get(String(done.headers.location));
    const text = textOf(after.body);
    expect(text).toContain('Your renewal is cancelled');
    expect(text).toMatch(/Cancelling: access until \d+ \w+ \d{4}/);
    expect(text).toMatch(/Ends on .*, not renewing/);
    expect(after.body).not.toContain('/cancel"');
    expect(after.body).toContain('/resume"');
    // Access is untouched: the same end date, still active.
    const now = (await membershipOf(m.t, m.user))!;
    expect(now).toMatchObject({ status: 'active', membership_end_date: before.membership_end_date, subscription_status: 'active' });
  });

  it('resumes the renewal while the period runs', async () => {
    const m = await paidMember(h);
    const { browser, page } = await openPortal(h, m.portalPath);
    const cancelHref = new RegExp(`href="(${m.portalPath}/renewal/[0-9a-f-]{36}/cancel)"`).exec(page.body)![1]!;
    await browser.post(cancelHref, { _csrf: csrfOf((await browser.get(cancelHref)).body)! });
    const cancelled = await browser.get(m.portalPath);
    const resumeHref = new RegExp(`href="(${m.portalPath}/renewal/[0-9a-f-]{36}/resume)"`).exec(cancelled.body)![1]!;
    const confirm = await browser.get(resumeHref);
    expect(headingOf(confirm.body)).toBe('Resume the renewal of Gold?');
    const done = await browser.post(resumeHref, { _csrf: csrfOf(confirm.body)! });
    expect(done.statusCode, done.body).toBe(303);
    expect(h.stripe.world.subscriptions.get(m.subscriptionId!)!.cancel_at_period_end).toBe(false);
    const text = textOf((await browser.get(String(done.headers.location))).body);
    expect(text).toContain('Your renewal is back on');
    expect(text).toContain('Renews on');
    expect(text).not.toContain('Cancelling');
  });

  it("reads the same when cancelled on Stripe's own billing portal, and ends at the period's end with no renewal after", async () => {
    const m = await paidMember(h);
    const receipts = await deliverAll(h, m.stripe, cancelOnStripe(h.stripe.world, m.subscriptionId!));
    expect(receipts[0]!.outcome).toBe('applied: subscription active');
    const { page } = await openPortal(h, m.portalPath);
    const text = textOf(page.body);
    expect(text).toMatch(/Cancelling: access until \d+ \w+ \d{4}/);
    expect(text).toMatch(/Ends on .*, not renewing/);
    expect(page.body).toContain('/resume"');

    // The period ends: Stripe deletes the subscription; the membership ends as usual.
    await deliverAll(h, m.stripe, h.stripe.world.cancel(m.subscriptionId!));
    expect(await membershipOf(m.t, m.user)).toMatchObject({ status: 'expired', subscription_status: 'canceled' });
    const ended = await openPortal(h, pathOf(await portalLink(m.t, m.user)));
    const endedText = textOf(ended.page.body);
    expect(endedText).toContain('Expired');
    expect(endedText).toMatch(/Ended on/);
    expect(ended.page.body).not.toContain('/renewal/');
  });

  it('a renewal cancelled in the portal is not undone by Stripe\'s own older event of the same change', async () => {
    const m = await paidMember(h);
    const { browser, page } = await openPortal(h, m.portalPath);
    const cancelHref = new RegExp(`href="(${m.portalPath}/renewal/[0-9a-f-]{36}/cancel)"`).exec(page.body)![1]!;
    await browser.post(cancelHref, { _csrf: csrfOf((await browser.get(cancelHref)).body)! });
    // Stripe's own event for the change the portal made arrives later, and says the same.
    const stripeOwn = m.stripe.account.events.filter((e) => e.type === 'customer.subscription.updated');
    await deliverAll(h, m.stripe, stripeOwn);
    expect(textOf((await browser.get(m.portalPath)).body)).toMatch(/Cancelling: access until/);
  });

  it('refuses a confirmation without its CSRF token (403) or from another browser (410), and tells Stripe nothing', async () => {
    const m = await paidMember(h);
    const { browser, page } = await openPortal(h, m.portalPath);
    const cancelHref = new RegExp(`href="(${m.portalPath}/renewal/[0-9a-f-]{36}/cancel)"`).exec(page.body)![1]!;
    const noToken = await browser.post(cancelHref, {});
    expect(noToken.statusCode).toBe(403);
    expect(headingOf(noToken.body)).toBe('Please try again');
    const wrongToken = await browser.post(cancelHref, { _csrf: 'not-the-token' });
    expect(wrongToken.statusCode).toBe(403);
    // The link's session is in the first browser's cookie: another browser, even with a token, is refused.
    const other = await openPortal(h, pathOf(await portalLink(m.t, m.user)));
    const stranger = await other.browser.post(cancelHref, { _csrf: other.csrf });
    expect(stranger.statusCode).toBe(410);
    expect(headingOf(stranger.body)).toBe('This link has been used');
    expect(h.stripe.calls.filter((c) => c.path === `/v1/subscriptions/${m.subscriptionId}`)).toStrictEqual([]);
    expect(h.stripe.world.subscriptions.get(m.subscriptionId!)!.cancel_at_period_end).toBe(false);
  });

  it('a failed renewal reads "in grace period" with what to do; the renewal can still be cancelled', async () => {
    const m = await paidMember(h);
    await deliverAll(h, m.stripe, h.stripe.world.failRenewal(m.subscriptionId!));
    const { page } = await openPortal(h, m.portalPath);
    const text = textOf(page.body);
    expect(text).toContain('In grace period');
    expect(text).toMatch(/The last payment failed: access is kept until .* Update your card in Manage billing\./);
    expect(page.body).toContain('/cancel"');
  });

  it('says Stripe could not be reached, changing nothing, when Stripe refuses the key', async () => {
    const m = await paidMember(h);
    const { browser, page } = await openPortal(h, m.portalPath);
    const cancelHref = new RegExp(`href="(${m.portalPath}/renewal/[0-9a-f-]{36}/cancel)"`).exec(page.body)![1]!;
    const confirm = await browser.get(cancelHref);
    // The merchant rolled their key on Stripe: the stored one is refused (401).
    m.stripe.account.secretKeys.clear();
    const res = await browser.post(cancelHref, { _csrf: csrfOf(confirm.body)! });
    expect(res.statusCode).toBe(503);
    expect(textOf(res.body)).toContain('Nothing was changed');
    expect(h.stripe.world.subscriptions.get(m.subscriptionId!)!.cancel_at_period_end).toBe(false);
    expect(textOf((await browser.get(m.portalPath)).body)).toContain('Renews on');
  });

  it('offers nothing to cancel on a one-time plan, and refuses a made-up membership', async () => {
    const m = await paidMember(h, { recurring: false });
    const { browser, page, csrf } = await openPortal(h, m.portalPath);
    expect(textOf(page.body)).toContain('One-time payment: ends on');
    expect(page.body).not.toContain('/renewal/');
    const made = (await membershipOf(m.t, m.user))!.membership_id;
    const res = await browser.post(`${m.portalPath}/renewal/${made}/cancel`, { _csrf: csrf });
    expect(res.statusCode).toBe(404);
    expect(headingOf(res.body)).toBe('Nothing to change here');
    const unknown = await browser.get(`${m.portalPath}/renewal/00000000-0000-4000-8000-000000000000/cancel`);
    expect(unknown.statusCode).toBe(404);
  });
});
