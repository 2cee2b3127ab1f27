import type { Clock } from '../clock.js';
import { digestOf, isLinkToken } from '../front-desk/link-tokens.js';
import type { PayLinkRecord } from '../front-desk/pay-link-statements.js';
import { DEFAULT_SETTINGS, SETTING_VALIDATORS, type Policies } from '../settings/settings.catalogue.js';

/**
 * The project's policies before payment (setting `policies`, docs/front-desk.md "Policies before
 * payment"): when it names terms, a privacy policy or a minimum age, a pay link first shows them
 * with one checkbox the buyer must tick ("I am at least N and accept …"); only then is the Stripe
 * Checkout Session made. The confirmation is recorded (what was shown, for which link, when) and
 * asked once per link.
 */

export interface PolicyStatements {
  /** The pay link by the digest of its token, or null. */
  linkOf(idHash: string): Promise<Pick<PayLinkRecord, 'projectId' | 'userId' | 'expiresAt' | 'completedAt'> | null>;
  /** The project's stored `policies` setting (as stored), or null when never set. */
  storedPolicies(projectId: string): Promise<unknown>;
  /** Whether the buyer of the link confirmed the policies already. */
  policiesConfirmed(projectId: string, payLinkIdHash: string): Promise<boolean>;
  /** Records the confirmation once per link. */
  confirmPolicies(c: { projectId: string; userId: string; payLinkIdHash: string; policies: Policies }, now: Date): Promise<void>;
}

/** What the page shows: the project's policies, when the link still has to ask for them. */
export type PolicyAsk = { kind: 'ask'; policies: Policies } | { kind: 'none' };

/** Whether the setting asks anything of a buyer. */
export const asksSomething = (p: Policies): boolean => p.terms !== null || p.privacy !== null || p.minimum_age !== null;

/** The one sentence the checkbox confirms, e.g. "I am at least 18 years old and I accept the terms of service and the privacy policy." */
export function confirmationSentence(p: Policies): string {
  const parts: string[] = [];
  if (p.minimum_age !== null) parts.push(`I am at least ${p.minimum_age} years old`);
  const docs = [p.terms ? 'the terms of service' : null, p.privacy ? 'the privacy policy' : null].filter((d): d is string => d !== null);
  if (docs.length > 0) parts.push(`I accept ${docs.join(' and ')}`);
  return `${parts.join(' and ')}.`;
}

export class CheckoutPolicies {
  constructor(
    private readonly store: PolicyStatements,
    private readonly clock: Clock,
  ) {}

  /**
   * What `GET /pay/{id}` must ask before making the session: the policies, when the link is open,
   * the project sets some and its buyer has not confirmed them; else nothing (the link goes on as
   * before, an unknown, expired or used one included).
   */
  async ask(token: string): Promise<PolicyAsk> {
    const found = await this.openLink(token);
    if (!found) return { kind: 'none' };
    const policies = await this.policiesOf(found.link.projectId);
    if (!asksSomething(policies)) return { kind: 'none' };
    if (await this.store.policiesConfirmed(found.link.projectId, found.hash)) return { kind: 'none' };
    return { kind: 'ask', policies };
  }

  /**
   * `POST /pay/{id}`: the buyer ticked the box (`confirmed`) for the policies they were shown.
   * Recorded with what the setting says now; `missing` when they did not tick it (the page asks
   * again). An unknown or closed link, or a project that asks nothing, records nothing.
   */
  async confirm(token: string, confirmed: boolean): Promise<{ kind: 'recorded' | 'none' } | { kind: 'missing'; policies: Policies }> {
    const found = await this.openLink(token);
    if (!found) return { kind: 'none' };
    const policies = await this.policiesOf(found.link.projectId);
    if (!asksSomething(policies)) return { kind: 'none' };
    if (!confirmed) return { kind: 'missing', policies };
    await this.store.confirmPolicies({ projectId: found.link.projectId, userId: found.link.userId, payLinkIdHash: found.hash, policies }, this.clock.now());
    return { kind: 'recorded' };
  }

  private async openLink(token: string) {
    if (!isLinkToken(token)) return null;
    const hash = digestOf(token);
    const link = await this.store.linkOf(hash);
    if (!link || link.completedAt || link.expiresAt.getTime() <= this.clock.now().getTime()) return null;
    return { hash, link };
  }

  private async policiesOf(projectId: string): Promise<Policies> {
    const stored = await this.store.storedPolicies(projectId);
    if (stored === null || stored === undefined) return DEFAULT_SETTINGS.policies;
    const checked = SETTING_VALIDATORS.policies(typeof stored === 'string' ? JSON.parse(stored) : stored);
    return checked.ok ? checked.value : DEFAULT_SETTINGS.policies;
  }
}
