import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminQuery } from './admin.js';
import { databaseCpuSeconds, type Server } from './processes.js';
import type { TimingProxy } from './timing-proxy.js';

/**
 * `GET /pay/{id}` opened many times against a running server (bench/front-desk.ts), in one of two
 * shapes: a closed loop (`concurrency` opens in flight, the next sent as one ends: as fast as the
 * host goes, so at saturation it times the host's queue) or an open loop (one open every
 * 1/`rate` s whatever the others are doing: the arrivals a community sends, its queue only what
 * tenure makes of them). Each open's time is split three ways, per request:
 *
 * - whole: the bench's fetch, from sending to the last byte;
 * - Stripe's: the session create's time at the timing proxy (bench/lib/timing-proxy.ts), matched
 *   by the session's `metadata[user_id]`;
 * - the server's own: the `responseTime` of the server's `request completed` log line, matched by
 *   the `X-Request-Id` the bench sends, less the same Stripe time: tenure's work alone, without
 *   the bench's client (which shares its event loop with the proxy and both fakes) in it.
 */

export interface PayLink {
  user: string;
  url: string;
}

export type Shape = { kind: 'closed'; concurrency: number } | { kind: 'open'; rate: number };

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

export interface PayFigures {
  shape: Shape;
  links: number;
  total: Spread;
  stripe: Spread;
  /** Whole − Stripe's (the bench's figure since its first version: loopback and the client count as tenure's). */
  beyond: Spread;
  /** The server's logged time − Stripe's. */
  server: Spread;
  /** Stripe calls during the opens other than the session creates (none expected). */
  otherStripeCalls: number;
  perSecond: number;
  /** CPU per open (user + system): the server process, every `postgres` process, this process. */
  serverCpuMs: number;
  databaseCpuMs: number;
  /** The same for the PostgreSQL backends connected to the server's own database only: others' work on the shared server left out. */
  backendsCpuMs: number;
  benchCpuMs: number;
}

/** CPU ticks (user + system) of each PostgreSQL backend connected to `database`, by pid. */
async function backendTicks(adminUrl: string, database: string): Promise<Map<string, number>> {
  const pids = (await adminQuery(adminUrl, `SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE datname = '${database.replace(/'/g, "''")}'`)) ?? '';
  const ticks = new Map<string, number>();
  for (const pid of pids.split(',').filter(Boolean)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // Gone between the query and the read, or a server elsewhere.
    }
  }
  return ticks;
}

/**
 * CPU seconds of the server's own backends between two readings: a backend new since the first
 * counts from zero; one closed before the second is lost (the pool keeps its connections while busy).
 */
function backendSeconds(before: Map<string, number>, after: Map<string, number>): number {
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return after.size === 0 ? Number.NaN : ticks / 100;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const spread = (xs: number[]): Spread => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), max: xs.length ? Math.max(...xs) : Number.NaN });

/** Runs `fn` over `items`, `concurrency` at a time. */
export async function pool<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Each item at its tick (`rate` per second from now), not waiting for the earlier ones. */
async function paced<T, R>(items: readonly T[], rate: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const start = performance.now();
  const pending: Promise<R>[] = [];
  for (let i = 0; i < items.length; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(fn(items[i]!, i));
  }
  return Promise.all(pending);
}

/** responseTime of each `request completed` line of the server's log, by request id. */
function loggedTimes(logFile: string): Map<string, number> {
  const times = new Map<string, number>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"request completed"')) continue;
    try {
      const l = JSON.parse(line) as { request_id?: string; responseTime?: number };
      if (l.request_id && typeof l.responseTime === 'number') times.set(l.request_id, l.responseTime);
    } catch {
      // A line cut by the log's writer: skipped, and counted as missing below.
    }
  }
  return times;
}

/** Opens `links` in `shape`, the first `warmup` not counted. */
export interface Target {
  server: Server;
  /** The server's log (LOG_LEVEL info): its lines give the server's own time. */
  logFile: string;
  /** An admin URL of the PostgreSQL server, and the server's database on it. */
  adminUrl: string;
  database: string;
}

export async function openPayLinks(target: Target, proxy: TimingProxy, links: readonly PayLink[], warmup: number, shape: Shape, timeoutMs: number): Promise<PayFigures> {
  const { server, logFile } = target;
  const measuredCount = links.length - warmup;
  const from = proxy.calls.length;
  let cpuFrom = Number.NaN;
  let dbFrom = Number.NaN;
  let timeFrom = Number.NaN;
  let benchFrom = process.cpuUsage();
  // Read before the warm-up (an await inside the opens would delay the first measured one): this
  // figure is per open over all of them, warm-up included.
  const backendsFrom = await backendTicks(target.adminUrl, target.database);
  const open = async (link: PayLink, i: number) => {
    if (i === warmup) {
      cpuFrom = server.cpuSeconds();
      dbFrom = databaseCpuSeconds();
      benchFrom = process.cpuUsage();
      timeFrom = performance.now();
    }
    const requestId = randomUUID();
    const t0 = performance.now();
    const res = await fetch(link.url, { redirect: 'manual', headers: { accept: 'text/html', 'x-request-id': requestId }, signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    const ms = performance.now() - t0;
    const location = res.headers.get('location') ?? '';
    if (res.status !== 303 || !location.startsWith('https://checkout.stripe.com/')) {
      throw new Error(`front-desk bench: GET /pay/… answered ${res.status} (location ${location})\n${server.logTail()}`);
    }
    return { user: link.user, requestId, ms };
  };
  const opened = shape.kind === 'closed' ? await pool(links, shape.concurrency, open) : await paced(links, shape.rate, open);
  const serverCpuMs = ((server.cpuSeconds() - cpuFrom) * 1000) / measuredCount;
  const backendsCpuMs = (backendSeconds(backendsFrom, await backendTicks(target.adminUrl, target.database)) * 1000) / links.length;
  const databaseCpuMs = ((databaseCpuSeconds() - dbFrom) * 1000) / measuredCount;
  const bench = process.cpuUsage(benchFrom);
  const perSecond = (measuredCount * 1000) / (performance.now() - timeFrom);
  const creates = new Map<string, number>();
  let otherStripeCalls = 0;
  for (const c of proxy.calls.slice(from)) {
    const user = c.method === 'POST' && c.path.startsWith('/v1/checkout/sessions') ? new URLSearchParams(c.body).get('metadata[user_id]') : null;
    if (user) creates.set(user, (creates.get(user) ?? 0) + c.ms);
    else otherStripeCalls++;
  }
  // The log is written through pino's asynchronous destination: give the last lines a moment.
  await sleep(300);
  const logged = loggedTimes(logFile);
  const measured = opened.slice(warmup).map((o) => {
    const stripe = creates.get(o.user);
    if (stripe === undefined) throw new Error(`front-desk bench: no Checkout Session create seen for a pay link's member ${o.user}`);
    const own = logged.get(o.requestId);
    if (own === undefined) throw new Error(`front-desk bench: no 'request completed' line for request ${o.requestId} in ${logFile}`);
    return { total: o.ms, stripe, beyond: o.ms - stripe, server: own - stripe };
  });
  const of = (k: 'total' | 'stripe' | 'beyond' | 'server') => measured.map((m) => m[k]);
  return {
    shape,
    links: measured.length,
    total: spread(of('total')),
    stripe: spread(of('stripe')),
    beyond: spread(of('beyond')),
    server: spread(of('server')),
    otherStripeCalls,
    perSecond,
    serverCpuMs,
    databaseCpuMs,
    backendsCpuMs,
    benchCpuMs: (bench.user + bench.system) / 1000 / measuredCount,
  };
}
