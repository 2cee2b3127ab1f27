/** A membership as the API and events show it (docs/memberships.md, "The membership object"). */
export interface MembershipView {
  membership_id: string;
  user_id: string;
  plan_id: string | null;
  membership_start_date: string;
  membership_end_date: string;
  user_name: { first_name: string | null; username: string | null } | null;
  plan_name: string | null;
  plan_duration: string | null;
  subscription_id: string | null;
  subscription_status: string | null;
  status: 'active' | 'expired';
  /** tenure's, only on a membership that began with a Stripe trial (docs/payments.md, "Trials"): when the trial ends. */
  trial_ends_at?: string;
  /** With trial_ends_at: true while the membership is active and ends when its trial does (not converted yet). */
  in_trial?: boolean;
}
