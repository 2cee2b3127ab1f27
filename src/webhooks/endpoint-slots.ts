/**
 * The per-endpoint bound of one worker process (TENURE_WEBHOOK_ENDPOINT_CONCURRENCY): at most
 * `perEndpoint` requests out to one webhook at a time. The worker may hold a few rounds more
 * claimed (`claimBound`), waiting here for a turn, so that its claims come in batches rather than
 * one per freed slot. Only endpoints with every slot busy have deliveries waiting, so waiting
 * deliveries are not counted against the process's concurrency.
 */

/** Rounds of an endpoint's send slots a worker may hold claimed. */
const CLAIM_ROUNDS = 4;

export class EndpointSlots {
  /** Per webhook: claimed and not yet answered (waiting for a turn or sending). */
  readonly claimed = new Map<string, number>();
  private readonly sending = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  /** Claimed deliveries waiting for a turn, over all endpoints. */
  queued = 0;

  constructor(readonly perEndpoint: number) {}

  /** How many deliveries of one endpoint the process may hold claimed. */
  claimBound(): number {
    return CLAIM_ROUNDS * this.perEndpoint;
  }

  /** Webhooks the process may claim no more of. */
  saturated(): string[] {
    return [...this.claimed].filter(([, n]) => n >= this.claimBound()).map(([id]) => id);
  }

  onClaimed(webhookId: string): void {
    this.claimed.set(webhookId, (this.claimed.get(webhookId) ?? 0) + 1);
  }

  /** Waits for a turn to send to the endpoint; false when aborted first. */
  takeTurn(webhookId: string, signal: AbortSignal): Promise<boolean> {
    const sending = this.sending.get(webhookId) ?? 0;
    if (sending < this.perEndpoint) {
      this.sending.set(webhookId, sending + 1);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(webhookId) ?? [];
      this.queued++;
      const grant = () => {
        this.queued--;
        signal.removeEventListener('abort', abort);
        resolve(true);
      };
      const abort = () => {
        const i = queue.indexOf(grant);
        if (i >= 0) queue.splice(i, 1);
        this.queued--;
        resolve(false);
      };
      queue.push(grant);
      this.waiting.set(webhookId, queue);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /**
   * A claimed delivery is done with the endpoint (answered, or given up before sending). Hands its
   * turn, if it had one, to the next waiting delivery. Returns how many remain claimed there.
   */
  done(webhookId: string, hadTurn: boolean): number {
    const claimed = (this.claimed.get(webhookId) ?? 1) - 1;
    if (claimed > 0) this.claimed.set(webhookId, claimed);
    else this.claimed.delete(webhookId);
    if (hadTurn) this.passTurn(webhookId);
    return claimed;
  }

  private passTurn(webhookId: string): void {
    const next = this.waiting.get(webhookId)?.shift();
    if (next) {
      next();
      return;
    }
    this.waiting.delete(webhookId);
    const sending = (this.sending.get(webhookId) ?? 1) - 1;
    if (sending > 0) this.sending.set(webhookId, sending);
    else this.sending.delete(webhookId);
  }
}
