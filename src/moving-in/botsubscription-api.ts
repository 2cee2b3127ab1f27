import { SlidingBudget } from '../domain/sliding-budget.js';
import { SourceAccessError, SourceUnavailableError, type MoveInSource, type SourceList, type SourcePage } from '../domain/moving-in/source.js';

/**
 * The hosted product's v2 API as a move reads it (docs/moving-in.md): `Authorization: Bearer
 * <key>`, lists paged with `limit` and `offset`, the success envelope's `data` and `total`. It
 * keeps under the product's published limits by itself (100 requests a minute per key, 20 a
 * second) and does what the product says on top: a `X-RateLimit-Remaining` of 0 waits for
 * `X-RateLimit-Reset`, and a 429 waits its `Retry-After` before the same request is sent again,
 * since the product suspends keys that keep sending through its refusals. The key is sent and
 * nowhere else: no message of this file includes it.
 */

export const DEFAULT_BASE_URL = 'https://api.botsubscription.com';

export interface BotSubscriptionApiOptions {
  baseUrl: string;
  sourceProjectId: string;
  apiKey: string;
  /** Requests per minute and per second this client keeps under (the product's: 100 and 20). */
  perMinute?: number;
  perSecond?: number;
  /** How many times a request that failed (network, timeout, 5xx) is sent again, a doubling wait apart from 1 s. */
  retries?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export interface ApiStats {
  requests: number;
  /** 429s received (each waited out before the next request). */
  rateLimited: number;
}

const PAGE_SIZE = 100;
const TIMEOUT_MS = 30_000;
/** 429s in a row after which the source is taken to be refusing for good. */
const MAX_429_IN_A_ROW = 20;

type Answer = { kind: 'ok'; body: Record<string, unknown> } | { kind: 'retry'; why: string } | { kind: 'wait'; ms: number };

export class BotSubscriptionApi implements MoveInSource {
  readonly pageSize = PAGE_SIZE;
  readonly stats: ApiStats = { requests: 0, rateLimited: 0 };
  /** This client's own pace: the product's limits per minute and per second. */
  private readonly budgets: SlidingBudget[];
  private holdUntil = 0;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(private readonly o: BotSubscriptionApiOptions) {
    this.fetch = o.fetch ?? fetch;
    this.sleep = o.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = o.now ?? Date.now;
    const clock = { now: () => new Date(this.now()) };
    // The second's first: a turn it refuses then spends nothing of the minute's.
    this.budgets = [new SlidingBudget(o.perSecond ?? 20, 1_000, clock), new SlidingBudget(o.perMinute ?? 100, 60_000, clock)];
  }

  async page(list: SourceList, offset: number): Promise<SourcePage> {
    const body = await this.get(`/${list}?limit=${PAGE_SIZE}&offset=${offset}`);
    if (!Array.isArray(body.data) || typeof body.total !== 'number') {
      throw new SourceUnavailableError(`GET ${list}: the answer is not a list of the v2 API (no data array and total)`);
    }
    return { items: body.data as unknown[], total: body.total };
  }

  async settings(): Promise<Record<string, unknown>> {
    const body = await this.get('/settings');
    const data = body.data;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new SourceUnavailableError('GET settings: the answer is not the settings of the v2 API (no data object)');
    }
    return data as Record<string, unknown>;
  }

  /** GET of a path under the source project: waits its turn, sends, and sends again as the answers say. */
  private async get(path: string): Promise<Record<string, unknown>> {
    const url = `${this.o.baseUrl.replace(/\/+$/, '')}/v2/projects/${encodeURIComponent(this.o.sourceProjectId)}${path}`;
    const what = `GET ${path.split('?')[0]!.slice(1)}`;
    let failures = 0;
    let refusals = 0;
    for (;;) {
      await this.turn();
      const answer = await this.send(url, what);
      if (answer.kind === 'ok') return answer.body;
      if (answer.kind === 'wait') {
        if (++refusals > MAX_429_IN_A_ROW) throw new SourceUnavailableError(`${what}: still refused with 429 after ${MAX_429_IN_A_ROW} waits`);
        this.holdUntil = Math.max(this.holdUntil, this.now() + answer.ms);
        continue;
      }
      if (failures >= (this.o.retries ?? 5)) throw new SourceUnavailableError(`${what}: ${answer.why}`);
      await this.sleep(1_000 * 2 ** failures++);
    }
  }

