/**
 * stripe-node clients kept per secret key, the most recently used first, at most `max` of them.
 *
 * Why: building a client is not free. Its constructor makes an object for each of Stripe's ~100
 * resources; that was about a tenth of the server's CPU for a `GET /pay/{id}` (bench/RESULTS.md,
 * "Front desk"). A client holds no per-call state tenure uses (telemetry is off; an idempotency
 * key is an option of each call), so one client serves every call with its key, concurrent ones
 * too, as stripe-node intends.
 *
 * Keyed by the key itself: an account connected again with another key gets a client of its own at
 * its next call, and the old one ages out. Bounded, so an instance with many accounts keeps the
 * busy ones and never grows without limit; a client that fell out is simply built again.
 */
export class StripeClients<C> {
  private readonly clients = new Map<string, C>();

  constructor(
    private readonly make: (secretKey: string) => C,
    private readonly max = 100,
  ) {}

  get(secretKey: string): C {
    const kept = this.clients.get(secretKey);
    if (kept !== undefined) {
      // A Map iterates in insertion order: moved to the end, it is the last to be dropped.
      this.clients.delete(secretKey);
      this.clients.set(secretKey, kept);
      return kept;
    }
    const client = this.make(secretKey);
    this.clients.set(secretKey, client);
    if (this.clients.size > this.max) this.clients.delete(this.clients.keys().next().value!);
    return client;
  }

  get size(): number {
    return this.clients.size;
  }
}
