import type { MerchantAccountRecord } from '../../store/merchant-accounts.store.js';

/** A merchant account as the API shows it: never a secret. */
export interface MerchantAccountView {
  merchant_account_id: string;
  provider: string;
  environment: string;
  /** The provider's id of the account (Stripe `acct_…`) and its display name, as the key check returned them. */
  provider_account_id: string;
  provider_account_name: string | null;
  /** Where the provider must send its events: tenure's path, under tenure's public base URL. */
  webhook_path: string;
  /** Whether the endpoint's signing secret is stored: without it, events sent to webhook_path are refused. */
  webhook_secret_set: boolean;
  created_at: string;
  updated_at: string;
}

/** tenure's route for one account's Stripe events (src/http/routes/stripe-events/). */
export const stripeWebhookPath = (merchantAccountId: string) => `/v2/stripe/events/${merchantAccountId}`;

export function toMerchantAccountView(r: MerchantAccountRecord): MerchantAccountView {
  return {
    merchant_account_id: r.id,
    provider: r.provider,
    environment: r.environment,
    provider_account_id: r.providerAccountId,
    provider_account_name: r.providerAccountName,
    webhook_path: stripeWebhookPath(r.id),
    webhook_secret_set: r.webhookSecretSet,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}
