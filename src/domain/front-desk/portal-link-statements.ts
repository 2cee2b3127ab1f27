import type { InvoicingDetails } from '../invoicing/invoicing-rules.js';

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
}

/** A membership as the portal shows it (docs/portal.md). */
export interface PortalMembershipRecord {
  id: string;
  planId: string | null;
  planName: string | null;
  /** By the end date against the app's clock (the rule twin statusAt). */
  status: 'active' | 'expired';
  endDate: Date;
  subscriptionId: string | null;
  subscriptionStatus: string | null;
  /** The subscription ends with its paid period (cancelled in the portal or on Stripe). */
  cancelAtPeriodEnd: boolean;
}

/** One place the member's plan grants them (an access row they should hold), as the portal shows it. */
export interface PortalAccessRecord {
  targetId: string;
  targetName: string | null;
  platform: 'discord' | 'telegram';
  kind: string;
  /** The access row's state: `synced` (in), `waiting_for_member` (not in yet), `pending`, `failed`. */
  state: string;
  /** The Discord guild the target is in (the guild itself, or a role's or channel's); null on Telegram. */
  guildId: string | null;
}

/** The member's latest rejoin from the portal for a guild (docs/portal.md, "Rejoining the Discord server"). */
export interface PortalJoinRecord {
  guildId: string;
  state: string;
  lastError: string | null;
}

/** A payment as the portal lists it. */
export interface PortalPaymentRecord {
  planId: string | null;
  /** ISO 8601; the amount in the currency's units, as the API formats it. */
  createdAt: string;
  amount: string;
  currency: string;
  status: string;
}

/** What the portal's page shows of the member, read in one statement: it is read on every open. */
export interface PortalPageRecord {
  memberships: PortalMembershipRecord[];
  access: PortalAccessRecord[];
  /** The latest `limit`, newest first. */
  payments: PortalPaymentRecord[];
  /** Whether the member has a Stripe customer on a merchant account (the invoicing store's billingCustomer is not null). */
  hasBillingCustomer: boolean;
  /** The member's invoicing details as the invoicing store reads them (its `find`); null when never given. */
  invoicing: (InvoicingDetails & { updatedAt: Date }) | null;
  /** Login with Discord is set up (the project's application with its client secret): the page can offer a rejoin. */
  discordJoin: boolean;
  /** The member's latest rejoin per guild. */
  joins: PortalJoinRecord[];
}

/** What the portal's pages and actions read beyond the link itself: each one statement. */
export interface PortalMemberStatements {
  pageOf(projectId: string, userId: string, now: Date, limit: number): Promise<PortalPageRecord>;
  membershipsOf(projectId: string, userId: string, now: Date): Promise<PortalMembershipRecord[]>;
  /** The member's granted access rows, with their targets' names. */
  accessOf(projectId: string, userId: string): Promise<PortalAccessRecord[]>;
  /** The merchant account a subscription's payments came through; null when none recorded one. */
  subscriptionAccount(projectId: string, subscriptionId: string): Promise<string | null>;
}
