import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { SecretBoxError } from '../domain/integrations/secret-box.js';
import type { WebhookSecrets } from '../domain/webhooks/webhook-secrets.js';
import type { ClaimedDelivery, DeliveriesStore } from '../store/deliveries.store.js';
import type { AttemptRecorder } from './attempt-recorder.js';
import type { HttpSender, SendResult } from './http-sender.js';
import { decide, DISABLE_AFTER_FAILING_MS, errorClassOf } from './retry-policy.js';
import type { SendSlots } from './send-slots.js';
import { signatureHeaders } from './signing.js';
import { resolveDestination, type Resolver } from './ssrf-guard.js';

/**
 * One attempt of a delivery the worker (delivery.worker.ts) has claimed: its endpoint's and its
 * project's turn (send-slots.ts), the lease checked against the timeout, the host resolved and
 * checked again (ssrf-guard.ts), the secrets opened (sealed at rest: webhook-secrets.ts), the
 * signed request to the checked address (signing.ts,
 * http-sender.ts), what the answer means (retry-policy.ts), and the outcome handed to the
 * AttemptRecorder, which writes it under the lease.
 */

/** What an attempt needs of the worker's store, sender, resolver and clocks (DeliveryWorkerDeps). */
export interface DeliveryAttemptDeps {
  store: DeliveriesStore;
  sender: HttpSender;
  resolve: Resolver;
  clock: Clock;
  random: () => number;
  logger: Logger;
  /** Opens the signing secrets as the claim read them (sealed with the instance's key). */
  secrets: Pick<WebhookSecrets, 'open' | 'notes'>;
}

export class DeliveryAttempts {
  /** Webhooks whose secret this process could not open, logged once each. */
  private readonly unreadable = new Set<string>();

  constructor(
    private readonly deps: DeliveryAttemptDeps,
    private readonly options: { allowPrivate: boolean; timeoutMs: number },
    private readonly slots: SendSlots,
    private readonly recorder: AttemptRecorder,
  ) {}

  /**
   * Makes the attempt once the delivery has its turn; `sendDone` is told when the turn is given
   * back (the receiver answered, or the turn went unused). Returns when the outcome is recorded.
   */
  async run(
    d: ClaimedDelivery,
    leaseUntil: Date,
    signal: AbortSignal,
    sendDone: (turn: 'sent' | 'unused' | 'none') => void,
  ): Promise<void> {
    const { clock, store, logger } = this.deps;
    if (!(await this.slots.takeTurn(d, signal))) return; // stopped while waiting: the lease is given back
    const attemptedAt = clock.now();
    if (attemptedAt.getTime() + this.options.timeoutMs > leaseUntil.getTime()) {
      // Waited so long for its endpoint that the lease could run out mid-attempt: leave it to
      // fall due again rather than race another worker.
      sendDone('unused');
      logger.warn({ delivery_id: d.id }, 'webhook delivery waited out its lease; it will be claimed again');
      return;
    }
    if (!d.enabled) {
      sendDone('unused');
      await store.cancelPending(d.webhookId, attemptedAt);
      return;
    }
    let result: SendResult;
    try {
      result = await this.send(d, attemptedAt, signal);
    } finally {
      sendDone('sent');
    }
    if (result.kind === 'aborted') return;
    const completedAt = clock.now();
    const decision = decide(d.attempt, result, completedAt, this.deps.random);
    await this.recorder.record({
      id: d.id,
      attempt: d.attempt,
      attemptedAt,
      completedAt,
      durationMs: result.durationMs,
      statusCode: result.kind === 'response' ? result.status : null,
      errorClass: errorClassOf(result),
      errorMessage: result.message,
      responseExcerpt: result.excerpt,
      outcome: decision.outcome,
      nextAttemptAt: decision.nextAttemptAt,
      disableIfFailingSince: new Date(attemptedAt.getTime() - DISABLE_AFTER_FAILING_MS),
    });
    logger.debug({ delivery_id: d.id, attempt: d.attempt, outcome: decision.outcome }, 'webhook attempt');
  }

  /**
   * The secrets to sign with: every stored one this instance can open, so long as the current one
   * is among them; else why not (nothing is sent unsigned, or signed with the sealed text).
   */
  private openSecrets(d: ClaimedDelivery): { secrets: string[] } | { problem: string } {
    const secrets: string[] = [];
    for (const [i, stored] of d.storedSecrets.entries()) {
      try {
        secrets.push(this.deps.secrets.open(stored));
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        if (i === 0) {
          if (!this.unreadable.has(d.webhookId)) {
            this.unreadable.add(d.webhookId);
            this.deps.logger.error({ webhook_id: d.webhookId, err: err.message }, 'a webhook signing secret cannot be opened: its deliveries fail until it can');
          }
          return { problem: `tenure could not open this webhook's signing secret (${err.message}); nothing was sent. Rotate the secret, or restore the instance's encryption key` };
        }
      }
    }
    return { secrets };
  }

  /** Resolves and checks the host again, then sends the signed body to the checked address. */
  private async send(d: ClaimedDelivery, attemptedAt: Date, signal: AbortSignal): Promise<SendResult> {
    const opened = this.openSecrets(d);
    if ('problem' in opened) return { kind: 'error', errorClass: 'signing', durationMs: 0, excerpt: null, message: opened.problem };
    const destination = await resolveDestination(d.url, { allowPrivate: this.options.allowPrivate, resolve: this.deps.resolve });
    if (!destination.ok) {
      return { kind: 'error', errorClass: destination.errorClass, durationMs: 0, excerpt: null, message: destination.message };
    }
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    return this.deps.sender.send({
      url: destination.url,
      address: destination.address,
      family: destination.family,
      headers: {
        'x-webhook-id': d.eventId,
        'x-webhook-event': d.eventType,
        'x-webhook-attempt': String(d.attempt),
        ...signatureHeaders({ eventId: d.eventId, timestamp, body: d.body, secrets: opened.secrets }),
      },
      body: d.body,
      timeoutMs: this.options.timeoutMs,
      signal,
    });
  }
}
