import type { MerchantAccountsStore } from '../../store/merchant-accounts.store.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { MISSING_KEY_MESSAGE } from '../integrations/encryption-key.js';
import type { SecretBox } from '../integrations/secret-box.js';
import { SlidingBudget } from '../sliding-budget.js';
import { toMerchantAccountView, type MerchantAccountView } from './merchant-account.view.js';
import type { StripeApi, StripeRefusal } from './stripe-api.js';
import { normalizeSecretKey, normalizeWebhookSecret, type Environment } from './stripe-keys.js';

/**
 * A project's merchant accounts (docs/payments.md, "Connecting Stripe").
 * The secret key is checked with Stripe before anything is stored, sealed with the instance's
 * key like a bot token, and never leaves: no answer, event or log carries it, nor the webhook
 * signing secret.
 */

export const PROVIDERS = ['stripe', 'paypal', 'nowpayments'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface MerchantAccountInput {
  provider: Provider;
  environment: Environment;
  secret_key: string;
  webhook_secret?: string;
}

/** The merchant account statements the API's routes run (never a secret read). */
export type MerchantAccountStatements = Pick<MerchantAccountsStore, 'upsert' | 'list' | 'get' | 'delete'>;

/** Key checks a project may make a minute, per process: each is a call to Stripe, which limits an account's requests. */
export const KEY_CHECKS_PER_MINUTE = 10;

/**
 * What a refusal by Stripe is to the client: the key or the request is the client's to fix (422),
 * the rest is Stripe's (503). `keyAdvice` follows a refused key's message.
 */
export function errorOfRefusal(refusal: StripeRefusal, what: string, keyAdvice = 'Nothing was stored'): AppError {
  if (refusal.kind === 'key') return new AppError('VALIDATION_ERROR', `${refusal.message}. ${keyAdvice}`);
  if (refusal.kind === 'request') return new AppError('VALIDATION_ERROR', `Stripe refused ${what}: ${refusal.message}`);
  return new AppError('SERVICE_UNAVAILABLE', `${refusal.message}; try again in a moment`);
}

export class MerchantAccountsService {
  private readonly budget: SlidingBudget;

  constructor(
    private readonly store: MerchantAccountStatements,
    private readonly box: SecretBox | null,
    private readonly stripe: Pick<StripeApi, 'account'>,
    private readonly clock: Clock,
  ) {
    this.budget = new SlidingBudget(KEY_CHECKS_PER_MINUTE, 60_000, clock);
  }

  /**
   * Connects a merchant account, or replaces the key of the project's account of that provider and
   * environment (same id, same webhook path). Only Stripe is built: PayPal and NOWPayments are
   * refused with a 422 that says so.
   */
  async connect(projectId: string, input: MerchantAccountInput): Promise<Result<{ account: MerchantAccountView; created: boolean }>> {
    if (input.provider !== 'stripe') {
      return fail('VALIDATION_ERROR', `provider ${input.provider} is not supported yet: tenure takes payments with Stripe only (provider "stripe")`);
    }
    const key = normalizeSecretKey(input.secret_key, input.environment);
    if ('problem' in key) return fail('VALIDATION_ERROR', key.problem);
    const webhook = input.webhook_secret === undefined ? null : normalizeWebhookSecret(input.webhook_secret);
    if (webhook && 'problem' in webhook) return fail('VALIDATION_ERROR', webhook.problem);
    // Before Stripe is asked: without an encryption key the secrets could not be kept anyway.
    if (!this.box) return fail('SERVICE_UNAVAILABLE', MISSING_KEY_MESSAGE);
    const allowed = this.budget.take(projectId);
    if (!allowed.ok) {
      const message = `At most ${KEY_CHECKS_PER_MINUTE} Stripe key checks a minute per project; each is a call to Stripe`;
      return { ok: false, error: new AppError('RATE_LIMIT_EXCEEDED', message, undefined, allowed.retryAfterSeconds) };
    }
    const account = await this.stripe.account(key.key);
    if (!account.ok) return { ok: false, error: errorOfRefusal(account, 'the key check') };
    const { record, created } = await this.store.upsert(
      {
        projectId,
        provider: 'stripe',
        environment: input.environment,
        secretKeySealed: this.box.seal(key.key),
        webhookSecretSealed: webhook ? this.box.seal(webhook.secret) : null,
        providerAccountId: account.accountId,
        providerAccountName: account.name,
      },
      this.clock.now(),
    );
    return ok({ account: toMerchantAccountView(record), created });
  }

  /** Every account of the project: at most one per provider and environment, so never paged. */
  async list(projectId: string): Promise<{ items: MerchantAccountView[]; total: number }> {
    const { items, total } = await this.store.list(projectId);
    return { items: items.map(toMerchantAccountView), total };
  }

  async get(projectId: string, id: string): Promise<Result<MerchantAccountView>> {
    const record = await this.store.get(projectId, id);
    return record ? ok(toMerchantAccountView(record)) : fail('NOT_FOUND', 'Merchant account not found');
  }

  /** Disconnects: the row and its sealed secrets go; payments recorded stay, and events sent to its path are refused. */
  async delete(projectId: string, id: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, id)) ? ok(null) : fail('NOT_FOUND', 'Merchant account not found');
  }
}
