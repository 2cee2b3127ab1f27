import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { headingOf, pathOf, payLinksPath } from '../support/front-desk.js';
import { userId, useHarness, type Harness, type Tenant } from '../support/harness.js';
import { CHECKOUT_URLS, checkoutPath, connectStripe, deliverAll } from '../support/payments.js';
import { Browser, csrfOf } from '../support/portal.js';

/**
 * Settings that act at checkout (docs/api-keys-settings-users.md, "Settings"):
 * `collect_email_on_subscribe` keeps the e-mail Stripe Checkout collected on the user, and
 * `policies` puts the terms, the privacy policy and a minimum-age confirmation before a pay link's
 * payment, the buyer's confirmation recorded before any session is made.
 */

const setSettings = async (t: Tenant, payload: object) => expect((await t.request({ method: 'PATCH', url: `${t.base}/settings`, payload })).statusCode).toBe(204);
const sessionPosts = (h: Harness) => h.stripe.calls.filter((c) => c.method === 'POST' && c.path === '/v1/checkout/sessions').length;

async function userView(t: Tenant, user: string) {
  const res = await t.request({ method: 'GET', url: `${t.base}/users/${user}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Record<string, unknown>;
}

describe('collect_email_on_subscribe', () => {
  const h = useHarness();

  it('on: the session makes a customer and carries collect_email; the e-mail Checkout collected is kept on the user, the latest one', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    await setSettings(t, { collect_email_on_subscribe: true });
    const plan = await createPlan(t, { plan_price: '10', plan_duration: '30 days' });
    const user = userId();
    const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: user, ...CHECKOUT_URLS } });
    expect(res.statusCode, res.body).toBe(200);
    const session = h.stripe.world.session(res.json().data.session_id);
    expect(session.params).toMatchObject({ customer_creation: 'always', metadata: { collect_email: 'true' } });
    await deliverAll(h, stripe, h.stripe.world.pay(session.id, { email: 'ada@example.com' }));
    expect(await userView(t, user)).toMatchObject({ user_id: user, email: 'ada@example.com' });
  });

  it('off (the default): nothing is asked of Stripe beyond the usual, and no e-mail is kept', async () => {
    const t = await h.tenant();
    const stripe = await connectStripe(h, t);
    const plan = await createPlan(t, { plan_price: '10', plan_duration: '30 days' });
    const user = userId();
    const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: plan.plan_id, user_id: user, ...CHECKOUT_URLS } });
    const session = h.stripe.world.session(res.json().data.session_id);
    expect(session.params.customer_creation).toBeUndefined();
    expect((session.params.metadata as Record<string, string>).collect_email).toBeUndefined();
    await deliverAll(h, stripe, h.stripe.world.pay(session.id, { email: 'ada@example.com' }));
    expect('email' in (await userView(t, user))).toBe(false);
  });
});

describe('policies before payment on a pay link', () => {
  const h = useHarness();

  async function linkFor(t: Tenant) {
    const plan = await createPlan(t, { plan_name: 'Gold', plan_price: '10', plan_duration: '30 days' });
    const user = userId();
    const res = await t.request({ method: 'POST', url: payLinksPath(t), payload: { plan_id: plan.plan_id, user_id: user } });
    expect(res.statusCode, res.body).toBe(200);
    return { user, path: pathOf(res.json().data.url as string) };
  }

  const POLICIES = { terms: { type: 'url', value: 'https://club.example.com/terms' }, privacy: { type: 'url', value: 'https://club.example.com/privacy' }, minimum_age: 18 };

  it('shows the terms, the privacy policy and the minimum age with one checkbox; no session until the buyer confirms; then recorded, and on to Stripe', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    await setSettings(t, { policies: POLICIES });
    const { user, path } = await linkFor(t);
    const browser = new Browser(h);
    const before = sessionPosts(h);
    const page = await browser.get(path);
    expect(page.statusCode, page.body).toBe(200);
    expect(headingOf(page.body)).toBe('Before you pay');
    expect(page.body).toContain('href="https://club.example.com/terms"');
    expect(page.body).toContain('href="https://club.example.com/privacy"');
    expect(page.body).toContain('<label for="confirm">I am at least 18 years old and I accept the terms of service and the privacy policy.</label>');
    expect(page.body).toMatch(/<input type="checkbox" id="confirm" name="confirm" value="yes" required/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(sessionPosts(h)).toBe(before);
    // The box left unticked: the page again, saying so; nothing recorded, no session.
    const state = await projectState(h, t.projectId);
    const unticked = await browser.post(path, { _csrf: csrfOf(page.body)! });
    expect(unticked.statusCode, unticked.body).toBe(422);
    expect(unticked.body).toContain('role="alert"');
    expect(await projectState(h, t.projectId)).toStrictEqual(state);
    // Without the page's CSRF token: refused, nothing recorded.
    const forged = await new Browser(h).post(path, { confirm: 'yes' });
    expect(forged.statusCode).toBe(403);
    expect(await projectState(h, t.projectId)).toStrictEqual(state);
    expect(sessionPosts(h)).toBe(before);
    // Ticked: recorded, then the session, and Stripe.
    const ok = await browser.post(path, { _csrf: csrfOf(unticked.body)!, confirm: 'yes' });
    expect(ok.statusCode, ok.body).toBe(303);
    expect(ok.headers.location).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    expect(sessionPosts(h)).toBe(before + 1);
    const rows = rowsOf<Record<string, unknown>>(
      await h.database.db.execute(sql`SELECT user_id, terms_url, privacy_url, minimum_age FROM policy_confirmations WHERE project_id = ${t.projectId}`),
    );
    expect(rows).toStrictEqual([{ user_id: user, terms_url: 'https://club.example.com/terms', privacy_url: 'https://club.example.com/privacy', minimum_age: 18 }]);
    // Confirmed once for the link: opening it again goes straight to the same session.
    const again = await browser.get(path);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(ok.headers.location);
  });

  it('a minimum age alone asks only for it; a project without policies goes straight to Stripe', async () => {
    const t = await h.tenant();
    await connectStripe(h, t);
    await setSettings(t, { policies: { minimum_age: 16 } });
    const { path } = await linkFor(t);
    const page = await new Browser(h).get(path);
    expect(page.body).toContain('<label for="confirm">I am at least 16 years old.</label>');
    expect(page.body).not.toContain('Terms of service');

    const plain = await h.tenant();
    await connectStripe(h, plain);
    const direct = await new Browser(h).get((await linkFor(plain)).path);
    expect(direct.statusCode).toBe(303);
  });
});
