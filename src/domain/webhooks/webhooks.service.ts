import { randomBytes } from 'node:crypto';
import type { DeliveryLogStore, DeliveryView } from '../../store/delivery-log.store.js';
import type { WebhooksStore } from '../../store/webhooks.store.js';
import { resolveDestination, type Resolver } from '../../webhooks/ssrf-guard.js';
import type { Clock } from '../clock.js';
import { AppError, fail, ok, type Result } from '../errors.js';
import { formatInstant, parseInstant } from '../instant.js';
import { SlidingBudget } from '../sliding-budget.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import { toWebhookView, type WebhookView } from './webhook.view.js';

/** The statements of WebhooksStore this uses (a narrow port: tests give it a small twin). */
export type WebhooksStatements = Pick<WebhooksStore, 'count' | 'createWithin' | 'delete' | 'get' | 'insertTestEvent' | 'list' | 'rotateSecret' | 'setEnabled'>;

/** The statements of DeliveryLogStore this uses (a narrow port: tests give it a small twin). */
export type DeliveryLogStatements = Pick<DeliveryLogStore, 'get' | 'list' | 'replayOne' | 'replayRange'>;

export interface CreatedWebhook {
  id: string;
  url: string;
  secret: string;
}

export interface RotatedSecret extends WebhookView {
  secret: string;
}

const MAX_URL_LENGTH = 2048;
/** How long a rotated-out secret keeps signing next to the new one, so receivers can switch over. */
export const SECRET_GRACE_MS = 24 * 3600 * 1000;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;

/** What a refused local or plain-http destination adds: how a developer's own receiver is allowed. */
export const ALLOW_PRIVATE_HINT = 'a receiver on this machine or a private network is allowed only when the server runs with TENURE_WEBHOOK_ALLOW_PRIVATE=true';

