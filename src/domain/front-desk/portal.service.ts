import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { MembershipsStore } from '../../store/memberships.store.js';
import type { PaymentsStore } from '../../store/payments.store.js';
import type { Clock } from '../clock.js';
import { ok, type Result } from '../errors.js';
import { openOrNull, type SecretBox } from '../integrations/secret-box.js';
import type { StripeApi } from '../payments/stripe-api.js';
import type { Transactor } from '../transactions.js';
import { digestOf, isLinkToken, newLinkToken } from './link-tokens.js';
import type { PortalLinkStatements } from './portal-link-statements.js';

/**
 * The member's portal (docs/front-desk.md, "The portal"): a single-use link, valid 15 minutes,
 * that opens a page of their memberships and payments. Opening it spends it and starts a short
 * browser session (a random secret in an HTTP-only cookie, its digest on the link's row): the page
 * can be reloaded and its billing button used from that browser only, and a forwarded or leaked
 * link opens nothing once used.
 */

export const PORTAL_LINK_TTL_MS = 15 * 60_000;
/** How long the page works in the browser that opened the link. */
export const PORTAL_SESSION_TTL_MS = 30 * 60_000;

export interface PortalLinkView {
  url: string;
  expires_at: string;
}

export interface PortalPage {
  memberships: { planName: string; status: 'active' | 'expired'; endDate: string; renewal: string | null }[];
  payments: { date: string; amount: string; currency: string; status: string; planName: string | null }[];
  /** Whether the member has a Stripe customer whose billing they can manage. */
  canManageBilling: boolean;
}

export type PortalOutcome =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'used' }
  /** `newSession`: the secret of the browser session just started, for the cookie; null when the cookie's session goes on. */
  | { kind: 'page'; page: PortalPage; newSession: string | null };

export type BillingOutcome =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'used' }
  | { kind: 'no-customer' }
  | { kind: 'unavailable' }
  | { kind: 'redirect'; url: string };

export class PortalService {
  constructor(
    private readonly transactor: Transactor<{ portalLinks: PortalLinkStatements }>,
    private readonly links: PortalLinkStatements,
    private readonly memberships: Pick<MembershipsStore, 'list'>,
    private readonly payments: Pick<PaymentsStore, 'list'>,
    private readonly accounts: Pick<MerchantAccountsStore, 'secretsOf'>,
    private readonly stripe: Pick<StripeApi, 'createBillingPortalSession'>,
    private readonly box: SecretBox | null,
    private readonly clock: Clock,
    private readonly options: { publicUrl: string },
  ) {}

  async create(projectId: string, userId: string): Promise<Result<PortalLinkView>> {
    const token = newLinkToken();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + PORTAL_LINK_TTL_MS);
    await this.links.insert({ tokenHash: digestOf(token), projectId, userId, createdAt: now, expiresAt });
    return ok({ url: this.urlOf(token), expires_at: expiresAt.toISOString() });
  }

  /** `GET /portal/{token}`: the first open spends the link on this browser; later ones need its session. */
  async open(token: string, session: string | undefined): Promise<PortalOutcome> {
    const member = await this.member(token, session);
    if (member.kind === 'in') return { kind: 'page', page: await this.page(member.projectId, member.userId), newSession: null };
    if (member.kind !== 'fresh') return { kind: member.kind };
    const secret = newLinkToken();
    const now = this.clock.now();
    // The claim and the read that explains a refusal see one state of the row.
    const claimed = await this.transactor.run(async (s) => {
      if (await s.portalLinks.claim(digestOf(token), { sessionHash: digestOf(secret), sessionExpiresAt: new Date(now.getTime() + PORTAL_SESSION_TTL_MS) }, now)) return 'claimed' as const;
      const row = await s.portalLinks.find(digestOf(token));
      return row && row.usedAt === null ? ('expired' as const) : ('used' as const);
    });
    if (claimed !== 'claimed') return { kind: claimed };
    return { kind: 'page', page: await this.page(member.projectId, member.userId), newSession: secret };
  }

  /** The page's "Manage billing": a Stripe customer portal session, from the browser the link was opened in. */
  async billing(token: string, session: string | undefined): Promise<BillingOutcome> {
    const member = await this.member(token, session);
    if (member.kind === 'fresh') return { kind: 'used' };
    if (member.kind !== 'in') return { kind: member.kind };
    const customer = await this.links.billingCustomer(member.projectId, member.userId);
    if (!customer) return { kind: 'no-customer' };
    const account = await this.accounts.secretsOf(customer.merchantAccountId);
    const secretKey = account && openOrNull(this.box, account.secretKeySealed);
    if (!secretKey) return { kind: 'unavailable' };
    const answer = await this.stripe.createBillingPortalSession(secretKey, { customer: customer.customerId, returnUrl: this.urlOf(token) });
    return answer.ok ? { kind: 'redirect', url: answer.url } : { kind: 'unavailable' };
  }

  private urlOf(token: string): string {
    return `${this.options.publicUrl}/portal/${token}`;
  }

  /** Who the link and the browser's session let in: `in` (the session), `fresh` (an unused link) or why not. */
  private async member(
    token: string,
    session: string | undefined,
  ): Promise<{ kind: 'in'; projectId: string; userId: string } | { kind: 'fresh'; projectId: string; userId: string } | { kind: 'unknown' } | { kind: 'expired' } | { kind: 'used' }> {
    const link = isLinkToken(token) ? await this.links.find(digestOf(token)) : null;
    if (!link) return { kind: 'unknown' };
    const now = this.clock.now().getTime();
    if (link.usedAt === null) return link.expiresAt.getTime() > now ? { kind: 'fresh', projectId: link.projectId, userId: link.userId } : { kind: 'expired' };
    const inSession =
      session !== undefined && isLinkToken(session) && link.sessionHash === digestOf(session) && link.sessionExpiresAt !== null && link.sessionExpiresAt.getTime() > now;
    return inSession ? { kind: 'in', projectId: link.projectId, userId: link.userId } : { kind: 'used' };
  }

  private async page(projectId: string, userId: string): Promise<PortalPage> {
    const [memberships, payments, customer] = await Promise.all([
      this.memberships.list(projectId, { userId, limit: 100, offset: 0 }),
      this.payments.list(projectId, { userId, limit: 20, offset: 0 }),
      this.links.billingCustomer(projectId, userId),
    ]);
    const planNames = new Map(memberships.items.map((m) => [m.plan_id, m.plan_name]));
    return {
      memberships: memberships.items.map((m) => ({ planName: m.plan_name ?? 'A plan no longer sold', status: m.status, endDate: m.membership_end_date, renewal: m.subscription_status })),
      payments: payments.items.map((p) => ({ date: p.created_at, amount: p.amount, currency: p.currency, status: p.status, planName: planNames.get(p.plan_id) ?? null })),
      canManageBilling: customer !== null,
    };
  }
}
