import type { WebhookRecord } from '../../store/webhooks.store.js';

/** A webhook as the API shows it: never its secret (that is shown only at creation and rotation). */
export interface WebhookView {
  id: string;
  url: string;
  enabled: boolean;
  /** `manual` (disabled through the API) or `failing` (5 days of only failed attempts); null while enabled. */
  disabled_reason: 'manual' | 'failing' | null;
  disabled_at: string | null;
  /** The first failed attempt since the last success; null when the last attempt succeeded. */
  failing_since: string | null;
  /** Until when the secret replaced by the last rotation still signs; null when none does. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toWebhookView(record: WebhookRecord, now: Date): WebhookView {
  const graceOpen = record.previousSecretExpiresAt !== null && record.previousSecretExpiresAt > now;
  return {
    id: record.id,
    url: record.url,
    enabled: record.enabled,
    disabled_reason: record.enabled ? null : ((record.disabledReason as 'manual' | 'failing' | null) ?? 'manual'),
    disabled_at: record.enabled ? null : iso(record.disabledAt),
    failing_since: iso(record.failingSince),
    previous_secret_expires_at: graceOpen ? iso(record.previousSecretExpiresAt) : null,
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
  };
}
