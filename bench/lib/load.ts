import autocannon from 'autocannon';
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

/** Wall-clock milliseconds of one bulk `PATCH …/memberships/extend`; checks it set `expected` rows. */
export async function timeBulkExtend(url: string, tenant: Tenant): Promise<number> {
  const extend = new Date(Date.now() + YEAR_MS).toISOString();
  const started = performance.now();
  const res = await fetch(`${url}/v2/projects/${tenant.projectId}/memberships/extend`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ extend }),
    signal: AbortSignal.timeout(300_000),
  });
  const body = (await res.json()) as { total?: number };
  const elapsed = performance.now() - started;
  if (res.status !== 200 || body.total !== tenant.members) {
    throw new Error(`bulk extend at ${url} answered ${res.status} ${JSON.stringify(body)}; expected total ${tenant.members}`);
  }
  return elapsed;
}
