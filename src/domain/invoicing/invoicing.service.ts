import type { Clock } from '../clock.js';
import { ok, type Result } from '../errors.js';
import type { StripeCustomerDetails } from '../payments/stripe-api.js';
import { applyPatch, EMPTY_DETAILS, INVOICING_FIELDS, type InvoicingDetails, type InvoicingPatch, type InvoicingView } from './invoicing-rules.js';
import type { InvoicingStatements } from './invoicing-statements.js';

/**
 * A member's invoicing details (docs/portal.md, "Invoicing details"): read and changed by the API
 * (`GET`/`PATCH …/users/{user_id}/invoicing`) and by the member in the portal, and handed to Stripe
 * as the customer's billing details when the portal opens Stripe's billing page.
 */
export class InvoicingService {
  constructor(
    private readonly store: InvoicingStatements,
    private readonly clock: Clock,
  ) {}

  /** The member's details; all null when never given (any user id of the project may have them). */
  async get(projectId: string, userId: string): Promise<InvoicingView> {
    const found = await this.store.find(projectId, userId);
    return invoicingViewOf(userId, found);
  }

  /** Sets the fields the patch names; a refused field changes nothing (422 naming it). */
  async update(projectId: string, userId: string, patch: InvoicingPatch): Promise<Result<InvoicingView>> {
    // Each field is checked on its own, so the check needs no current row: the statement merges.
    const checked = applyPatch(EMPTY_DETAILS, patch);
    if (!checked.ok) return checked;
    // The fields named, as the rules normalised them (an address's left-out parts are null).
    const named = Object.fromEntries(INVOICING_FIELDS.filter((f) => patch[f] !== undefined).map((f) => [f, checked.value[f]])) as Partial<InvoicingDetails>;
    const saved = await this.store.update(projectId, userId, named, this.clock.now());
    return ok(invoicingViewOf(userId, saved));
  }

  /** The member's Stripe customer (InvoicingStatements.billingCustomer), on the merchant account when one is named; null when none. */
  billingCustomer(projectId: string, userId: string, merchantAccountId?: string): Promise<{ customerId: string; merchantAccountId: string } | null> {
    return this.store.billingCustomer(projectId, userId, merchantAccountId);
  }

  /** Remembers a customer just made for the member; answers the one to use (an earlier one, made at the same moment, wins). */
  rememberCustomer(projectId: string, userId: string, merchantAccountId: string, customerId: string): Promise<string> {
    return this.store.rememberCustomer(projectId, userId, merchantAccountId, customerId, this.clock.now());
  }

  /** What Stripe is given for the member's customer; null when the member gave nothing. */
  async stripeDetails(projectId: string, userId: string): Promise<StripeCustomerDetails | null> {
    const found = await this.store.find(projectId, userId);
    return found ? stripeDetailsOf(found) : null;
  }
}

/** The details as the API and the portal show them (the portal reads the row with its page: PortalLinksStore.pageOf). */
export function invoicingViewOf(userId: string, found: (InvoicingDetails & { updatedAt: Date }) | null): InvoicingView {
  if (!found) return { user_id: userId, ...EMPTY_DETAILS, updated_at: null };
  return { user_id: userId, name: found.name, company: found.company, address: found.address, vat_id: found.vat_id, updated_at: found.updatedAt.toISOString() };
}

/** Stripe's fields: an empty string clears one there, so what the member removed goes there too. */
export function stripeDetailsOf(d: InvoicingDetails): StripeCustomerDetails {
  const a = d.address;
  return {
    name: d.name ?? '',
    businessName: d.company ?? '',
    address: a ? { line1: a.line1, line2: a.line2 ?? '', city: a.city, postalCode: a.postal_code ?? '', state: a.state ?? '', country: a.country } : null,
    vatId: d.vat_id,
  };
}
