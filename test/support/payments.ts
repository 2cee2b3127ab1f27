import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import Stripe from 'stripe';
import { expect } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createPlan } from './catalogue.js';
import type { Account, StripeEvent } from './fake-stripe-model.js';
import { userId, type Harness, type Tenant } from './harness.js';

/** Payments test helpers: merchant accounts on the harness's fake Stripe (test/support/fake-stripe.ts). */

export const merchantAccountsPath = (t: Tenant) => `${t.base}/merchant-accounts`;

/** A fresh webhook signing secret, shaped as Stripe shows them. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export interface ConnectedStripe {
  /** The answer's `data`. */
  view: { merchant_account_id: string; webhook_path: string } & Record<string, unknown>;
  account: Account;
  secretKey: string;
  webhookSecret: string;
}

/** A Stripe account on the fake, connected to `t`'s project with a webhook secret; asserts the 201 (or 200 on a replacement). */
export async function connectStripe(h: Harness, t: Tenant, o: { environment?: 'sandbox' | 'production' } = {}): Promise<ConnectedStripe> {
  const environment = o.environment ?? 'sandbox';
  const { account, secretKey } = h.stripe.world.addAccount({ livemode: environment === 'production' });
  const webhookSecret = newWebhookSecret();
  const res = await t.request({
    method: 'POST',
    url: merchantAccountsPath(t),
    payload: { provider: 'stripe', environment, secret_key: secretKey, webhook_secret: webhookSecret },
  });
  expect([200, 201], res.body).toContain(res.statusCode);
  return { view: res.json().data, account, secretKey, webhookSecret };
}

export interface MerchantAccountRow {
  id: string;
  project_id: string;
  environment: string;
  secret_key_sealed: string;
  webhook_secret_sealed: string | null;
  provider_account_id: string;
}

export async function merchantAccountRows(h: Harness, projectId: string): Promise<MerchantAccountRow[]> {
  return rowsOf<MerchantAccountRow>(await h.database.db.execute(sql`SELECT * FROM merchant_accounts WHERE project_id = ${projectId} ORDER BY created_at, id`));
}

export const checkoutPath = (t: Tenant) => `${t.base}/checkout`;

export const CHECKOUT_URLS = { success_url: 'https://shop.example.com/thanks', cancel_url: 'https://shop.example.com/cancel' };

/** A checkout of `planId` for `user` that must succeed; the answer's `data`. */
export async function checkout(t: Tenant, planId: string, user: string): Promise<{ session_id: string; checkout_url: string; mode: string; merchant_account_id: string }> {
  const res = await t.request({ method: 'POST', url: checkoutPath(t), payload: { plan_id: planId, user_id: user, ...CHECKOUT_URLS } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Delivers `event` to the account's webhook path as Stripe does, signed by stripe-node's own test helper. */
export async function deliver(h: Harness, connected: Pick<ConnectedStripe, 'view' | 'webhookSecret'>, event: StripeEvent, o: { secret?: string } = {}) {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: o.secret ?? connected.webhookSecret });
  return h.app.inject({
    method: 'POST',
    url: connected.view.webhook_path,
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    payload,
  });
}

/** Delivers each event in turn, each answered 200; their receipts. */
export async function deliverAll(h: Harness, connected: Pick<ConnectedStripe, 'view' | 'webhookSecret'>, events: StripeEvent[]) {
  const receipts = [];
  for (const event of events) {
    const res = await deliver(h, connected, event);
    expect(res.statusCode, res.body).toBe(200);
    receipts.push(res.json().data as { event_id: string; type: string; result: string; outcome: string | null });
  }
  return receipts;
}

/**
 * What the Stripe events suites start from: Stripe connected to a fresh project, a plan of 10 for
 * 30 days (a subscription with `recurring`, else one-time), a user, and their checkout session.
 */
export async function checkoutStarted(h: Harness, o: { recurring?: boolean } = {}) {
  const t = await h.tenant();
  const stripe = await connectStripe(h, t);
  const plan = await createPlan(t, { plan_price: '10', plan_duration: '30 days', plan_data: { plan_recurring: o.recurring ?? false, plan_one_time: !o.recurring } });
  const user = userId();
  const session = await checkout(t, plan.plan_id, user);
  return { t, stripe, plan, user, session };
}

/** The event of `type` among `events`. */
export const pick = (events: StripeEvent[], type: string) => events.find((e) => e.type === type)!;

/** `user`'s membership as the API lists it, if they have one. */
export async function membershipOf(t: Tenant, user: string) {
  const res = await t.request({ method: 'GET', url: `${t.base}/memberships?user_id=${user}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data[0] as
    | { membership_id: string; membership_end_date: string; subscription_id: string | null; subscription_status: string | null; status: string; plan_id: string }
    | undefined;
}
