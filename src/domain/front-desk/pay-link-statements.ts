/**
 * The statements of pay links (docs/front-desk.md), declared here and run by the store
 * (src/store/pay-links.store.ts): each one statement, deciding nothing.
 */

export interface NewPayLink {
  idHash: string;
  projectId: string;
  planId: string;
  userId: string;
  coupon: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface PayLinkRecord {
  projectId: string;
  planId: string;
  userId: string;
  coupon: string | null;
  expiresAt: Date;
  /** The Checkout Session the link made, with its account; null until the link is first opened. */
  merchantAccountId: string | null;
  sessionId: string | null;
  sessionUrl: string | null;
  /** When Stripe expires that session: past it, the session is not offered again. */
  sessionExpiresAt: Date | null;
  /** When the session's payment was applied: the link is used. */
  completedAt: Date | null;
}

export interface LinkSession {
  merchantAccountId: string;
  sessionId: string;
  sessionUrl: string;
  sessionExpiresAt: Date;
}

export interface PayLinkStatements {
  insert(link: NewPayLink): Promise<void>;
  find(idHash: string): Promise<PayLinkRecord | null>;
  /** Keeps the session the link made, unless the link is used already. */
  setSession(idHash: string, session: LinkSession): Promise<void>;
  /** Marks the link used; false when it was already. */
  markCompleted(idHash: string, now: Date): Promise<boolean>;
  /** Whether a succeeded payment of the project names this Checkout Session (Stripe's event came first). */
  sessionPaid(projectId: string, sessionId: string): Promise<boolean>;
}
