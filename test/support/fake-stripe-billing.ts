import { stripeId, type Account, type StripeEvent, type StripeWorld, type Subscription } from './fake-stripe-model.js';

/**
 * The fake Stripe's subscription and customer updates (fake-stripe.ts routes these here), written
 * from Stripe's API reference (https://docs.stripe.com/api):
 *
 * - `POST /v1/subscriptions/{id}` (docs: Subscriptions, "Update a subscription"): an unknown id, or
 *   another account's, is 404 `resource_missing` "No such subscription: 'sub_…'"; a canceled one
 *   takes only `cancellation_details` and `metadata` (400). `cancel_at_period_end` (a boolean:
 *   `true` | `false`, else 400 `parameter_invalid_boolean`) sets whether it ends with its period;
 *   `canceled_at` is the time of the request that set it (the subscription object: "canceled_at
 *   will reflect the time of the most recent update request"), null once resumed; `metadata` merges.
 *   A change emits `customer.subscription.updated` with `previous_attributes`; the answer is the
 *   subscription.
 * - `POST /v1/customers` (docs: Customers, "Create a customer"): every parameter optional; the
 *   same ones as an update takes, below; it emits `customer.created` and answers the customer
 *   (`cus_…`), which a Checkout Session or a portal session of the account may then name.
 * - `POST /v1/customers/{id}` (docs: Customers, "Update a customer"): a customer the account's
 *   payments made, or one it created; `name` (up to 256 characters), `business_name` (up to 150), `address` (`line1`,
 *   `line2`, `city`, `postal_code`, `state`, `country`; an empty string unsets it),
 *   `invoice_settings[custom_fields]` (up to 4 of `{name ≤ 40, value ≤ 140}`; an empty string
 *   unsets them), `metadata`. An empty `name` or `business_name` unsets it. It emits
 *   `customer.updated` and answers the customer.
 */

type Answer = { status: number; body: unknown };

export interface Customer {
  id: string;
  object: 'customer';
  name: string | null;
  business_name: string | null;
  address: { line1: string | null; line2: string | null; city: string | null; postal_code: string | null; state: string | null; country: string | null } | null;
  invoice_settings: { custom_fields: { name: string; value: string }[] | null };
  metadata: Record<string, string>;
  livemode: boolean;
}

const fail = (status: number, message: string, extra: { code?: string; param?: string } = {}): Answer => ({ status, body: { error: { type: 'invalid_request_error', ...extra, message } } });
const invalid = (param: string, message: string, code = 'parameter_invalid_string') => fail(400, message, { code, param });

export interface BillingRoutes {
  /** The customers created or updated so far, as Stripe would show them. */
  customers: Map<string, Customer>;
  /** Whether `id` is a customer of the account: one it created, or one its payments made. */
  knows(account: Account, id: unknown): id is string;
  /** Stripe's answer to `method path`, or null when the path is not one of these. */
  route(method: string, path: string, account: Account, params: Record<string, unknown>): Answer | null;
}

