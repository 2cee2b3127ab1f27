import Type from 'typebox';
import { PROVIDERS } from '../../../domain/payments/merchant-accounts.service.js';
import { MAX_SECRET_LENGTH } from '../../../domain/payments/stripe-keys.js';
import { Envelope, errorResponses, InstantString, ProjectParams, Uuid } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** A merchant account as the API shows it: never a secret. */
export const MerchantAccount = Type.Object({
  merchant_account_id: Type.String({ format: 'uuid' }),
  provider: Type.String({ examples: ['stripe'] }),
  environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
  provider_account_id: Type.String({ description: "Stripe's id of the account the key belongs to (acct_…)" }),
  provider_account_name: Nullable(Type.String({ description: "The account's display name in Stripe" })),
  webhook_path: Type.String({
    description: "The path on tenure where Stripe must send this account's events: add a webhook endpoint in Stripe at tenure's public base URL + this path",
    examples: ['/v2/stripe/events/0b9a3c1e-7f0e-4a61-9a55-1b0c2f6c0a11'],
  }),
  webhook_secret_set: Type.Boolean({ description: "Whether the endpoint's signing secret (whsec_…) is stored; until it is, events sent to webhook_path are refused" }),
  created_at: InstantString,
  updated_at: InstantString,
});

const MerchantAccountParams = Type.Object({ project_id: Type.String(), merchant_account_id: Uuid('merchant_account_id') });

export const createMerchantAccountSchema = {
  summary: "Connect a merchant account (Stripe), or replace the key of the project's account of that provider and environment",
  description:
    'The secret key is checked with Stripe (GET /v1/account) before it is stored; it and the webhook signing secret are stored encrypted and never returned. ' +
    'PayPal and NOWPayments are refused with a 422 until they are built.',
  params: ProjectParams,
  body: Type.Object({
    provider: Type.Enum([...PROVIDERS], { 'x-message': `provider must be one of: ${PROVIDERS.join(', ')}` }),
    environment: Type.Enum(['sandbox', 'production'], {
      'x-message': 'environment must be one of: sandbox, production',
      description: 'sandbox: Stripe test mode (sk_test_ keys); production: live mode (sk_live_ keys)',
    }),
    secret_key: Type.String({ maxLength: MAX_SECRET_LENGTH, 'x-message': `secret_key must be a string of at most ${MAX_SECRET_LENGTH} characters`, description: 'A secret (sk_…) or restricted (rk_…) key' }),
    webhook_secret: Type.Optional(
      Type.String({ maxLength: MAX_SECRET_LENGTH, 'x-message': `webhook_secret must be a string of at most ${MAX_SECRET_LENGTH} characters`, description: "The signing secret (whsec_…) of the Stripe webhook endpoint pointing at webhook_path; left out, the stored one is kept" }),
    ),
  }),
  response: { 200: Envelope(MerchantAccount), 201: Envelope(MerchantAccount), ...errorResponses(422) },
};

export const listMerchantAccountsSchema = {
  summary: "List the project's merchant accounts, newest first (at most one per provider and environment: never paged)",
  params: ProjectParams,
  response: { 200: Envelope(Type.Array(MerchantAccount), true), ...errorResponses(422) },
};

export const getMerchantAccountSchema = {
  summary: 'Get a merchant account',
  params: MerchantAccountParams,
  response: { 200: Envelope(MerchantAccount), ...errorResponses(404, 422) },
};

export const deleteMerchantAccountSchema = {
  summary: 'Delete a merchant account: its secrets are deleted and its events refused; payments recorded stay',
  params: MerchantAccountParams,
  response: { 200: Envelope(Type.Null()), ...errorResponses(404, 422) },
};
