import type { InvoicingDetails } from './invoicing-rules.js';

/**
 * The statements of invoicing details (docs/portal.md, "Invoicing details"), declared here and
 * run by the store (src/store/invoicing.store.ts): each one statement, deciding nothing.
 */
export interface InvoicingStatements {
  /** The member's details and when they last changed; null when never given. */
  find(projectId: string, userId: string): Promise<(InvoicingDetails & { updatedAt: Date }) | null>;
  /**
   * Sets the fields `patch` names (null clears one) and leaves the others, in one statement
   * (inserting the row the first time), so two changes at once each keep the other's fields.
   */
  update(projectId: string, userId: string, patch: Partial<InvoicingDetails>, now: Date): Promise<InvoicingDetails & { updatedAt: Date }>;
  /**
   * The member's Stripe customer with its merchant account (docs/portal.md, "One customer per
   * member"): the customer of their latest payment that names one, else the latest one tenure made
   * for them. With `merchantAccountId`: that one if it is on the account, else the one tenure made
   * there; null when none.
   */
  billingCustomer(projectId: string, userId: string, merchantAccountId?: string): Promise<{ customerId: string; merchantAccountId: string } | null>;
  /**
   * Remembers the customer just made for the member on the account, unless one is remembered
   * already (a checkout made at the same moment won): answers the one remembered, which is used.
   */
  rememberCustomer(projectId: string, userId: string, merchantAccountId: string, customerId: string, now: Date): Promise<string>;
}
