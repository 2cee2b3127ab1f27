import type { PortalLinkStatements } from '../front-desk/portal-link-statements.js';
import type { StripeApi } from '../payments/stripe-api.js';
import type { InvoicingService } from './invoicing.service.js';

/**
 * A checkout's Stripe customer (docs/portal.md, "Invoicing details"): a member who gave invoicing
 * details and already has a customer on the checkout's Stripe account pays as that customer, with
 * the details updated on it first, so the session and its invoices carry them. Anyone else pays as
 * before (Stripe makes a customer at payment; the details reach it at Manage billing).
 */
export class CheckoutCustomers {
  constructor(
    private readonly links: Pick<PortalLinkStatements, 'billingCustomer'>,
    private readonly invoicing: Pick<InvoicingService, 'stripeDetails'>,
    private readonly stripe: Pick<StripeApi, 'updateCustomer'>,
  ) {}

  /** The customer the session is for, its details updated; null: none (the session names no customer). */
  async customerFor(projectId: string, userId: string, merchantAccountId: string, secretKey: string): Promise<string | null> {
    const details = await this.invoicing.stripeDetails(projectId, userId);
    if (!details) return null;
    const customer = await this.links.billingCustomer(projectId, userId);
    // A customer belongs to one Stripe account: another account's is no customer here.
    if (!customer || customer.merchantAccountId !== merchantAccountId) return null;
    const updated = await this.stripe.updateCustomer(secretKey, customer.customerId, details);
    // Details Stripe does not take, or Stripe not answering, never stop a checkout: it goes on without them.
    return updated.ok ? customer.customerId : null;
  }
}
