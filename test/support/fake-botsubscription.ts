import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local fake of the hosted product's v2 API (node:http on 127.0.0.1, port 0), the oracle of
 * `tenure import botsubscription`. Written from the product's documents (the interface and its
 * reference), not from what tenure sends:
 * - every path under `/v2/projects/{project_id}` needs `Authorization: Bearer <key>`; a key of
 *   another project is refused (403), a missing or unknown key too (401). These statuses and their
 *   bodies are tenure's reading of the gaps ("not shown" in the interface): the error envelope
 *   `{ok: false, request_id, method, path, code, error: {error_code, message}}`;
 * - successes use the envelope `{ok: true, request_id, method, path, code, total?, message, data}`;
 * - lists (`targets`, `plans`, `memberships`, `users`) take `limit` (default 20, users 10; at most
 *   100, more is a 422) and `offset` (default 0), newest first, `total` the number of objects;
 *   users also answer `limit` and `offset`; `GET /settings` answers every setting;
 * - an unknown path or project is a 404 NOT_FOUND;
 * - limits per key: `limit` requests a `windowMs` window (the product's: 100 a minute) and `burst`
 *   a second (20), each response with X-RateLimit-Limit / -Remaining / -Reset (Unix seconds); over
 *   either: 429 `{request_id, method, path, code: 429, error: {message, code: RATE_LIMIT_EXCEEDED,
 *   retry_after}}` with `Retry-After`. A request of a key sent before the time its last 429
 *   announced is counted in `ignored429`: a client that honours the limits leaves it at 0.
 */

export interface FakeProject {
  id: string;
  key: string;
  settings: Record<string, unknown>;
  targets: Record<string, unknown>[];
  plans: Record<string, unknown>[];
  memberships: Record<string, unknown>[];
  users: Record<string, unknown>[];
}

export interface FakeBotSubscriptionOptions {
  /** Requests per key per window (default 100) and the window (default a minute). */
  limit?: number;
  windowMs?: number;
  /** Requests per key per second (default 20). */
  burst?: number;
}

export interface FakeBotSubscription {
  url: string;
  /** Adds a project with the objects given (newest last: lists answer newest first). */
  project(p: Omit<FakeProject, 'id' | 'key'> & { id?: string; key?: string }): FakeProject;
  /** Every request received: method, path and the status answered. */
  readonly requests: { method: string; path: string; status: number }[];
  /** 429s answered, and requests sent before an announced retry time. */
  readonly counts: { refused429: number; ignored429: number };
  /** The next `n` requests of any key are refused with 429 and Retry-After 1 (the key's budget spent by another client). */
  refuseNext(n: number): void;
  /** After `n` more requests, every request answers 503 (the product down), until called with null. */
  failAfter(n: number | null): void;
  /** After `n` more requests, every request is held unanswered (a client to kill mid-way); null drops the held ones' connections. */
  holdAfter(n: number | null): void;
  /** Requests held unanswered now. */
  readonly held: number;
  close(): Promise<void>;
}

interface KeyState {
  windowStart: number;
  inWindow: number;
  secondStart: number;
  inSecond: number;
  retryAt: number;
}

export async function startFakeBotSubscription(options: FakeBotSubscriptionOptions = {}): Promise<FakeBotSubscription> {
  const limit = options.limit ?? 100;
  const windowMs = options.windowMs ?? 60_000;
  const burst = options.burst ?? 20;
  const projects = new Map<string, FakeProject>();
  const keys = new Map<string, KeyState>();
  const requests: FakeBotSubscription['requests'] = [];
  const counts = { refused429: 0, ignored429: 0 };
  let refuse = 0;
  let failIn: number | null = null;
  let holdIn: number | null = null;
  const held: ServerResponse[] = [];

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const path = (req.url ?? '/').split('?')[0]!;
    const envelope = { ...(status === 429 ? {} : { ok: status < 400 }), request_id: randomUUID(), method: req.method, path, code: status, ...body };
    requests.push({ method: req.method ?? '', path, status });
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(envelope));
  }
  const error = (req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, headers?: Record<string, string>) =>
    send(req, res, status, { error: { error_code: code, message } }, headers);

  function tooMany(req: IncomingMessage, res: ServerResponse, state: KeyState | null, seconds: number, headers: Record<string, string>) {
    counts.refused429 += 1;
    if (state) state.retryAt = Math.max(state.retryAt, Date.now() + seconds * 1000);
    send(
      req,
      res,
      429,
      { error: { message: `Rate limit exceeded. Please retry after ${seconds} seconds.`, code: 'RATE_LIMIT_EXCEEDED', retry_after: seconds } },
      { ...headers, 'retry-after': String(seconds) },
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = /^\/v2\/projects\/([^/]+)\/([a-z_-]+)$/.exec(url.pathname);
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!auth) return error(req, res, 401, 'UNAUTHORIZED', 'Missing or malformed Authorization header');
    const owner = [...projects.values()].find((p) => p.key === auth[1]);
    if (!owner) return error(req, res, 401, 'UNAUTHORIZED', 'Invalid API key');

    const now = Date.now();
    const state = keys.get(auth[1]!) ?? { windowStart: now, inWindow: 0, secondStart: now, inSecond: 0, retryAt: 0 };
    keys.set(auth[1]!, state);
    if (now < state.retryAt) counts.ignored429 += 1;
    if (now - state.windowStart >= windowMs) Object.assign(state, { windowStart: now, inWindow: 0 });
    if (now - state.secondStart >= 1_000) Object.assign(state, { secondStart: now, inSecond: 0 });
    const resetMs = state.windowStart + windowMs;
    const headers = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - state.inWindow - 1)),
      'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
    };
    if (refuse > 0) {
      refuse -= 1;
      return tooMany(req, res, state, 1, headers);
    }
    if (state.inWindow >= limit) return tooMany(req, res, state, Math.max(1, Math.ceil((resetMs - now) / 1000)), headers);
    if (state.inSecond >= burst) return tooMany(req, res, state, 1, headers);
    state.inWindow += 1;
    state.inSecond += 1;

    if (holdIn !== null) {
      if (holdIn <= 0) return void held.push(res);
      holdIn -= 1;
    }
    if (failIn !== null) {
      if (failIn <= 0) return error(req, res, 503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable', headers);
      failIn -= 1;
    }
    if (req.method !== 'GET' || !match) return error(req, res, 404, 'NOT_FOUND', 'Route not found', headers);
    const project = projects.get(match[1]!);
    if (!project) return error(req, res, 404, 'NOT_FOUND', 'Project not found', headers);
    if (project !== owner) return error(req, res, 403, 'FORBIDDEN', 'This API key cannot access this project', headers);

    const resource = match[2]!;
    if (resource === 'settings') return send(req, res, 200, { message: 'Settings retrieved successfully', data: project.settings }, headers);
    const lists = { targets: 'Targets retrieved successfully', plans: 'Plans retrieved successfully', memberships: 'All memberships retrieved successfully', users: 'Users retrieved successfully' } as const;
    if (!(resource in lists)) return error(req, res, 404, 'NOT_FOUND', 'Route not found', headers);
    const name = resource as keyof typeof lists;
    const limitParam = url.searchParams.get('limit');
    const offsetParam = url.searchParams.get('offset');
    const pageLimit = limitParam === null ? (name === 'users' ? 10 : 20) : Number(limitParam);
    const offset = offsetParam === null ? 0 : Number(offsetParam);
    if (!Number.isInteger(pageLimit) || pageLimit < 1 || pageLimit > 100) return error(req, res, 422, 'VALIDATION_ERROR', 'limit must be 1 to 100', headers);
    if (!Number.isInteger(offset) || offset < 0) return error(req, res, 422, 'VALIDATION_ERROR', 'offset must be 0 or more', headers);
    const all = [...project[name]].reverse();
    return send(
      req,
      res,
      200,
      { total: all.length, ...(name === 'users' ? { limit: pageLimit, offset } : {}), message: lists[name], data: all.slice(offset, offset + pageLimit) },
      headers,
    );
  }

  // Idle connections are kept a minute, as a production API's front does: with Node's default of
  // 5 s, a client writing a page for longer than that would find its next request's connection
  // closed under it (a retry, which a test of retries counts).
  const server = createServer({ keepAliveTimeout: 65_000 }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    project(p) {
      const project: FakeProject = { ...p, id: p.id ?? randomUUID(), key: p.key ?? `bs_${randomUUID().replace(/-/g, '')}` };
      projects.set(project.id, project);
      return project;
    },
    requests,
    counts,
    refuseNext(n) {
      refuse = n;
    },
    failAfter(n) {
      failIn = n;
    },
    holdAfter(n) {
      holdIn = n;
      if (n === null) for (const res of held.splice(0)) res.destroy();
    },
    get held() {
      return held.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const DAY = 86_400_000;
let snowflakes = 100_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9)) * 1_000_000n;
/** A fresh Discord-style id. */
export const nextSnowflake = (): string => String((snowflakes += 1n));
const snowflake = nextSnowflake;
const iso = (ms: number) => new Date(ms).toISOString();

