import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { Clock } from '../clock.js';
import { ok, type Result } from '../errors.js';
import type { InvoicingView } from '../invoicing/invoicing-rules.js';
import { invoicingViewOf, type InvoicingService } from '../invoicing/invoicing.service.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import type { StripeApi } from '../payments/stripe-api.js';
import type { Transactor } from '../transactions.js';
import { digestOf, isLinkToken, newLinkToken } from './link-tokens.js';
import type { PortalLinkStatements, PortalMemberStatements } from './portal-link-statements.js';
import { membershipOf, type PortalMembership } from './portal-view.js';

/**
 * The member's portal (docs/portal.md): a single-use link, valid 15 minutes, that opens a page of
 * their memberships and payments. Opening it spends it and starts a short browser session (a
 * random secret in an HTTP-only cookie, its digest on the link's row): the page and its forms work
 * from that browser only, and a forwarded or leaked link opens nothing once used. What the forms
 * do (cancel or resume a renewal, an invite, invoicing details) is portal-actions.ts.
 */

export const PORTAL_LINK_TTL_MS = 15 * 60_000;
/** How long the page works in the browser that opened the link. */
export const PORTAL_SESSION_TTL_MS = 30 * 60_000;

export interface PortalLinkView {
  url: string;
  expires_at: string;
}

export interface PortalPage {
  memberships: PortalMembership[];
  payments: { date: string; amount: string; currency: string; status: string; planName: string | null }[];
  invoicing: InvoicingView;
  /** Whether the member has a Stripe customer whose billing they can manage. */
  canManageBilling: boolean;
}

/** Who a link and the browser's session let in. */
export type PortalMember = { projectId: string; userId: string; token: string };

/** Why a link opens nothing. */
export type Refusal = { kind: 'unknown' } | { kind: 'expired' } | { kind: 'used' };

export type PortalOutcome =
  | Refusal
  /** `newSession`: the secret of the browser session just started, for the cookie; null when the cookie's session goes on. */
  | { kind: 'page'; page: PortalPage; newSession: string | null };

export type BillingOutcome = Refusal | { kind: 'no-customer' } | { kind: 'unavailable' } | { kind: 'redirect'; url: string };

export interface PortalDeps {
  transactor: Transactor<{ portalLinks: PortalLinkStatements }>;
  links: PortalLinkStatements & PortalMemberStatements;
  accounts: Pick<MerchantAccountsStore, 'secretsOf'>;
  stripe: Pick<StripeApi, 'createBillingPortalSession' | 'updateCustomer'>;
  invoicing: Pick<InvoicingService, 'stripeDetails' | 'billingCustomer'>;
  box: SecretBox | null;
  clock: Clock;
  publicUrl: string;
}

export class PortalService {
  constructor(private readonly deps: PortalDeps) {}

  async create(projectId: string, userId: string): Promise<Result<PortalLinkView>> {
    const { token, expiresAt } = await this.newLink(projectId, userId);
    return ok({ url: this.urlOf(token), expires_at: expiresAt.toISOString() });
  }

  /**
   * A member signed in with Discord (docs/portal.md, "Signing in with Discord"): a link of their own,
   * which the browser that signed in opens at once, so the session starts the one way every
   * session does (`open`). A Discord account with no membership here, past or present, gets none.
   */
  async signIn(projectId: string, userId: string): Promise<{ kind: 'link'; token: string } | { kind: 'no-member' }> {
    const memberships = await this.deps.links.membershipsOf(projectId, userId, this.deps.clock.now());
    if (memberships.length === 0) return { kind: 'no-member' };
    return { kind: 'link', token: (await this.newLink(projectId, userId)).token };
  }

  private async newLink(projectId: string, userId: string): Promise<{ token: string; expiresAt: Date }> {
    const token = newLinkToken();
    const now = this.deps.clock.now();
    const expiresAt = new Date(now.getTime() + PORTAL_LINK_TTL_MS);
    await this.deps.links.insert({ tokenHash: digestOf(token), projectId, userId, createdAt: now, expiresAt });
    return { token, expiresAt };
  }

