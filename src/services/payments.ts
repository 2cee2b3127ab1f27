import { CheckoutCustomers } from '../domain/invoicing/checkout-customer.js';
import { InvoicingService } from '../domain/invoicing/invoicing.service.js';
import { CheckoutCoupons } from '../domain/payments/checkout-coupons.js';
import { CheckoutPolicies } from '../domain/payments/checkout-policies.js';
import { CheckoutService } from '../domain/payments/checkout.service.js';
import { CouponsService } from '../domain/payments/coupons.service.js';
import { MerchantAccountsService } from '../domain/payments/merchant-accounts.service.js';
import { PaymentsService } from '../domain/payments/payments.service.js';
import { StripeEventsService } from '../domain/payments/stripe-events.service.js';
import type { CatalogueServices } from './catalogue.js';
import type { ServiceInputs } from './inputs.js';

/** Stripe: merchant accounts, checkout, Stripe's events and the payments they record (docs/payments.md). */
export interface PaymentServices {
  /** Merchant accounts: the Stripe key checked with Stripe, sealed with the secret box (docs/payments.md). */
  merchantAccounts: MerchantAccountsService;
  /** Stripe Checkout Sessions for a member and a plan (docs/payments.md, "Checkout"). */
  checkout: CheckoutService;
  /** Stripe's events (the webhook route, reconciliation) turned into payments and memberships. */
  stripeEvents: StripeEventsService;
  /** The payments recorded from Stripe's events (docs/payments.md, "Payments"). */
  payments: PaymentsService;
  /** A project's coupons (docs/coupons.md); checkout applies them. */
  coupons: CouponsService;
  /** The project's policies a pay link shows and the buyer confirms before paying (setting policies, docs/front-desk.md). */
  payPolicies: CheckoutPolicies;
  /** Members' invoicing details, passed to Stripe as the customer's (docs/portal.md). */
  invoicing: InvoicingService;
}

export function paymentServices({ stores, transactor, config, clock, secretBox, stripe }: ServiceInputs, { plans }: Pick<CatalogueServices, 'plans'>): PaymentServices {
  const invoicing = new InvoicingService(stores.invoicing, clock);
  return {
    merchantAccounts: new MerchantAccountsService(stores.merchantAccounts, secretBox, stripe, clock),
    checkout: new CheckoutService(
      stores.merchantAccounts,
      stores.payments,
      plans,
      secretBox,
      stripe,
      new CheckoutCoupons(stores.coupons, transactor, stripe, clock),
      new CheckoutCustomers(invoicing, stripe),
      // collect_email_on_subscribe: the buyer's e-mail is kept on their user (docs/payments.md, "Checkout").
      async (projectId) => ({ collectEmail: (await stores.settings.get(projectId, 'collect_email_on_subscribe'))?.value === true }),
      () => clock.now(),
    ),
    stripeEvents: new StripeEventsService(stores.merchantAccounts, transactor, secretBox, stripe, clock, { graceMs: config.payments.gracePeriodMs }),
    payments: new PaymentsService(stores.payments),
    coupons: new CouponsService(stores.coupons, clock),
    payPolicies: new CheckoutPolicies(
      {
        linkOf: (hash) => stores.payLinks.find(hash),
        storedPolicies: async (projectId) => (await stores.settings.get(projectId, 'policies'))?.value ?? null,
        policiesConfirmed: (projectId, hash) => stores.payments.policiesConfirmed(projectId, hash),
        confirmPolicies: (c, now) => stores.payments.confirmPolicies(c, now),
      },
      clock,
    ),
    invoicing,
  };
}