/** Checks a webhook destination: an absolute http(s) URL; plain http only where private targets are allowed. */
export function checkWebhookUrl(url: string, allowPlainHttp: boolean): string | null {
  if (url.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  if (!URL.canParse(url)) return 'url must be an absolute http or https URL';
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'url must be an absolute http or https URL';
  if (parsed.protocol === 'http:' && !allowPlainHttp) return `url must use https (${ALLOW_PRIVATE_HINT})`;
  if (parsed.username || parsed.password) return 'url must not contain credentials';
  // Where private targets are not allowed, neither are the well-known ports of other services.
  const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  if (!allowPlainHttp && port !== 80 && port !== 443 && port < 1024) return `url port must be 80, 443, or 1024 and above (${ALLOW_PRIVATE_HINT})`;
  return null;
}

export interface WebhooksOptions {
  allowPrivate: boolean;
  maxPerProject: number;
  resolve: Resolver;
}

const newSecret = () => randomBytes(32).toString('hex');

/** Events one range replay sends at most; a longer range is refused with where to stop. */
export const MAX_REPLAY_EVENTS = 1_000;
/** Range replays a project may ask for a minute, per node (each may queue MAX_REPLAY_EVENTS deliveries). */
export const REPLAYS_PER_MINUTE = 10;
const NOT_FOUND = 'Webhook not found';
const DISABLED = 'Webhook is disabled; enable it first';

export class WebhooksService {
  private readonly replays: SlidingBudget;

  constructor(
    private readonly store: WebhooksStatements,
    private readonly deliveries: DeliveryLogStatements,
    /** Seals the secrets at rest with the instance's key (webhook-secrets.ts). */
    private readonly secrets: WebhookSecrets,
    private readonly clock: Clock,
    private readonly options: WebhooksOptions,
  ) {
    this.replays = new SlidingBudget(REPLAYS_PER_MINUTE, 60_000, clock);
  }

  /**
   * Creates a webhook. The secret (64 lowercase hex) is returned here, the only time it is shown (it is
   * stored sealed with the instance's key when there is one); deliveries are signed with it. The
   * host is resolved now and every address checked (SSRF guard). A name that does not resolve is
   * accepted: it reaches no address, and a receiver's DNS is often set up after its webhook; each
   * send resolves again, and a name that still does not resolve is a failed, retried attempt.
   */
  async create(projectId: string, url: string): Promise<Result<CreatedWebhook>> {
    const problem = checkWebhookUrl(url, this.options.allowPrivate);
    if (problem) return fail('VALIDATION_ERROR', problem);
    // The cap first: a project at its cap makes no DNS lookup (createWithin still holds it exactly).
    if ((await this.store.count(projectId)) >= this.options.maxPerProject) return this.full();
    const destination = await resolveDestination(url, this.options);
    if (!destination.ok && destination.errorClass === 'blocked_address') {
      return fail('VALIDATION_ERROR', `url host ${destination.message} (${ALLOW_PRIVATE_HINT})`);
    }
    const secret = newSecret();
    const hook = await this.store.createWithin({ projectId, url, storedSecret: this.secrets.toStored(secret) }, this.options.maxPerProject);
    if (!hook) return this.full();
    return ok({ url: hook.url, id: hook.id, secret });
  }

  private full<T>(): Result<T> {
    return fail('CONFLICT', `A project can have at most ${this.options.maxPerProject} webhooks; delete one first`);
  }

  /** Deletes a webhook. Its deliveries go with it: pending ones are never attempted. */
  async delete(projectId: string, webhookId: string): Promise<Result<null>> {
    return (await this.store.delete(projectId, webhookId)) ? ok(null) : fail('NOT_FOUND', NOT_FOUND);
  }

  async list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: WebhookView[]; total: number }> {
    const found = await this.store.list(projectId, page);
    const now = this.clock.now();
    return { items: found.items.map((w) => toWebhookView(w, now)), total: found.total };
  }

  async get(projectId: string, webhookId: string): Promise<Result<WebhookView>> {
    const hook = await this.store.get(projectId, webhookId);
    return hook ? ok(toWebhookView(hook, this.clock.now())) : fail('NOT_FOUND', NOT_FOUND);
  }

  /**
   * A new secret, returned once. The old one keeps signing next to it for 24 hours; rotating again
   * within them retires the older secret at once (two secrets sign at most).
   */
  async rotateSecret(projectId: string, webhookId: string): Promise<Result<RotatedSecret>> {
    const now = this.clock.now();
    const secret = newSecret();
    const hook = await this.store.rotateSecret(projectId, webhookId, this.secrets.toStored(secret), now, new Date(now.getTime() + SECRET_GRACE_MS));
    return hook ? ok({ ...toWebhookView(hook, now), secret }) : fail('NOT_FOUND', NOT_FOUND);
  }

  /** Enabling clears the failure streak; disabling cancels pending deliveries (replay brings them back). */
  async setEnabled(projectId: string, webhookId: string, enabled: boolean): Promise<Result<WebhookView>> {
    const now = this.clock.now();
    const hook = await this.store.setEnabled(projectId, webhookId, enabled, now, 'manual');
    return hook ? ok(toWebhookView(hook, now)) : fail('NOT_FOUND', NOT_FOUND);
  }

  /** Sends a `webhook.test` event to this webhook only. */
  async sendTest(projectId: string, webhookId: string): Promise<Result<{ event_id: string; delivery_id: string }>> {
    const sent = await this.store.insertTestEvent(projectId, webhookId, 'This is a test event from tenure.');
    if (sent) return ok({ event_id: sent.eventId, delivery_id: sent.deliveryId });
    return this.missingOrDisabled(projectId, webhookId);
  }

  async listDeliveries(
    projectId: string,
    webhookId: string,
    filter: { status?: string; limit: number; offset: number },
  ): Promise<Result<{ items: DeliveryView[]; total: number }>> {
    if (!(await this.store.get(projectId, webhookId))) return fail('NOT_FOUND', NOT_FOUND);
    return ok(await this.deliveries.list(projectId, webhookId, filter));
  }

  async getDelivery(projectId: string, webhookId: string, deliveryId: string): Promise<Result<DeliveryView>> {
    const found = await this.deliveries.get(projectId, webhookId, deliveryId);
    return found ? ok(found) : fail('NOT_FOUND', 'Delivery not found');
  }

  /** A new delivery of the same event, same body bytes and event id, due at once; the pending one if the event's delivery is still pending. */
  async replayDelivery(projectId: string, webhookId: string, deliveryId: string): Promise<Result<DeliveryView>> {
    const id = await this.deliveries.replayOne(projectId, webhookId, deliveryId, this.clock.now());
    if (id) return this.getDelivery(projectId, webhookId, id);
    const hook = await this.store.get(projectId, webhookId);
    if (!hook) return fail('NOT_FOUND', NOT_FOUND);
    if (!(await this.deliveries.get(projectId, webhookId, deliveryId))) return fail('NOT_FOUND', 'Delivery not found');
    return fail('CONFLICT', DISABLED);
  }

  /**
   * Sends again every event of the project emitted in [since, until) (until: now) to this webhook,
   * except those whose delivery to it is still pending; at most MAX_REPLAY_EVENTS a call, and
   * REPLAYS_PER_MINUTE calls a minute per project (docs/webhooks.md, "Replays").
   */
  async replayRange(
    projectId: string,
    webhookId: string,
    range: { since: string; until?: string | undefined },
  ): Promise<Result<{ replayed: number; since: string; until: string }>> {
    const now = this.clock.now();
    const since = parseInstant(range.since);
    if (!since) return fail('VALIDATION_ERROR', 'since must be a UTC ISO-8601 datetime with exactly three millisecond digits (YYYY-MM-DDTHH:MM:SS.mmmZ)');
    const until = range.until === undefined ? now : parseInstant(range.until);
    if (!until) return fail('VALIDATION_ERROR', 'until must be a UTC ISO-8601 datetime with exactly three millisecond digits (YYYY-MM-DDTHH:MM:SS.mmmZ)');
    if (since >= until) return fail('VALIDATION_ERROR', 'since must be before until (default: now)');
    const allowed = this.replays.take(projectId);
    if (!allowed.ok) {
      const message = `At most ${REPLAYS_PER_MINUTE} range replays a minute per project; try again in ${allowed.retryAfterSeconds} s`;
      return { ok: false, error: new AppError('RATE_LIMIT_EXCEEDED', message, undefined, allowed.retryAfterSeconds) };
    }
    const replayed = await this.deliveries.replayRange(projectId, webhookId, { since, until, max: MAX_REPLAY_EVENTS }, now);
    if (replayed === null) return this.missingOrDisabled(projectId, webhookId);
    if ('over' in replayed) {
      const page = replayed.over > formatInstant(since) ? `; replay since=${formatInstant(since)}&until=${replayed.over} first, then continue from ${replayed.over}` : '';
      return fail('VALIDATION_ERROR', `The range holds more than ${MAX_REPLAY_EVENTS} events, the most one replay sends${page}`);
    }
    return ok({ replayed: replayed.replayed, since: formatInstant(since), until: formatInstant(until) });
  }

  private async missingOrDisabled<T>(projectId: string, webhookId: string): Promise<Result<T>> {
    return (await this.store.get(projectId, webhookId)) ? fail('CONFLICT', DISABLED) : fail('NOT_FOUND', NOT_FOUND);
  }
}