  /** Waits until the limits (what the source announced, then this client's own) allow one more request. */
  private async turn(): Promise<void> {
    for (;;) {
      const held = this.holdUntil - this.now();
      if (held > 0) {
        await this.sleep(held);
        continue;
      }
      let wait = 0;
      for (const budget of this.budgets) {
        const taken = budget.take('source');
        if (!taken.ok) {
          wait = taken.retryAfterSeconds * 1000;
          break;
        }
      }
      if (wait === 0) break;
      await this.sleep(wait);
    }
    this.stats.requests += 1;
  }

  private async send(url: string, what: string): Promise<Answer> {
    let res: Response;
    try {
      res = await this.fetch(url, {
        headers: { authorization: `Bearer ${this.o.apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      return { kind: 'retry', why: `no answer from ${new URL(url).host} (${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message})` };
    }
    this.readLimitHeaders(res.headers);
    const body = await res.json().then(
      (b: unknown) => (typeof b === 'object' && b !== null ? (b as Record<string, unknown>) : {}),
      () => ({}) as Record<string, unknown>,
    );
    if (res.status === 429) {
      this.stats.rateLimited += 1;
      return { kind: 'wait', ms: retryAfterMs(res.headers.get('retry-after'), body, this.now()) };
    }
    if (res.ok && body.ok === true) return { kind: 'ok', body };
    const said = errorMessage(body);
    if (res.status === 401) throw new SourceAccessError(`the source refused the API key (401${said ? `: ${said}` : ''}); check BOTSUBSCRIPTION_API_KEY`);
    if (res.status === 403) {
      throw new SourceAccessError(`the API key may not read project ${this.o.sourceProjectId} (403${said ? `: ${said}` : ''}); use a key of that project`);
    }
    if (res.status === 404) throw new SourceAccessError(`${what}: not found (404${said ? `: ${said}` : ''}); check --source-project and --base-url`);
    if (res.status >= 500 || res.status === 408) return { kind: 'retry', why: `the source answered ${res.status}${said ? `: ${said}` : ''}` };
    throw new SourceUnavailableError(`${what}: the source answered ${res.status}${said ? `: ${said}` : ''}`);
  }

  /** A window with nothing left holds every request until the source's announced reset. */
  private readLimitHeaders(headers: Headers): void {
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const reset = Number(headers.get('x-ratelimit-reset'));
    if (headers.get('x-ratelimit-remaining') !== null && remaining <= 0 && Number.isFinite(reset) && reset > 0) {
      this.holdUntil = Math.max(this.holdUntil, reset * 1000);
    }
  }
}

/** `Retry-After` in seconds (or an HTTP date), else the body's `error.retry_after`, else a minute: the product's window. */
function retryAfterMs(header: string | null, body: Record<string, unknown>, now: number): number {
  if (header !== null && /^\d+$/.test(header.trim())) return Number(header) * 1000;
  if (header !== null && Number.isFinite(Date.parse(header))) return Math.max(0, Date.parse(header) - now);
  const error = body.error as { retry_after?: unknown } | undefined;
  if (typeof error?.retry_after === 'number') return error.retry_after * 1000;
  return 60_000;
}

/** The message of the envelope's `error` or first of its `errors`. */
function errorMessage(body: Record<string, unknown>): string | null {
  const error = body.error as { message?: unknown } | undefined;
  if (typeof error?.message === 'string') return error.message;
  const first = Array.isArray(body.errors) ? (body.errors[0] as { message?: unknown } | undefined) : undefined;
  return typeof first?.message === 'string' ? first.message : null;
}
