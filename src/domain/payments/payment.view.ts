/** A payment as the API and events show it (docs/payments.md, "Payments"). */
export interface PaymentView {
  payment_id: string;
  provider: string;
  /** Null once the merchant account is deleted. */
  merchant_account_id: string | null;
  user_id: string;
  plan_id: string | null;
  /** Decimal string in the currency's unit ("29.99"), as plan prices are. */
  amount: string;
  /** In the currency's smallest unit, as Stripe counts it (2999). */
  amount_minor: number;
  /** ISO 4217, upper-case. */
  currency: string;
  status: 'succeeded' | 'refunded' | 'disputed' | 'failed';
  checkout_session_id: string | null;
  payment_intent_id: string | null;
  invoice_id: string | null;
  subscription_id: string | null;
  customer_id: string | null;
  created_at: string;
  updated_at: string;
}
