import { createHmac } from 'node:crypto';

/**
 * Webhook signatures (docs/webhooks.md, "Verifying"; docs/api-contract.md, "Events and webhook signing").
 * Every attempt carries two independent signatures of the same body bytes:
 *
 * - the product's own, for receivers written for the original:
 *   `X-Webhook-Signature: v1=<hex HMAC-SHA256(key = secret as ASCII, "<t>.<body>")>,t=<unix s>`
 * - Standard Webhooks (standardwebhooks.com), verifiable with its libraries:
 *   `webhook-signature: v1,<base64 HMAC-SHA256(key = hex-decoded secret, "<id>.<t>.<body>")>`
 *   with the secret presented to receivers as `whsec_` + base64(hex-decoded secret).
 *
 * During a secret rotation both secrets sign: one `v1` entry per secret, newest first, in both
 * headers. Receivers accept a request when any entry matches.
 */

export interface SigningInput {
  /** The event id: `X-Webhook-Id` and `webhook-id`. */
  eventId: string;
  /** Unix seconds. */
  timestamp: number;
  body: string;
  /** 64-hex secrets, current first; a rotated-out secret follows while its grace period lasts. */
  secrets: readonly string[];
}

/** `v1=<hex>` of the product's scheme for one secret. */
export function productSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'ascii')).update(`${timestamp}.${body}`).digest('hex');
}

/** The base64 signature of the Standard Webhooks scheme for one secret. */
export function standardSignature(secret: string, eventId: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'hex')).update(`${eventId}.${timestamp}.${body}`).digest('base64');
}

/** The secret as Standard Webhooks libraries take it. */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'hex').toString('base64')}`;
}

/** The three signature-bearing headers (lower-case names), both schemes. */
export function signatureHeaders(input: SigningInput): Record<string, string> {
  const { eventId, timestamp, body, secrets } = input;
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign');
  return {
    'x-webhook-signature': [...secrets.map((s) => `v1=${productSignature(s, timestamp, body)}`), `t=${timestamp}`].join(','),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => `v1,${standardSignature(s, eventId, timestamp, body)}`).join(' '),
  };
}