/** A community as the product shows it: a guild with a role, a Telegram channel, a plan for each, `members` members. */
export function community(members: number): Omit<FakeProject, 'id' | 'key'> {
  const target = (o: { platform: string; kind: string; name: string; parent?: string | null }) => ({
    target_id: randomUUID(),
    target_name: o.name,
    platform: o.platform,
    kind: o.kind,
    external_id: o.platform === 'discord' ? snowflake() : `-100${snowflake().slice(-10)}`,
    is_enabled: true,
    plan_count: 1,
    parent_target_id: o.parent ?? null,
    participant_count: 0,
  });
  const guild = target({ platform: 'discord', kind: 'guild', name: 'Club' });
  const role = target({ platform: 'discord', kind: 'role', name: 'Members', parent: guild.target_id });
  const channel = target({ platform: 'telegram', kind: 'channel', name: 'Club news' });
  const plan = (name: string, price: string, duration: string, granted: Record<string, unknown>[]) => ({
    plan_id: randomUUID(),
    plan_name: name,
    plan_price: price,
    plan_currency: 'EUR',
    plan_duration: duration,
    plan_price_formatted: `€${price}`,
    plan_data: { plan_recurring: false, plan_one_time: true },
    plan_targets: granted,
  });
  const monthly = plan('Monthly', '9.99', '1 month', [role]);
  const yearly = plan('News', '99.00', '1 year', [channel]);
  const now = Date.now();
  const memberships = Array.from({ length: members }, (_, i) => {
    const onPlan = [monthly, yearly, null][i % 3];
    return {
      membership_id: randomUUID(),
      user_id: snowflake(),
      plan_id: onPlan?.plan_id ?? null,
      membership_start_date: iso(now - 10 * DAY),
      membership_end_date: iso(now + (i + 1) * DAY + 123),
      user_name: { first_name: `Member ${i}`, username: `member${i}` },
      plan_name: onPlan?.plan_name ?? null,
      plan_duration: onPlan?.plan_duration ?? null,
      subscription_id: null,
      subscription_status: null,
    };
  });
  const user = (user_id: string, is_banned: boolean) => ({
    user_id,
    user_first_seen: iso(now - 20 * DAY),
    user_last_seen: iso(now - DAY),
    is_admin: false,
    is_banned,
    user_name: null,
    balance: '0.00',
    currency: 'EUR',
  });
  return {
    settings: { default_language: 'de', timezone_preference: 'Europe/Berlin', default_currency: 'EUR', support_enabled: true, time_format_preference: '24h' },
    targets: [guild, role, channel],
    plans: [monthly, yearly],
    memberships,
    // The first member is banned too; two banned people never had a membership.
    users: [...memberships.map((m, i) => user(m.user_id, i === 0)), user(snowflake(), true), user(snowflake(), true)],
  };
}

