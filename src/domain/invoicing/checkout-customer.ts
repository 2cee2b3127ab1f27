import { createHash } from 'node:crypto';
import type { StripeApi, StripeCustomerDetails } from '../payments/stripe-api.js';
import type { InvoicingService } from './invoicing.service.js';

/**
 * A checkout's Stripe customer (docs/portal.md, "Invoicing details"): a member who gave invoicing
 * details pays as a customer carrying them, so the session and its invoices show them. One who
 * already has a customer on the checkout's Stripe account (their payments' customer, or the one
 * tenure made for them) pays as that customer, its details updated first; on a first checkout
 * there the customer is created with the details (Stripe's Checkout takes no name, address or tax
 * id for a customer it makes itself) and remembered at once, before any payment, so a checkout
 * started again after the details changed uses it instead of making a second one. A member without
 * details pays as before: Stripe makes a customer at payment.
 */
export class CheckoutCustomers {
  constructor(
    private readonly invoicing: Pick<InvoicingService, 'stripeDetails' | 'billingCustomer' | 'rememberCustomer'>,
    private readonly stripe: Pick<StripeApi, 'updateCustomer' | 'createCustomer'>,
  ) {}

  /** The customer the session is for, carrying the details; null: none (the session names no customer). */
  async customerFor(projectId: string, userId: string, merchantAccountId: string, secretKey: string): Promise<string | null> {
    const details = await this.invoicing.stripeDetails(projectId, userId);
    if (!details) return null;
    // A customer belongs to one Stripe account: another account's is no customer here.
    const billing = await this.invoicing.billingCustomer(projectId, userId, merchantAccountId);
    let customerId = billing?.customerId ?? null;
    if (customerId === null) {
      const created = await this.stripe.createCustomer(secretKey, {
        details,
        metadata: { project_id: projectId, user_id: userId },
        idempotencyKey: customerIdempotencyKey(projectId, userId, merchantAccountId, details),
      });
      // As below: Stripe refusing or not answering never stops a checkout.
      if (!created.ok) return null;
      customerId = await this.invoicing.rememberCustomer(projectId, userId, merchantAccountId, created.customerId);
      // Made with these very details; another checkout's customer, remembered first, is brought up to date below.
      if (customerId === created.customerId) return customerId;
    }
    const updated = await this.stripe.updateCustomer(secretKey, customerId, details);
    // Details Stripe does not take, or Stripe not answering, never stop a checkout: it goes on without them.
    return updated.ok ? customerId : null;
  }
}

/**
 * The key a member's customer is created by: two checkouts racing to make the member's first
 * customer with the same details get the same one back from Stripe (which keeps a key 24 hours).
 * The details are part of it, since Stripe refuses a key sent again with other parameters.
 */
export function customerIdempotencyKey(projectId: string, userId: string, merchantAccountId: string, details: StripeCustomerDetails): string {
  const canonical = JSON.stringify([projectId, userId, merchantAccountId, details]);
  return `tenure-customer-${createHash('sha256').update(canonical).digest('hex')}`;
}
