/**
 * How Stripe's secrets are taken (docs/payments.md, "Connecting Stripe"): the shapes Stripe gives
 * them, checked before Stripe is asked, so a pasted publishable key or a live key for a sandbox
 * account is named as such instead of being sent.
 */

export type Environment = 'sandbox' | 'production';

/** Stripe's keys are about 100 characters today; the bound leaves room for a longer format. */
export const MAX_SECRET_LENGTH = 500;

const SECRET_KEY = /^(sk|rk)_(test|live)_[A-Za-z0-9]+$/;
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]+$/;

/** The mode a key works in: test-mode keys reach Stripe's sandbox, live-mode keys production. */
const MODE_OF: Record<Environment, 'test' | 'live'> = { sandbox: 'test', production: 'live' };

/** The secret key as Stripe takes it, or why `raw` cannot be one for `environment` (a VALIDATION_ERROR message). */
export function normalizeSecretKey(raw: string, environment: Environment): { key: string } | { problem: string } {
  const key = raw.trim();
  if (key.length === 0) return { problem: 'secret_key must not be empty: copy it from the Stripe Dashboard (Developers, API keys)' };
  if (key.length > MAX_SECRET_LENGTH) return { problem: `secret_key must be at most ${MAX_SECRET_LENGTH} characters` };
  if (/^pk_(test|live)_/.test(key)) return { problem: 'secret_key is a publishable key (pk_…): give the secret key (sk_…) or a restricted key (rk_…)' };
  const shape = SECRET_KEY.exec(key);
  if (!shape) return { problem: 'secret_key must be a Stripe secret key (sk_test_…, sk_live_…) or restricted key (rk_test_…, rk_live_…)' };
  if (shape[2] !== MODE_OF[environment]) {
    return { problem: `secret_key is a ${shape[2]}-mode key but environment is ${environment}: ${environment} takes ${MODE_OF[environment]}-mode keys (${shape[1]}_${MODE_OF[environment]}_…)` };
  }
  return { key };
}

/** The webhook endpoint's signing secret as Stripe shows it (`whsec_…`), or why `raw` is not one. */
export function normalizeWebhookSecret(raw: string): { secret: string } | { problem: string } {
  const secret = raw.trim();
  if (secret.length > MAX_SECRET_LENGTH) return { problem: `webhook_secret must be at most ${MAX_SECRET_LENGTH} characters` };
  if (!WEBHOOK_SECRET.test(secret)) return { problem: "webhook_secret must be the endpoint's signing secret as Stripe shows it (whsec_…)" };
  return { secret };
}
