/**
 * The cap on live-update connections a client address holds open before they authenticate
 * (TENURE_LIVE_MAX_PENDING_PER_IP), counted on this node, an IPv6 client by its /64. Opening a
 * connection costs nothing and authenticating one costs a database lookup, so without it one
 * address could hold any number of connections that never authenticate (Socket.IO only closes
 * them after 45 s), or run any number of handshake checks at once.
 *
 * A connection takes one of its address's places as it opens and gives it back once admitted
 * (past the handshake and the per-project cap) or closed; a failed handshake keeps its place, so
 * the client may retry on it. A connection that opens with no place free is let in only to be
 * refused at its handshake (a `connect_error` that says why) and closed. One address can hold
 * `max` of those too; past that its new connections are refused before they open, by the HTTP
 * request itself, which a client sees as a transport error only.
 */

export class PendingConnection {
  /** A handshake is being checked on it: one at a time, so its checks in flight are bounded too. */
  checking = false;
  private settled = false;

  constructor(
    /** Whether it holds one of its address's places; if not, it is to be refused. */
    readonly withinCap: boolean,
    private readonly release: () => void,
  ) {}

  /** Admitted or closed: its place (or its turn to be refused) is free again. Repeats do nothing. */
  settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.release();
  }

  get isSettled(): boolean {
    return this.settled;
  }
}

export class PendingConnections {
  private readonly byAddress = new Map<string, { holding: number; refusing: number }>();

  constructor(readonly max: number) {}

  /** Whether `address` may open one more connection at all: false once it holds twice the cap. */
  mayOpen(address: string): boolean {
    const counts = this.byAddress.get(address);
    return !counts || counts.holding + counts.refusing < 2 * this.max;
  }

  /** A connection of `address` has opened. */
  open(address: string): PendingConnection {
    const counts = this.byAddress.get(address) ?? { holding: 0, refusing: 0 };
    this.byAddress.set(address, counts);
    const withinCap = counts.holding < this.max;
    if (withinCap) counts.holding++;
    else counts.refusing++;
    return new PendingConnection(withinCap, () => {
      if (withinCap) counts.holding--;
      else counts.refusing--;
      if (counts.holding + counts.refusing === 0) this.byAddress.delete(address);
    });
  }
}
