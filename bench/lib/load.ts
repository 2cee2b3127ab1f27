import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import type { Tenant } from './seed.js';

/** One autocannon run's figures. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses that were not 200, plus connection errors and timeouts: must be 0 for a valid run. */
  failures: number;
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** Appended to the path: `?sql=bare` selects the raw server's bare UPDATE. */
  query?: string;
}

const YEAR_MS = 365 * 86_400_000;

/**
 * Drives `PATCH …/memberships/:user_id/extend` at `url` for `durationS` seconds. Every request
 * picks a random member and a random future end date (an ISO string, one of the two accepted
 * forms), so the load is spread over the whole table, never one hot row.
 */
export async function extendOneLoad(url: string, tenant: Tenant, options: LoadOptions): Promise<LoadResult> {
  const base = `/v2/projects/${tenant.projectId}/memberships/`;
  const suffix = `/extend${options.query ?? ''}`;
  const future = Date.now() + YEAR_MS;
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationS,
    requests: [
      {
        method: 'PATCH',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        setupRequest: (request) => {
          const user = 1 + Math.floor(Math.random() * tenant.members);
          const extend = new Date(future + Math.floor(Math.random() * YEAR_MS)).toISOString();
          return { ...request, path: `${base}${user}${suffix}`, body: JSON.stringify({ extend }) };
        },
      },
    ],
  });
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

/**
 * Waits for an answer as long as the caller's timeout allows: fetch's own dispatcher gives up on
 * an answer's headers after 300 s, and a bulk extend of a million members on embedded storage
 * takes longer.
 */
const patient = new Agent({ headersTimeout: 0, bodyTimeout: 0 });

/**
 * Wall-clock milliseconds of one bulk `PATCH …/memberships/extend`; checks it set `expected` rows.
 * Gives up after `timeoutMs` (300 s unless the caller waits longer).
 */
export async function timeBulkExtend(url: string, tenant: Tenant, timeoutMs = 300_000): Promise<number> {
  const extend = new Date(Date.now() + YEAR_MS).toISOString();
  const started = performance.now();
  const res = await request(`${url}/v2/projects/${tenant.projectId}/memberships/extend`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ extend }),
    signal: AbortSignal.timeout(timeoutMs),
    dispatcher: patient,
  });
  const body = (await res.body.json()) as { total?: number };
  const elapsed = performance.now() - started;
  if (res.statusCode !== 200 || body.total !== tenant.members) {
    throw new Error(`bulk extend at ${url} answered ${res.statusCode} ${JSON.stringify(body)}; expected total ${tenant.members}`);
  }
  return elapsed;
}
