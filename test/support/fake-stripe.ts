import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { billingRoutes, type Customer } from './fake-stripe-billing.js';
import { discountOn, stripeId, StripeWorld, type Account, type Coupon, type Session } from './fake-stripe-model.js';

/**
 * A local fake of the Stripe API (node:http on 127.0.0.1, port 0) for the calls tenure makes: the
 * oracle of every payments test. Written from Stripe's API reference (https://docs.stripe.com/api,
 * "docs" below), not from what tenure happens to send.
 *
 * - Authentication (docs: Authentication): `Authorization: Bearer <secret key>` (or HTTP Basic with
 *   the key as user name). No key → 401 "You did not provide an API key…"; an unknown one → 401
 *   "Invalid API Key provided: sk_test_****abcd" (the key masked but its last four), type
 *   `invalid_request_error`.
 * - Errors (docs: Errors): `{error: {type, code?, param?, message}}`; a missing parameter is 400
 *   `parameter_missing`, a bad value 400 `parameter_invalid_*`, an unknown object 404
 *   `resource_missing`, an unknown path 404.
 * - Bodies (docs: "form-encoded request bodies"): `application/x-www-form-urlencoded`, nested
 *   fields as `a[b][0][c]=v`; GET parameters in the query string alike. Answers are JSON.
 * - Idempotency (docs: Idempotent requests): a POST's `Idempotency-Key` (up to 255 characters)
 *   saves the first answer, replayed to a retry with the same key, with `Idempotent-Replayed:
 *   true`; the same key with other parameters or another endpoint → 400 `idempotency_error`.
 *   Keys are per account and kept for the fake's life (Stripe: at least 24 hours).
 * - Endpoints: `GET /v1/account`; `POST /v1/checkout/sessions` (mode payment | subscription;
 *   success_url; line_items with price_data: currency, unit_amount, product_data.name, and for a
 *   subscription recurring.interval / interval_count; metadata up to 50 keys of 40 characters,
 *   values of 500; subscription_data.metadata and subscription_data.trial_period_days (1-730,
 *   subscription mode only); customer_creation (payment mode only, not with customer);
 *   client_reference_id up to 200 characters;
 *   discounts: at most one, `[{coupon}]` of an existing valid coupon (404-style 400
 *   `resource_missing` "No such coupon" otherwise), an `amount_off` coupon in the session's
 *   currency, not with allow_promotion_codes);
 *   `POST /v1/coupons` (id optional and unique per account: a taken one is 400
 *   `resource_already_exists`; exactly one of percent_off (0 < p <= 100) or amount_off (a positive
 *   integer, with currency); duration once (default) | forever | repeating, duration_in_months for
 *   repeating only; name up to 40 characters; max_redemptions; redeem_by; metadata);
 *   `GET /v1/coupons/{id}`;
 *   `GET /v1/checkout/sessions/{id}`; `GET /v1/events` (newest first; limit 1-100, default 10;
 *   starting_after; created[gte|gt|lte|lt]; types[]; `{object: 'list', data, has_more, url}`);
 *   `POST /v1/billing_portal/sessions` (docs: Customer Portal, "Create a portal session"):
 *   `customer` (an existing customer of the account: one its payments made or it created) is required here (the other way to name one, customer_account, is for Connect accounts
 *   and not modelled), `return_url` optional and a URL; answers a `billing_portal.session`
 *   (`bps_…`, configuration `bpc_…`, created, customer, flow null, livemode, locale null,
 *   on_behalf_of null, return_url or null, and its `url` on billing.stripe.com);
 *   `POST /v1/subscriptions/{id}`, `POST /v1/customers` and `POST /v1/customers/{id}`: fake-stripe-billing.ts. A session may
 *   name an existing `customer` of the account (else 400 `resource_missing`); its payment is then theirs.
 */

export interface FakeStripe {
  /** `http://127.0.0.1:<port>`, for TENURE_STRIPE_API_URL. */
  url: string;
  world: StripeWorld;
  /** The customers created or updated (`POST /v1/customers[/{id}]`, fake-stripe-billing.ts), by id. */
  customers: Map<string, Customer>;
  /** The customer portal sessions made, in order. */
  portalSessions: { id: string; customer: string; return_url: string | null; url: string }[];
  /** Every request, in order. */
  calls: { method: string; path: string; key: string | null; idempotencyKey: string | null; status: number; params: Record<string, unknown> }[];
  /** Delays every answer by `ms` from now on (0: at once), as a slow Stripe would. */
  setLatency(ms: number): void;
  close(): Promise<void>;
}

