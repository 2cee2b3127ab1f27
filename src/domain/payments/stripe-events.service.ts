import type { MerchantAccountsStore, MerchantAccountSecrets } from '../../store/merchant-accounts.store.js';
import type { StripeEventsStore } from '../../store/stripe-events.store.js';
import { fail, ok, type Result } from '../errors.js';
import { MISSING_KEY_MESSAGE } from '../integrations/encryption-key.js';
import { SecretBoxError, type SecretBox } from '../integrations/secret-box.js';
import type { StripeApi, StripeEventLike } from './stripe-api.js';
import { changeOf } from './stripe-events.js';

/**
 * Stripe's events in, access out (docs/payments.md, "What each Stripe event does"). The webhook route hands each delivery here: the `Stripe-Signature` is checked with
 * the account's signing secret (stripe-node's constructEvent) before anything is read, then the
 * event is applied once (StripeEventsStore). Reconciliation applies the events it lists the same
 * way, so an event that came both ways is applied once.
 */

export interface Receipt {
  event_id: string;
  type: string;
  /** `applied` (first time, whatever it did), `duplicate` (applied before: nothing changed). */
  result: 'applied' | 'duplicate';
  /** What applying it did, in words (also kept in payment_events.outcome); null for a duplicate. */
  outcome: string | null;
}

export class StripeEventsService {
  constructor(
    private readonly accounts: MerchantAccountsStore,
    private readonly store: StripeEventsStore,
    private readonly box: SecretBox | null,
    private readonly stripe: StripeApi,
    private readonly options: { graceMs: number },
  ) {}

  /** One delivery to `/v2/stripe/events/{merchant_account_id}`: its raw body and its Stripe-Signature header. */
  async receive(merchantAccountId: string, payload: string, signature: string | undefined): Promise<Result<Receipt>> {
    const account = await this.accounts.secretsOf(merchantAccountId);
    if (!account || account.provider !== 'stripe') return fail('NOT_FOUND', 'Merchant account not found');
    if (!account.webhookSecretSealed) {
      return fail('CONFLICT', "This merchant account has no webhook_secret: post the account again with its Stripe endpoint's signing secret (whsec_…)");
    }
    const secret = this.open(account.webhookSecretSealed);
    if (!secret.ok) return secret;
    if (!signature) return fail('BAD_REQUEST', 'The Stripe-Signature header is missing');
    const event = this.stripe.verifyEvent(payload, signature, secret.value);
    if (!event) return fail('BAD_REQUEST', 'The Stripe-Signature header does not sign this body with the account\'s webhook secret, or is older than 5 minutes');
    return ok(await this.apply(account, event, 'webhook'));
  }

  /** Applies a verified event of `account` once; the way it came is recorded. */
  async apply(account: Pick<MerchantAccountSecrets, 'id' | 'projectId' | 'environment'>, event: StripeEventLike, source: 'webhook' | 'reconcile'): Promise<Receipt> {
    // A test-mode event never changes a production account's members, nor the reverse.
    const change =
      event.livemode === (account.environment === 'production')
        ? changeOf(event)
        : { kind: 'ignored' as const, reason: `a ${event.livemode ? 'live' : 'test'}-mode event for a ${account.environment} account` };
    const outcome = await this.store.apply(
      { merchantAccountId: account.id, projectId: account.projectId, eventId: event.id, type: event.type, createdAt: new Date(event.created * 1000), source },
      change,
      { graceMs: this.options.graceMs },
    );
    return { event_id: event.id, type: event.type, result: outcome === null ? 'duplicate' : 'applied', outcome };
  }

  private open(sealed: string): Result<string> {
    if (!this.box) return fail('SERVICE_UNAVAILABLE', MISSING_KEY_MESSAGE);
    try {
      return ok(this.box.open(sealed));
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      return fail('CONFLICT', `The stored webhook_secret cannot be opened (${err.message}); post the account again with it`);
    }
  }
}
