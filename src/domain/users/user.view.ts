/** A user as the API shows it (docs/api-keys-settings-users.md, "Users"). */
export interface UserView {
  user_id: string;
  user_first_seen: string;
  user_last_seen: string;
  is_admin: boolean;
  is_banned: boolean;
  user_name: { first_name: string | null; username: string | null } | null;
  /** Decimal string with two fraction digits. */
  balance: string;
  currency: string;
  /** The platforms whose bot cannot write to the user (docs/front-desk.md, "Members the bot cannot reach"); empty when reachable. */
  unreachable: UnreachableView[];
  /** tenure's: the e-mail Stripe Checkout collected, kept with the setting collect_email_on_subscribe; present only when there is one. */
  email?: string;
}

export interface UnreachableView {
  platform: 'discord' | 'telegram';
  /** `dm_closed`, `bot_blocked` or `no_conversation`, as `notification.failed` said. */
  reason: string;
  since: string;
}

export interface BanView {
  user_id: string;
  banned_at: string;
  /** The id of the API key that banned the user. */
  banned_by: string | null;
  banned_reason: string | null;
}