type Answer = { status: number; body: unknown };

const fail = (status: number, type: string, message: string, extra: { code?: string; param?: string } = {}): Answer => ({
  status,
  body: { error: { type, ...extra, message } },
});
const missing = (param: string) => fail(400, 'invalid_request_error', `Missing required param: ${param}.`, { code: 'parameter_missing', param });
const invalid = (param: string, message: string, code = 'parameter_invalid_string') => fail(400, 'invalid_request_error', message, { code, param });

/** `a[b][0][c]=v` pairs into nested objects; an object whose keys are all indices becomes an array. */
export function parseForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    // `a[]=x&a[]=y` appends, as `a[0]=x&a[1]=y` does (stripe-node sends the indexed form).
    const append = key.endsWith('[]');
    const parts = (append ? key.slice(0, -2) : key).split(/\[|\]\[|\]/).filter((p, i) => i === 0 || p !== '');
    let at: Record<string, unknown> = root;
    parts.forEach((part, i) => {
      if (i < parts.length - 1) at = (at[part] ??= {}) as Record<string, unknown>;
      else if (!append) at[part] = value;
      else {
        const list = (at[part] ??= {}) as Record<string, unknown>;
        list[String(Object.keys(list).length)] = value;
      }
    });
  }
  return arrays(root) as Record<string, unknown>;
}