  /** `GET /portal/{token}`: the first open spends the link on this browser; later ones need its session. */
  async open(token: string, session: string | undefined): Promise<PortalOutcome> {
    const member = await this.member(token, session);
    if (member.kind === 'in') return { kind: 'page', page: await this.page(member.projectId, member.userId), newSession: null };
    if (member.kind !== 'fresh') return { kind: member.kind };
    const secret = newLinkToken();
    const now = this.deps.clock.now();
    // The claim and the read that explains a refusal see one state of the row.
    const claimed = await this.deps.transactor.run(async (s) => {
      if (await s.portalLinks.claim(digestOf(token), { sessionHash: digestOf(secret), sessionExpiresAt: new Date(now.getTime() + PORTAL_SESSION_TTL_MS) }, now)) return 'claimed' as const;
      const row = await s.portalLinks.find(digestOf(token));
      return row && row.usedAt === null ? ('expired' as const) : ('used' as const);
    });
    if (claimed !== 'claimed') return { kind: claimed };
    return { kind: 'page', page: await this.page(member.projectId, member.userId), newSession: secret };
  }

  /** The member a form of the page acts for: only from the browser whose session the link started. */
  async enter(token: string, session: string | undefined): Promise<PortalMember | Refusal> {
    const member = await this.member(token, session);
    // A form posted with a link never opened: it was not sent from the page.
    if (member.kind === 'fresh') return { kind: 'used' };
    return member.kind === 'in' ? { projectId: member.projectId, userId: member.userId, token } : { kind: member.kind };
  }

  /**
   * The page's "Manage billing": a Stripe customer portal session. The member's invoicing details
   * go to their Stripe customer first, so Stripe's page and invoices show them.
   */
  async billing(token: string, session: string | undefined): Promise<BillingOutcome> {
    const member = await this.enter(token, session);
    if ('kind' in member) return member;
    const customer = await this.deps.invoicing.billingCustomer(member.projectId, member.userId);
    if (!customer) return { kind: 'no-customer' };
    const account = await this.deps.accounts.secretsOf(customer.merchantAccountId);
    const secretKey = account && openOrNull(this.deps.box, account.secretKeySealed);
    if (!secretKey) return { kind: 'unavailable' };
    const details = await this.deps.invoicing.stripeDetails(member.projectId, member.userId);
    if (details) {
      const updated = await this.deps.stripe.updateCustomer(secretKey, customer.customerId, details);
      // Stripe unreachable, or the key refused, stops here; details Stripe refuses (a request it
      // does not take) must not lock the member out of their billing.
      if (!updated.ok && updated.kind !== 'request') return { kind: 'unavailable' };
    }
    const answer = await this.deps.stripe.createBillingPortalSession(secretKey, { customer: customer.customerId, returnUrl: this.urlOf(token) });
    return answer.ok ? { kind: 'redirect', url: answer.url } : { kind: 'unavailable' };
  }

  urlOf(token: string): string {
    return `${this.deps.publicUrl}/portal/${token}`;
  }

  /** Who the link and the browser's session let in: `in` (the session), `fresh` (an unused link) or why not. */
  private async member(token: string, session: string | undefined): Promise<{ kind: 'in' | 'fresh'; projectId: string; userId: string } | Refusal> {
    const link = isLinkToken(token) ? await this.deps.links.find(digestOf(token)) : null;
    if (!link) return { kind: 'unknown' };
    const now = this.deps.clock.now().getTime();
    if (link.usedAt === null) return link.expiresAt.getTime() > now ? { kind: 'fresh', projectId: link.projectId, userId: link.userId } : { kind: 'expired' };
    const inSession =
      session !== undefined && isLinkToken(session) && link.sessionHash === digestOf(session) && link.sessionExpiresAt !== null && link.sessionExpiresAt.getTime() > now;
    return inSession ? { kind: 'in', projectId: link.projectId, userId: link.userId } : { kind: 'used' };
  }

  private async page(projectId: string, userId: string): Promise<PortalPage> {
    const { links, clock } = this.deps;
    // One statement for the member's things: the page is read afresh on every open (docs/portal.md).
    const { memberships, access, payments, hasBillingCustomer, invoicing, discordJoin, joins } = await links.pageOf(projectId, userId, clock.now(), 20);
    const planNames = new Map(memberships.map((m) => [m.planId, m.planName]));
    return {
      memberships: memberships.map((m) => membershipOf(m, access, { discordJoin, joins })),
      payments: payments.map((p) => ({ date: p.createdAt, amount: p.amount, currency: p.currency, status: p.status, planName: p.planId === null ? null : (planNames.get(p.planId) ?? null) })),
      invoicing: invoicingViewOf(userId, invoicing),
      canManageBilling: hasBillingCustomer,
    };
  }
}
