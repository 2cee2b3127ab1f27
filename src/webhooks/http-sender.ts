import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { Pool } from 'undici';
import type { AttemptResult } from './retry-policy.js';

/**
 * Sends one webhook attempt with undici. Redirects are not followed (a 3xx is an answer, retried
 * like a failure), the whole attempt — connect, headers and body — has one deadline, and the
 * connection goes to the address the SSRF guard checked: each (origin, address) pair gets its own
 * connection pool whose DNS lookup is pinned to that address, so TLS still verifies the host
 * name while the socket can only reach the checked IP.
 */

/** What is kept of a response body: enough to debug a receiver, never the whole body. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** A response body is read (and thrown away) up to this size, so the connection can be reused. */
const RESPONSE_DRAIN_BYTES = 64 * 1024;
const POOLS_KEPT = 256;
const USER_AGENT = 'tenure-webhooks/1';

export interface SendRequest {
  url: URL;
  /** The checked address to connect to. */
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the attempt (shutdown); the result is then `aborted`. */
  signal?: AbortSignal;
}

export type SendResult = (AttemptResult & { durationMs: number; excerpt: string | null; message: string | null }) | { kind: 'aborted' };

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function classify(err: unknown): 'timeout' | 'tls' | 'connection' {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (TIMEOUT_CODES.has(code)) return 'timeout';
      if (TLS_CODE.test(code)) return 'tls';
    }
    e = (e as { cause?: unknown }).cause;
  }
  return 'connection';
}

/** A short, secret-free description of a network error for the delivery log. */
function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof e.code === 'string' ? e.code : typeof e.cause?.code === 'string' ? e.cause.code : null;
  const message = typeof e.cause?.message === 'string' ? e.cause.message : typeof e.message === 'string' ? e.message : 'request failed';
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 300);
}

/** Postgres text cannot hold NUL; a receiver's body may. */
const printable = (text: string) => text.replaceAll('\u0000', '');

export class HttpSender {
  private readonly pools = new LRUCache<string, Pool>({
    max: POOLS_KEPT,
    dispose: (pool) => {
      void pool.close().catch(() => undefined);
    },
  });

  private poolFor(url: URL, address: string, family: 4 | 6, timeoutMs: number): Pool {
    const key = `${url.origin}|${address}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(url.origin, {
        connect: { lookup: pinnedLookup(address, family), timeout: timeoutMs },
        keepAliveTimeout: 4_000,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  async send(request: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(request.timeoutMs);
    const signal = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const pool = this.poolFor(request.url, request.address, request.family, request.timeoutMs);
      const response = await pool.request({
        method: 'POST',
        path: `${request.url.pathname}${request.url.search}`,
        headers: { ...request.headers, 'user-agent': USER_AGENT, 'content-type': 'application/json' },
        body: request.body,
        signal,
        maxRedirections: 0,
      });
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        if (read < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
        read += chunk.length;
        if (read >= RESPONSE_DRAIN_BYTES) {
          response.body.destroy();
          break;
        }
      }
      const excerpt = read === 0 ? null : printable(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'));
      const retryAfter = response.headers['retry-after'];
      return {
        kind: 'response',
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        durationMs: elapsed(),
        excerpt,
        message: null,
      };
    } catch (err) {
      if (request.signal?.aborted && !deadline.aborted) return { kind: 'aborted' };
      if (deadline.aborted) {
        return { kind: 'error', errorClass: 'timeout', durationMs: elapsed(), excerpt: null, message: `no answer within ${request.timeoutMs} ms` };
      }
      return { kind: 'error', errorClass: classify(err), durationMs: elapsed(), excerpt: null, message: describe(err) };
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }
}
