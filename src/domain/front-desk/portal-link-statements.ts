/**
 * The statements of portal links (docs/front-desk.md, "The portal"), declared here and run by the
 * store (src/store/portal-links.store.ts): each one statement, deciding nothing.
 */

export interface PortalLinkRecord {
  projectId: string;
  userId: string;
  expiresAt: Date;
  usedAt: Date | null;
  /** The digest of the browser session's secret the link was opened with, and when that session ends. */
  sessionHash: string | null;
  sessionExpiresAt: Date | null;
}

export interface PortalLinkStatements {
  insert(link: { tokenHash: string; projectId: string; userId: string; createdAt: Date; expiresAt: Date }): Promise<void>;
  find(tokenHash: string): Promise<PortalLinkRecord | null>;
  /** Spends an unused, unexpired link on a browser session; false when it was not (used, expired, raced). */
  claim(tokenHash: string, session: { sessionHash: string; sessionExpiresAt: Date }, now: Date): Promise<boolean>;
  /** The Stripe customer of the member's latest payment that names one, with its merchant account. */
  billingCustomer(projectId: string, userId: string): Promise<{ customerId: string; merchantAccountId: string } | null>;
}