function arrays(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  const entries = Object.entries(v).map(([k, c]) => [k, arrays(c)] as const);
  if (entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k))) return entries.sort((a, b) => Number(a[0]) - Number(b[0])).map(([, c]) => c);
  return Object.fromEntries(entries);
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const world = new StripeWorld();
  const calls: FakeStripe['calls'] = [];
  let latencyMs = 0;
  const timers = new Set<NodeJS.Timeout>();
  const saved = new Map<string, { fingerprint: string; answer: Answer }>();
  const portalSessions: FakeStripe['portalSessions'] = [];
  // Subscription and customer updates live in a file of their own (this one is long enough).
  const billing = billingRoutes(world);

  function keyOf(req: IncomingMessage): string | null {
    const header = req.headers.authorization ?? '';
    const bearer = /^Bearer (.+)$/i.exec(header);
    if (bearer) return bearer[1]!.trim();
    const basic = /^Basic (.+)$/i.exec(header);
    if (basic) return Buffer.from(basic[1]!, 'base64').toString().split(':')[0] ?? null;
    return null;
  }

  function route(method: string, path: string, account: Account, params: Record<string, unknown>): Answer {
    if (method === 'GET' && path === '/v1/account') {
      return { status: 200, body: { id: account.id, object: 'account', business_profile: { name: account.name }, settings: { dashboard: { display_name: account.name } }, charges_enabled: true } };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') return createSession(account, params);
    const session = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === 'GET' && session) {
      const s = world.sessions.get(decodeURIComponent(session[1]!));
      if (!s || s.account !== account.id) return fail(404, 'invalid_request_error', `No such checkout.session: '${session[1]}'`, { code: 'resource_missing', param: 'session' });
      return { status: 200, body: world.view(s) };
    }
    if (method === 'GET' && path === '/v1/events') return listEvents(account, params);
    if (method === 'POST' && path === '/v1/billing_portal/sessions') return createPortalSession(account, params);
    if (method === 'POST' && path === '/v1/coupons') return createCoupon(account, params);
    const updated = billing.route(method, path, account, params);
    if (updated) return updated;
    const coupon = /^\/v1\/coupons\/([^/]+)$/.exec(path);
    if (method === 'GET' && coupon) {
      const c = world.couponsOf(account.id).get(decodeURIComponent(coupon[1]!));
      if (!c) return fail(404, 'invalid_request_error', `No such coupon: '${coupon[1]}'`, { code: 'resource_missing', param: 'id' });
      return { status: 200, body: world.view(c) };
    }
    return fail(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`);
  }

  function createSession(account: Account, p: Record<string, unknown>): Answer {
    const mode = p.mode;
    if (mode === undefined) return missing('mode');
    if (mode !== 'payment' && mode !== 'subscription') return invalid('mode', `Invalid mode: must be one of payment, setup, or subscription`);
    if (typeof p.success_url !== 'string') return missing('success_url');
    if (!/^https?:\/\//.test(p.success_url)) return invalid('success_url', 'Not a valid URL');
    if (p.cancel_url !== undefined && (typeof p.cancel_url !== 'string' || !/^https?:\/\//.test(p.cancel_url))) return invalid('cancel_url', 'Not a valid URL');
    const badMetadata = checkMetadata(p.metadata, 'metadata');
    if (badMetadata) return badMetadata;
    const metadata = (p.metadata ?? {}) as Record<string, string>;
    const subscriptionData = (p.subscription_data ?? {}) as Record<string, unknown>;
    if (p.subscription_data !== undefined && mode !== 'subscription') {
      return invalid('subscription_data', 'You can not pass `subscription_data` in `payment` mode.', 'parameter_unknown');
    }
    if (subscriptionData.metadata !== undefined) {
      const bad = checkMetadata(subscriptionData.metadata, 'subscription_data[metadata]');
      if (bad) return bad;
    }
    // docs: subscription_data.trial_period_days, "Integer representing the number of trial period days
    // before the customer is charged for the first time. Has to be at least 1." (and at most 730).
    if (subscriptionData.trial_period_days !== undefined) {
      const days = String(subscriptionData.trial_period_days);
      if (!/^\d+$/.test(days)) return invalid('subscription_data[trial_period_days]', 'Invalid integer', 'parameter_invalid_integer');
      if (Number(days) < 1 || Number(days) > 730) return invalid('subscription_data[trial_period_days]', 'Trial period days must be between 1 and 730.', 'parameter_invalid_integer');
    }
    // docs: customer_creation (`always` | `if_required`) "Can only be set in payment and setup mode."
    if (p.customer_creation !== undefined) {
      if (mode !== 'payment') return invalid('customer_creation', '`customer_creation` can only be used in `payment` and `setup` mode.', 'parameter_invalid_string');
      if (p.customer_creation !== 'always' && p.customer_creation !== 'if_required') return invalid('customer_creation', 'Invalid customer_creation: must be one of always or if_required');
      if (p.customer !== undefined) return invalid('customer_creation', 'You may only specify one of these parameters: customer, customer_creation.', 'parameter_invalid_string');
    }
    if (p.client_reference_id !== undefined && (typeof p.client_reference_id !== 'string' || p.client_reference_id.length > 200)) {
      return invalid('client_reference_id', 'client_reference_id must be at most 200 characters');
    }
    const items = p.line_items;
    if (!Array.isArray(items) || items.length === 0) return missing('line_items');
    let total = 0;
    let currency = '';
    for (const [i, raw] of items.entries()) {
      const item = raw as { quantity?: string; price_data?: Record<string, unknown> };
      const at = `line_items[${i}]`;
      if (item.quantity === undefined) return missing(`${at}[quantity]`);
      if (!/^[1-9]\d*$/.test(item.quantity)) return invalid(`${at}[quantity]`, 'Invalid integer', 'parameter_invalid_integer');
      const pd = item.price_data;
      if (!pd) return missing(`${at}[price]`);
      if (typeof pd.currency !== 'string' || !/^[a-z]{3}$/.test(pd.currency)) return invalid(`${at}[price_data][currency]`, 'Invalid currency');
      if (typeof pd.unit_amount !== 'string' || !/^\d+$/.test(pd.unit_amount)) return invalid(`${at}[price_data][unit_amount]`, 'Invalid integer', 'parameter_invalid_integer');
      const product = pd.product_data as { name?: unknown } | undefined;
      if (pd.product === undefined && (typeof product?.name !== 'string' || product.name === '')) return missing(`${at}[price_data][product_data][name]`);
      const recurring = pd.recurring as { interval?: unknown; interval_count?: unknown } | undefined;
      if (mode === 'subscription') {
        if (!recurring) return invalid(`${at}[price_data][recurring]`, 'You must provide at least one recurring price in `subscription` mode when using prices.', 'parameter_missing');
        if (!['day', 'week', 'month', 'year'].includes(String(recurring.interval))) return invalid(`${at}[price_data][recurring][interval]`, 'Invalid interval');
        const count = Number(recurring.interval_count ?? 1);
        const days = count * { day: 1, week: 7, month: 31, year: 366 }[recurring.interval as 'day'];
        if (!Number.isInteger(count) || count < 1 || days > 3 * 366) return invalid(`${at}[price_data][recurring][interval_count]`, 'The maximum billing interval is three years.', 'parameter_invalid_integer');
      } else if (recurring) {
        return invalid(`${at}[price_data][recurring]`, 'You specified `payment` mode but passed a recurring price.', 'parameter_invalid_string');
      }
      if (currency && currency !== pd.currency) return invalid(`${at}[price_data][currency]`, 'All line items must share one currency');
      currency = pd.currency;
      total += Number(pd.unit_amount) * Number(item.quantity);
    }
    const discount = sessionDiscount(account, p, currency, total);
    if ('status' in discount) return discount;
    // docs: `customer`, an existing customer of the account, whom the session (and its payment) is for.
    if (p.customer !== undefined) {
      if (!billing.knows(account, p.customer)) return fail(400, 'invalid_request_error', `No such customer: '${String(p.customer)}'`, { code: 'resource_missing', param: 'customer' });
    }
    const id = stripeId(account.livemode ? 'cs_live' : 'cs_test', 58);
    const now = world.now();
    const session: Session & { account: string } = {
      id,
      object: 'checkout.session',
      mode,
      status: 'open',
      payment_status: 'unpaid',
      url: `https://checkout.stripe.com/c/pay/${id}`,
      success_url: p.success_url,
      cancel_url: (p.cancel_url as string | undefined) ?? null,
      client_reference_id: (p.client_reference_id as string | undefined) ?? null,
      metadata,
      currency,
      amount_subtotal: total,
      // A trial charges nothing today: the first invoice is $0 (docs: "Use trial periods on subscriptions").
      amount_total: subscriptionData.trial_period_days !== undefined ? 0 : total - discount.amount,
      customer: (p.customer as string | undefined) ?? null,
      customer_creation: mode === 'payment' ? ((p.customer_creation as 'always' | 'if_required' | undefined) ?? 'if_required') : null,
      customer_details: null,
      payment_intent: null,
      subscription: null,
      invoice: null,
      discounts: discount.coupon ? [{ coupon: discount.coupon, promotion_code: null }] : [],
      total_details: { amount_discount: discount.amount, amount_shipping: 0, amount_tax: 0 },
      livemode: account.livemode,
      created: now,
      expires_at: now + 86_400,
      params: p,
      account: account.id,
    };
    world.sessions.set(id, session);
    return { status: 200, body: world.view(session) };
  }

  /** The session's coupon and what it takes off `total`, or Stripe's refusal of `discounts`. */
  function sessionDiscount(account: Account, p: Record<string, unknown>, currency: string, total: number): { coupon: string | null; amount: number } | Answer {
    if (p.discounts === undefined) return { coupon: null, amount: 0 };
    if (!Array.isArray(p.discounts)) return invalid('discounts', 'Invalid array', 'parameter_invalid_array');
    if (p.discounts.length > 1) return invalid('discounts', 'You may only specify one discount.', 'parameter_invalid_array');
    if (p.allow_promotion_codes !== undefined) return invalid('discounts', 'You may only specify one of these parameters: allow_promotion_codes, discounts.', 'parameter_invalid_string');
    const entry = (p.discounts[0] ?? {}) as { coupon?: unknown; promotion_code?: unknown };
    if (typeof entry.coupon !== 'string') return missing('discounts[0][coupon]');
    const coupon = world.couponsOf(account.id).get(entry.coupon);
    if (!coupon) return fail(400, 'invalid_request_error', `No such coupon: '${entry.coupon}'`, { code: 'resource_missing', param: 'discounts[0][coupon]' });
    if (!coupon.valid || (coupon.max_redemptions !== null && coupon.times_redeemed >= coupon.max_redemptions) || (coupon.redeem_by !== null && coupon.redeem_by <= world.now())) {
      return invalid('discounts[0][coupon]', `Coupon '${coupon.id}' is no longer valid.`, 'coupon_expired');
    }
    if (coupon.amount_off !== null && coupon.currency !== currency) {
      return invalid('discounts[0][coupon]', `The coupon's currency (${coupon.currency}) must match the currency of the Checkout Session (${currency}).`);
    }
    return { coupon: coupon.id, amount: discountOn(coupon, total) };
  }

  function createCoupon(account: Account, p: Record<string, unknown>): Answer {
    const coupons = world.couponsOf(account.id);
    if (p.id !== undefined) {
      if (typeof p.id !== 'string' || p.id === '' || p.id.length > 200) return invalid('id', 'Invalid string: must be 1 to 200 characters');
      if (coupons.has(p.id)) return fail(400, 'invalid_request_error', 'Coupon already exists.', { code: 'resource_already_exists', param: 'id' });
    }
    if (p.percent_off !== undefined && p.amount_off !== undefined) {
      return invalid('percent_off', 'You may only specify one of these parameters: amount_off, percent_off.', 'parameter_invalid_string');
    }
    let percentOff: number | null = null;
    let amountOff: number | null = null;
    let currency: string | null = null;
    if (p.percent_off !== undefined) {
      percentOff = Number(p.percent_off);
      if (!/^\d+(\.\d+)?$/.test(String(p.percent_off)) || !(percentOff > 0 && percentOff <= 100)) {
        return invalid('percent_off', 'Invalid percent_off: must be greater than 0 and at most 100', 'parameter_invalid_float');
      }
    } else if (p.amount_off !== undefined) {
      if (typeof p.amount_off !== 'string' || !/^[1-9]\d*$/.test(p.amount_off)) return invalid('amount_off', 'Invalid positive integer', 'parameter_invalid_integer');
      amountOff = Number(p.amount_off);
      if (p.currency === undefined) return missing('currency');
      if (typeof p.currency !== 'string' || !/^[a-z]{3}$/.test(p.currency)) return invalid('currency', 'Invalid currency');
      currency = p.currency;
    } else {
      return fail(400, 'invalid_request_error', 'You must pass either `percent_off` or `amount_off`.', { code: 'parameter_missing', param: 'percent_off' });
    }
    const duration = p.duration ?? 'once';
    if (duration !== 'once' && duration !== 'forever' && duration !== 'repeating') return invalid('duration', 'Invalid duration: must be one of forever, once, or repeating');
    let durationInMonths: number | null = null;
    if (duration === 'repeating') {
      if (p.duration_in_months === undefined) return missing('duration_in_months');
      if (typeof p.duration_in_months !== 'string' || !/^[1-9]\d*$/.test(p.duration_in_months)) return invalid('duration_in_months', 'Invalid positive integer', 'parameter_invalid_integer');
      durationInMonths = Number(p.duration_in_months);
    } else if (p.duration_in_months !== undefined) {
      return invalid('duration_in_months', 'duration_in_months can only be set when duration is repeating.', 'parameter_unknown');
    }
    if (p.name !== undefined && (typeof p.name !== 'string' || p.name.length > 40)) return invalid('name', 'Coupon names can have up to 40 characters.');
    const badMetadata = checkMetadata(p.metadata, 'metadata');
    if (badMetadata) return badMetadata;
    const coupon: Coupon = {
      id: (p.id as string | undefined) ?? stripeId('cpn', 8),
      object: 'coupon',
      amount_off: amountOff,
      currency,
      percent_off: percentOff,
      duration,
      duration_in_months: durationInMonths,
      max_redemptions: p.max_redemptions === undefined ? null : Number(p.max_redemptions),
      redeem_by: p.redeem_by === undefined ? null : Number(p.redeem_by),
      times_redeemed: 0,
      valid: true,
      name: (p.name as string | undefined) ?? null,
      metadata: (p.metadata ?? {}) as Record<string, string>,
      created: world.now(),
      livemode: account.livemode,
    };
    coupons.set(coupon.id, coupon);
    return { status: 200, body: world.view(coupon) };
  }

  function listEvents(account: Account, p: Record<string, unknown>): Answer {
    const limit = p.limit === undefined ? 10 : Number(p.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return invalid('limit', 'This value must be between 1 and 100.', 'parameter_invalid_integer');
    const created = (p.created ?? {}) as Record<string, string>;
    const types = p.types === undefined ? null : (p.types as string[]);
    let events = [...account.events].reverse();
    const bound = (op: string, test: (c: number, v: number) => boolean) => {
      if (created[op] !== undefined) events = events.filter((e) => test(e.created, Number(created[op])));
    };
    bound('gte', (c, v) => c >= v);
    bound('gt', (c, v) => c > v);
    bound('lte', (c, v) => c <= v);
    bound('lt', (c, v) => c < v);
    if (types) events = events.filter((e) => types.includes(e.type));
    if (p.starting_after !== undefined) {
      const at = events.findIndex((e) => e.id === p.starting_after);
      if (at < 0) return fail(404, 'invalid_request_error', `No such event: '${String(p.starting_after)}'`, { code: 'resource_missing', param: 'starting_after' });
      events = events.slice(at + 1);
    }
    return { status: 200, body: { object: 'list', url: '/v1/events', has_more: events.length > limit, data: events.slice(0, limit) } };
  }

  function createPortalSession(account: Account, p: Record<string, unknown>): Answer {
    if (p.customer === undefined) return missing('customer');
    if (!billing.knows(account, p.customer)) return fail(400, 'invalid_request_error', `No such customer: '${String(p.customer)}'`, { code: 'resource_missing', param: 'customer' });
    if (p.return_url !== undefined && (typeof p.return_url !== 'string' || !/^https?:\/\//.test(p.return_url) || !URL.canParse(p.return_url))) {
      return invalid('return_url', 'Not a valid URL');
    }
    const secret = `${account.livemode ? 'live' : 'test'}_${stripeId('', 40).slice(1)}`;
    const session = {
      id: stripeId('bps', 24),
      object: 'billing_portal.session',
      configuration: stripeId('bpc', 24),
      created: world.now(),
      customer: p.customer,
      flow: null,
      livemode: account.livemode,
      locale: null,
      on_behalf_of: null,
      return_url: (p.return_url as string | undefined) ?? null,
      url: `https://billing.stripe.com/p/session/${secret}`,
    };
    portalSessions.push(session);
    return { status: 200, body: session };
  }

  /** Why `raw` is not metadata as Stripe takes it, or null when it is. */
  function checkMetadata(raw: unknown, param: string): Answer | null {
    if (raw === undefined) return null;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return invalid(param, 'Invalid hash', 'parameter_invalid_hash');
    const entries = Object.entries(raw);
    if (entries.length > 50) return invalid(param, 'You can specify up to 50 keys.');
    for (const [k, v] of entries) {
      if (k.length > 40) return invalid(param, `Metadata keys can have up to 40 characters; "${k}" has ${k.length}.`);
      if (typeof v !== 'string' || v.length > 500) return invalid(param, 'Metadata values can have up to 500 characters.');
    }
    return null;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const method = req.method ?? 'GET';
      const key = keyOf(req);
      const body = Buffer.concat(chunks).toString();
      const params = method === 'GET' ? parseForm(url.search.slice(1)) : parseForm(body);
      const idempotencyKey = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
      const send = (answer: Answer, headers: Record<string, string> = {}) => {
        calls.push({ method, path: url.pathname, key, idempotencyKey, status: answer.status, params });
        if (latencyMs <= 0) return reply(res, answer, headers);
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) reply(res, answer, headers);
        }, latencyMs);
        timers.add(timer);
      };
      if (!key) {
        return send(fail(401, 'invalid_request_error', 'You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. \'Authorization: Bearer YOUR_SECRET_KEY\').'));
      }
      const account = world.accountOfKey(key);
      if (!account) return send(fail(401, 'invalid_request_error', `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`));
      if (method !== 'POST' || idempotencyKey === null) return send(route(method, url.pathname, account, params));
      if (idempotencyKey.length > 255) return send(invalid('idempotency_key', 'Idempotency keys can be at most 255 characters long.'));
      const fingerprint = createHash('sha256').update(`${method} ${url.pathname}\n${body}`).digest('hex');
      const slot = `${account.id}\n${idempotencyKey}`;
      const before = saved.get(slot);
      if (before) {
        if (before.fingerprint !== fingerprint) {
          return send(fail(400, 'idempotency_error', `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`));
        }
        return send(before.answer, { 'idempotent-replayed': 'true' });
      }
      const answer = route(method, url.pathname, account, params);
      // Stripe saves the answer once the endpoint ran; a request refused by validation is not saved.
      if (answer.status < 400 || answer.status >= 500) saved.set(slot, { fingerprint, answer });
      send(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    world,
    calls,
    customers: billing.customers,
    portalSessions,
    setLatency(ms) {
      latencyMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(res: ServerResponse, answer: Answer, headers: Record<string, string>): void {
  res.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': stripeId('req', 14), ...headers });
  res.end(JSON.stringify(answer.body));
}
