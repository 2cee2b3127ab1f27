import type { Logger } from 'pino';
import type { MerchantAccountsStore, MerchantAccountSecrets } from '../../store/merchant-accounts.store.js';
import { WakeLoop } from '../../wake-loop.js';
import type { Clock } from '../clock.js';
import { SecretBoxError, type SecretBox } from '../integrations/secret-box.js';
import type { StripeApi, StripeEventLike } from './stripe-api.js';
import type { StripeEventsService } from './stripe-events.service.js';

/**
 * Nothing missed (docs/payments.md, "Reconciliation"): every TENURE_PAYMENTS_RECONCILE_SECONDS
 * each Stripe account's recent events of the kinds tenure acts on are listed (`GET /v1/events`)
 * and applied oldest first, exactly as the webhook applies them: one Stripe did not deliver, or
 * whose delivery tenure refused (no webhook secret yet, a restart), is applied now; one applied
 * already is a duplicate and changes nothing. Each pass starts 5 minutes before where the last
 * one got to, so an event Stripe lists late is not skipped. Every worker process runs one; they
 * claim accounts with SKIP LOCKED.
 */

/** The event types tenure acts on (src/domain/payments/stripe-events.ts), the only ones listed. */
export const RECONCILED_TYPES = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.expired',
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'charge.refunded',
  'charge.dispute.created',
] as const;

const OVERLAP_MS = 5 * 60_000;
/** Stripe keeps events for 30 days: a first pass looks back that far from the account's connection. */
const FIRST_LOOKBACK_MS = 30 * 86_400_000;
const PAGE = 100;
/** A pass reads at most this many pages per account (10,000 events); the next pass goes on from where it got. */
const MAX_PAGES = 100;
const ACCOUNTS_PER_CLAIM = 20;

/** The reconciler's accounts: claimed when due, marked once their events are listed and applied. */
export type ReconciledAccounts = Pick<MerchantAccountsStore, 'claimDueForReconcile' | 'markReconciled'>;

export interface ReconcileOutcome {
  accounts: number;
  listed: number;
  applied: number;
}

export class StripeReconciler {
  private readonly loop: WakeLoop;

  constructor(
    private readonly accounts: ReconciledAccounts,
    private readonly events: Pick<StripeEventsService, 'apply'>,
    private readonly stripe: Pick<StripeApi, 'listEvents'>,
    private readonly box: SecretBox | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number },
  ) {
    this.loop = new WakeLoop(
      async () => {
        const outcome = await this.reconcileOnce();
        if (outcome.applied > 0) this.logger.warn(outcome, 'applied Stripe events the webhook had not delivered');
      },
      (err) => this.logger.error({ err }, 'reconciling Stripe events failed; trying again later'),
      Math.min(options.intervalMs, 60_000),
    );
  }

  /** One pass over the accounts due now. */
  async reconcileOnce(): Promise<ReconcileOutcome> {
    const total: ReconcileOutcome = { accounts: 0, listed: 0, applied: 0 };
    for (;;) {
      const due = await this.accounts.claimDueForReconcile(this.clock.now(), this.options.intervalMs, ACCOUNTS_PER_CLAIM);
      for (const account of due) {
        const one = await this.reconcileAccount(account);
        total.accounts += 1;
        total.listed += one.listed;
        total.applied += one.applied;
      }
      if (due.length < ACCOUNTS_PER_CLAIM || this.loop.isStopped) return total;
    }
  }

  private async reconcileAccount(account: MerchantAccountSecrets & { reconciledThrough: Date | null; createdAt: Date }): Promise<{ listed: number; applied: number }> {
    if (!this.box) return { listed: 0, applied: 0 };
    let secretKey: string;
    try {
      secretKey = this.box.open(account.secretKeySealed);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      this.logger.warn({ merchant_account_id: account.id, reason: err.message }, 'cannot open a merchant account key to reconcile it');
      return { listed: 0, applied: 0 };
    }
    const startedAt = this.clock.now();
    const since = account.reconciledThrough ? account.reconciledThrough.getTime() - OVERLAP_MS : account.createdAt.getTime() - FIRST_LOOKBACK_MS;
    const listed: StripeEventLike[] = [];
    let after: string | null = null;
    let complete = false;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.stripe.listEvents(secretKey, { since: Math.floor(since / 1000), types: RECONCILED_TYPES, startingAfter: after, limit: PAGE });
      if (!answer.ok) {
        this.logger.warn({ merchant_account_id: account.id, reason: answer.message }, 'Stripe did not list events for reconciliation');
        break;
      }
      listed.push(...answer.events);
      if (!answer.hasMore || answer.events.length === 0) {
        complete = true;
        break;
      }
      after = answer.events.at(-1)!.id;
    }
    // Stripe lists newest first; applied oldest first, as they happened.
    listed.sort((a, b) => a.created - b.created);
    let applied = 0;
    for (const event of listed) {
      const receipt = await this.events.apply(account, event, 'reconcile');
      if (receipt.result === 'applied') applied += 1;
    }
    // Only a complete listing moves the mark; otherwise the next pass starts from the same place.
    if (complete) await this.accounts.markReconciled(account.id, startedAt);
    return { listed: listed.length, applied };
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