export function billingRoutes(world: StripeWorld): BillingRoutes {
  const customers = new Map<string, Customer>();
  /** The account each created customer belongs to. */
  const owners = new Map<string, string>();
  const knows = (account: Account, id: unknown): id is string =>
    typeof id === 'string' &&
    (owners.get(id) === account.id || [...world.sessions.values(), ...world.subscriptions.values()].some((o) => o.account === account.id && o.customer === id));

  function updateSubscription(account: Account, id: string, p: Record<string, unknown>): Answer {
    const sub = world.subscriptions.get(id);
    if (!sub || sub.account !== account.id) return fail(404, `No such subscription: '${id}'`, { code: 'resource_missing', param: 'id' });
    const keys = Object.keys(p);
    if (sub.status === 'canceled' && keys.some((k) => k !== 'metadata' && k !== 'cancellation_details')) {
      return fail(400, 'A canceled subscription can only update its cancellation_details and metadata.');
    }
    const previous: Record<string, unknown> = {};
    if (p.cancel_at_period_end !== undefined) {
      if (p.cancel_at_period_end !== 'true' && p.cancel_at_period_end !== 'false') return invalid('cancel_at_period_end', `Invalid boolean: ${String(p.cancel_at_period_end)}`, 'parameter_invalid_boolean');
      const flag = p.cancel_at_period_end === 'true';
      if (flag !== sub.cancel_at_period_end) Object.assign(previous, setCancelAtPeriodEnd(world, sub, flag));
    }
    if (p.metadata !== undefined) {
      if (typeof p.metadata !== 'object' || p.metadata === null) return invalid('metadata', 'Invalid hash', 'parameter_invalid_hash');
      previous.metadata = { ...sub.metadata };
      Object.assign(sub.metadata, p.metadata);
    }
    if (Object.keys(previous).length > 0) world.emit(account, 'customer.subscription.updated', world.view(sub), previous);
    return { status: 200, body: world.view(sub) };
  }

  const blank = (account: Account, id: string): Customer => ({
    id,
    object: 'customer',
    name: null,
    business_name: null,
    address: null,
    invoice_settings: { custom_fields: null },
    metadata: {},
    livemode: account.livemode,
  });

  function createCustomer(account: Account, p: Record<string, unknown>): Answer {
    const c = blank(account, stripeId('cus', 14));
    const refused = applyParams(c, p);
    if (refused) return refused;
    customers.set(c.id, c);
    owners.set(c.id, account.id);
    world.emit(account, 'customer.created', structuredClone(c) as unknown as Record<string, unknown>);
    return { status: 200, body: structuredClone(c) };
  }

  function updateCustomer(account: Account, id: string, p: Record<string, unknown>): Answer {
    if (!knows(account, id)) return fail(404, `No such customer: '${id}'`, { code: 'resource_missing', param: 'id' });
    const c: Customer = structuredClone(customers.get(id) ?? blank(account, id));
    const refused = applyParams(c, p);
    if (refused) return refused;
    customers.set(id, c);
    world.emit(account, 'customer.updated', structuredClone(c) as unknown as Record<string, unknown>);
    return { status: 200, body: structuredClone(c) };
  }

  /** Sets what `p` names on `c`; Stripe's refusal of a parameter, or null. */
  function applyParams(c: Customer, p: Record<string, unknown>): Answer | null {
    for (const [param, max] of [
      ['name', 256],
      ['business_name', 150],
    ] as const) {
      const v = p[param];
      if (v === undefined) continue;
      if (typeof v !== 'string' || v.length > max) return invalid(param, `Invalid string: must be at most ${max} characters`);
      c[param] = v === '' ? null : v;
    }
    if (p.address !== undefined) {
      if (p.address === '') c.address = null;
      else if (typeof p.address !== 'object' || p.address === null) return invalid('address', 'Invalid hash', 'parameter_invalid_hash');
      else {
        const a = p.address as Record<string, unknown>;
        const unknown = Object.keys(a).find((k) => !['line1', 'line2', 'city', 'postal_code', 'state', 'country'].includes(k));
        if (unknown) return invalid(`address[${unknown}]`, `Received unknown parameter: address[${unknown}]`, 'parameter_unknown');
        const field = (k: string) => (typeof a[k] === 'string' && a[k] !== '' ? (a[k] as string) : null);
        c.address = { line1: field('line1'), line2: field('line2'), city: field('city'), postal_code: field('postal_code'), state: field('state'), country: field('country') };
      }
    }
    const settings = p.invoice_settings as { custom_fields?: unknown } | undefined;
    if (settings?.custom_fields !== undefined) {
      if (settings.custom_fields === '') c.invoice_settings.custom_fields = null;
      else {
        const fields = settings.custom_fields;
        if (!Array.isArray(fields) || fields.length > 4) return invalid('invoice_settings[custom_fields]', 'You can specify up to 4 custom fields.', 'parameter_invalid_array');
        for (const [i, f] of (fields as { name?: unknown; value?: unknown }[]).entries()) {
          if (typeof f.name !== 'string' || f.name === '' || f.name.length > 40) return invalid(`invoice_settings[custom_fields][${i}][name]`, 'Custom field names can have up to 40 characters.');
          if (typeof f.value !== 'string' || f.value === '' || f.value.length > 140) return invalid(`invoice_settings[custom_fields][${i}][value]`, 'Custom field values can have up to 140 characters.');
        }
        c.invoice_settings.custom_fields = (fields as { name: string; value: string }[]).map((f) => ({ name: f.name, value: f.value }));
      }
    }
    if (p.metadata !== undefined) Object.assign(c.metadata, p.metadata);
    return null;
  }

  return {
    customers,
    knows,
    route(method, path, account, params) {
      if (method === 'POST' && path === '/v1/customers') return createCustomer(account, params);
      const sub = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
      if (method === 'POST' && sub) return updateSubscription(account, decodeURIComponent(sub[1]!), params);
      const customer = /^\/v1\/customers\/([^/]+)$/.exec(path);
      if (method === 'POST' && customer) return updateCustomer(account, decodeURIComponent(customer[1]!), params);
      return null;
    },
  };
}

/** Sets the flag as Stripe does (with `canceled_at`); the attributes it had before. */
function setCancelAtPeriodEnd(world: StripeWorld, sub: Subscription, flag: boolean): Record<string, unknown> {
  const previous = { cancel_at_period_end: sub.cancel_at_period_end, canceled_at: sub.canceled_at };
  sub.cancel_at_period_end = flag;
  sub.canceled_at = flag ? world.now() : null;
  return previous;
}

/**
 * The member cancels (or resumes) the renewal on Stripe's own billing portal: the subscription's
 * `customer.subscription.updated`, as Stripe sends it, for the test to deliver.
 */
export function cancelOnStripe(world: StripeWorld, subscriptionId: string, flag = true): StripeEvent[] {
  const sub = world.subscriptions.get(subscriptionId);
  if (!sub) throw new Error(`fake Stripe: no subscription ${subscriptionId}`);
  const account = world.accounts.get(sub.account)!;
  const previous = setCancelAtPeriodEnd(world, sub, flag);
  return [world.emit(account, 'customer.subscription.updated', world.view(sub), previous)];
}
