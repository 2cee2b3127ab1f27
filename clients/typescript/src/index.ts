import createClient, { type Client } from 'openapi-fetch';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { components, operations, paths } from './schema.js';

/**
 * The typed tenure client: openapi-fetch over the types openapi-typescript generated from the
 * server's OpenAPI document (`schema.d.ts`). Paths, parameters, bodies and every documented
 * response are typed; 429 and 503 answers are retried as `retry.ts` describes.
 *
 * ```ts
 * const tenure = createTenureClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.TENURE_KEY! });
 * const { data, error } = await tenure.PATCH('/v2/projects/{project_id}/memberships/{user_id}/extend', {
 *   params: { path: { project_id, user_id: '123' } },
 *   body: { extend: '2027-01-01T00:00:00.000Z' },
 * });
 * ```
 */

export interface TenureClientOptions extends Omit<RetryOptions, 'retries'> {
  /** Where tenure listens, e.g. `http://127.0.0.1:3000` (no trailing `/v2`). */
  baseUrl: string;
  /** An API key of the project (`tk_live_…`); sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Retries of a 429 or 503 after the first attempt (default 2; 0 turns retrying off). */
  retries?: number;
  /** A fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers added to every request. */
  headers?: Record<string, string>;
}

export type TenureClient = Client<paths>;

export function createTenureClient(options: TenureClientOptions): TenureClient {
  const { baseUrl, apiKey, fetch: fetchImpl, headers, ...retry } = options;
  const send = fetchImpl ?? ((request: Request) => globalThis.fetch(request));
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...headers, authorization: `Bearer ${apiKey}` },
    fetch: retryingFetch(send, retry),
  });
}

export type { components, operations, paths };
export { parseRetryAfter, RETRIED_STATUSES, retryDelayMs, retryingFetch, type RetryInfo, type RetryOptions } from './retry.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type HeadersLike,
  type SignatureScheme,
  type VerifyOptions,
  type WebhookEvent,
} from './webhooks.js';

/** The `data` of a response body, e.g. `Data<'getMemberships', 200>` is the array of memberships. */
export type Data<Op extends keyof operations, Status extends keyof operations[Op]['responses']> = operations[Op]['responses'][Status] extends {
  content: { 'application/json': { data: infer D } };
}
  ? D
  : never;
