/**
 * Verifying tenure's webhook requests. Every delivery is signed twice with the webhook's secret:
 *
 * - `X-Webhook-Signature: v1=<hex HMAC-SHA256(key = secret as ASCII, "<t>.<body>")>,t=<unix s>`
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` and
 *   `webhook-signature: v1,<base64 HMAC-SHA256(key = hex-decoded secret, "<id>.<t>.<body>")>`
 *
 * During a secret rotation each header carries one `v1` entry per secret; any match is enough.
 * Signatures are compared by Web Crypto's HMAC verify (constant time), and a timestamp further than
 * `toleranceSeconds` (300) from now is refused so that a captured request cannot be replayed later.
 * Web Crypto only: this runs unchanged on Node 20+, Deno, Bun, Cloudflare Workers and browsers.
 *
 * Verify the body exactly as received (the raw bytes), before any JSON parsing.
 */

export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export type SignatureScheme = 'tenure' | 'standard';

export interface VerifyOptions {
  /** The raw request body, exactly as received. */
  body: string | Uint8Array;
  headers: HeadersLike;
  /** The webhook's secret: the 64 hex characters tenure returned, or its `whsec_…` form. */
  secret: string;
  /** Which signature to check; by default Standard Webhooks when its headers are present, else tenure's. */
  scheme?: SignatureScheme;
  toleranceSeconds?: number;
  /** The current time (tests, or clocks you trust more than the host's). */
  now?: Date;
}

/** The event tenure sends (docs/webhooks.md, "Events"). */
export interface WebhookEvent<T = Record<string, unknown>> {
  event_id: string;
  type: string;
  project_id: string;
  emitted_at: number;
  data: T;
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

const encoder = new TextEncoder();
/** Bytes on an ArrayBuffer, as Web Crypto takes them. */
type Bytes = Uint8Array<ArrayBuffer>;
const DEFAULT_TOLERANCE_SECONDS = 300;

function header(headers: HeadersLike, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = found?.[1];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

const hexToBytes = (hex: string): Bytes | null =>
  /^(?:[0-9a-fA-F]{2})+$/.test(hex) ? Uint8Array.from(hex.match(/../g)!, (b) => parseInt(b, 16)) : null;

const bytesToHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

function base64ToBytes(b64: string): Bytes | null {
  try {
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** The secret's raw bytes (what Standard Webhooks keys with) from either of its written forms. */
function secretBytes(secret: string): Bytes {
  const bytes = secret.startsWith('whsec_') ? base64ToBytes(secret.slice('whsec_'.length)) : hexToBytes(secret);
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError('The secret must be 64 hex characters or whsec_<base64>');
  return bytes;
}

/** True when one of `signatures` is the HMAC-SHA256 of `message` under `key`. */
async function anyMatches(key: Bytes, message: Bytes, signatures: (Bytes | null)[]): Promise<boolean> {
  const cryptoKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  let matched = false;
  // Every candidate is checked, so the time taken does not tell which one matched.
  for (const signature of signatures) {
    if (signature && (await crypto.subtle.verify('HMAC', cryptoKey, signature, message))) matched = true;
  }
  return matched;
}

function concat(prefix: string, body: Uint8Array): Bytes {
  const head = encoder.encode(prefix);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

function checkTimestamp(raw: string | undefined | null, now: Date, toleranceSeconds: number): void {
  if (!raw || !/^\d+$/.test(raw)) throw new WebhookVerificationError('Missing or malformed signature timestamp');
  if (Math.abs(now.getTime() / 1000 - Number(raw)) > toleranceSeconds) {
    throw new WebhookVerificationError(`Signature timestamp is more than ${toleranceSeconds} seconds from now`);
  }
}

async function verifyTenure(o: Required<Omit<VerifyOptions, 'scheme'>>, body: Uint8Array): Promise<void> {
  const value = header(o.headers, 'x-webhook-signature');
  if (!value) throw new WebhookVerificationError('Missing X-Webhook-Signature header');
  const parts = value.split(',').map((p) => p.trim());
  const timestamp = parts.find((p) => p.startsWith('t='))?.slice(2);
  checkTimestamp(timestamp, o.now, o.toleranceSeconds);
  const signatures = parts.filter((p) => p.startsWith('v1=')).map((p) => hexToBytes(p.slice(3)));
  // tenure's own scheme keys the HMAC with the secret's hex text itself.
  const key = encoder.encode(bytesToHex(secretBytes(o.secret)));
  if (!(await anyMatches(key, concat(`${timestamp}.`, body), signatures))) {
    throw new WebhookVerificationError('No matching signature in X-Webhook-Signature');
  }
}

async function verifyStandard(o: Required<Omit<VerifyOptions, 'scheme'>>, body: Uint8Array): Promise<void> {
  const id = header(o.headers, 'webhook-id');
  const timestamp = header(o.headers, 'webhook-timestamp');
  const value = header(o.headers, 'webhook-signature');
  if (!id || !value) throw new WebhookVerificationError('Missing webhook-id or webhook-signature header');
  checkTimestamp(timestamp, o.now, o.toleranceSeconds);
  const signatures = value
    .split(' ')
    .filter((p) => p.startsWith('v1,'))
    .map((p) => base64ToBytes(p.slice(3)));
  if (!(await anyMatches(secretBytes(o.secret), concat(`${id}.${timestamp}.`, body), signatures))) {
    throw new WebhookVerificationError('No matching signature in webhook-signature');
  }
}

/**
 * Verifies a webhook request and returns its event. Throws WebhookVerificationError when the
 * signature does not match, a header is missing, or the timestamp is outside the tolerance.
 */
export async function verifyWebhook<T = Record<string, unknown>>(options: VerifyOptions): Promise<WebhookEvent<T>> {
  const body = typeof options.body === 'string' ? encoder.encode(options.body) : options.body;
  const o = {
    body: options.body,
    headers: options.headers,
    secret: options.secret,
    toleranceSeconds: options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
    now: options.now ?? new Date(),
  };
  const scheme = options.scheme ?? (header(o.headers, 'webhook-signature') ? 'standard' : 'tenure');
  await (scheme === 'standard' ? verifyStandard(o, body) : verifyTenure(o, body));
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent<T>;
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
}
