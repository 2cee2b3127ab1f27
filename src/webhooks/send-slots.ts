/**
 * The bounds of one worker process on what it sends (docs/webhooks.md, "Fairness"): at most
 * `perEndpoint` requests out to one webhook at a time (TENURE_WEBHOOK_ENDPOINT_CONCURRENCY), and,
 * for a project whose receivers are slow, at most `perProject` to all of its webhooks together,
 * so that neither one slow receiver nor one project's many hold the process's every slot while
 * others wait behind them. A delivery takes its endpoint's turn, then its project's.
 *
 * Why only slow projects: a request to a receiver that answers at once frees its slot at once, so
 * a project whose requests come back fast may use every slot (on embedded storage, where the
 * database shares the process's one thread, throughput grows with the requests out); a request
 * that takes seconds keeps its slot, and a slot cannot be taken back. A project counts as slow
 * until an answer shows otherwise (a burst to receivers nobody has heard from yet starts
 * bounded), while its last answer took `SLOW_MS` or more, and while any request of it has been
 * out that long. What a project's answers have shown is forgotten once the worker holds none of
 * its deliveries.
 *
 * The worker may hold a few rounds more claimed (`claimBounds`), waiting here for a turn, so that
 * its claims come in batches rather than one per freed slot. Only endpoints and projects with
 * every slot busy have deliveries waiting, so waiting deliveries are not counted against the
 * process's concurrency.
 */

/** Rounds of an endpoint's, or a project's, send slots a worker may hold claimed. */
const CLAIM_ROUNDS = 4;

/**
 * A request out this long holds its slot long enough to keep others waiting: with every slot
 * taken by requests shorter than this, one frees up for another project's event within a few
 * milliseconds on average.
 */
export const SLOW_MS = 1_000;

/**
 * How many requests the webhooks of one slow project may have out at once: half the process's,
 * so that the other half is always there for every other project, but never fewer than two
 * endpoints' worth, so that one stalled endpoint of a project does not hold all of that project's.
 */
export function projectConcurrency(concurrency: number, perEndpoint: number): number {
  return Math.max(2 * perEndpoint, Math.ceil(concurrency / 2));
}

/** Turns handed out first come, first served: at most `bound(key)` taken per key at a time. */
class Turns {
  private readonly taken = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  /** Waiting for a turn, over all keys. */
  queued = 0;

  constructor(private readonly bound: (key: string) => number) {}

  /** Waits for a turn of `key`; false when aborted first. */
  take(key: string, signal: AbortSignal): Promise<boolean> {
    const taken = this.taken.get(key) ?? 0;
    if (taken < this.bound(key) && !this.waiting.has(key)) {
      this.taken.set(key, taken + 1);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      this.queued++;
      const grant = () => {
        this.queued--;
        signal.removeEventListener('abort', abort);
        resolve(true);
      };
      const abort = () => {
        const i = queue.indexOf(grant);
        if (i >= 0) queue.splice(i, 1);
        if (queue.length === 0) this.waiting.delete(key);
        this.queued--;
        resolve(false);
      };
      queue.push(grant);
      this.waiting.set(key, queue);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** Gives a turn back, and hands turns to those waiting for as long as the bound allows. */
  give(key: string): void {
    let taken = (this.taken.get(key) ?? 1) - 1;
    const queue = this.waiting.get(key);
    while (queue?.length && taken < this.bound(key)) {
      taken++;
      queue.shift()!();
    }
    if (queue?.length === 0) this.waiting.delete(key);
    if (taken > 0) this.taken.set(key, taken);
    else this.taken.delete(key);
  }
}

/** Claimed and not yet answered, per key. */
class Held {
  readonly counts = new Map<string, number>();

  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** Returns how many remain held. */
  remove(key: string): number {
    const left = (this.counts.get(key) ?? 1) - 1;
    if (left > 0) this.counts.set(key, left);
    else this.counts.delete(key);
    return left;
  }

  atLeast(bound: number): string[] {
    return [...this.counts].filter(([, n]) => n >= bound).map(([key]) => key);
  }
}

/** How fast one project's receivers have been answering. */
interface Pace {
  /** How long its last answer took, ms; null until the first. */
  last: number | null;
  /** When each of its requests out now was sent, by delivery id. */
  out: Map<string, number>;
}

export interface SlotKey {
  id: string;
  webhookId: string;
  projectId: string;
}

export class SendSlots {
  /** Per webhook: claimed and not yet answered (waiting for a turn or sending). */
  private readonly endpoints = new Held();
  /** Per project, likewise. */
  private readonly projects = new Held();
  private readonly paces = new Map<string, Pace>();
  private readonly endpointTurns: Turns;
  private readonly projectTurns: Turns;

  constructor(
    readonly perEndpoint: number,
    /** A slow project's bound. */
    readonly perProject: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.endpointTurns = new Turns(() => perEndpoint);
    this.projectTurns = new Turns((projectId) => (this.isSlow(projectId) ? perProject : Number.POSITIVE_INFINITY));
  }

  /** Claimed deliveries waiting for a turn, over all endpoints and projects. */
  get queued(): number {
    return this.endpointTurns.queued + this.projectTurns.queued;
  }

  /** What the process may hold claimed, and holds, per webhook and per project: the claim's bounds. */
  claimBounds(): { perEndpoint: number; inFlight: ReadonlyMap<string, number>; perProject: number; projectsInFlight: ReadonlyMap<string, number> } {
    return {
      perEndpoint: CLAIM_ROUNDS * this.perEndpoint,
      inFlight: this.endpoints.counts,
      perProject: CLAIM_ROUNDS * this.perProject,
      projectsInFlight: this.projects.counts,
    };
  }

  /** Webhooks and projects the process may claim no more of. */
  saturated(): { webhooks: string[]; projects: string[] } {
    return { webhooks: this.endpoints.atLeast(CLAIM_ROUNDS * this.perEndpoint), projects: this.projects.atLeast(CLAIM_ROUNDS * this.perProject) };
  }

  /** Slow: no answer yet, a last answer that took `SLOW_MS` or more, or a request out that long. */
  isSlow(projectId: string): boolean {
    const pace = this.paces.get(projectId);
    if (!pace || pace.last === null || pace.last >= SLOW_MS) return true;
    const since = this.now() - SLOW_MS;
    for (const sent of pace.out.values()) if (sent <= since) return true;
    return false;
  }

  onClaimed(d: SlotKey): void {
    this.endpoints.add(d.webhookId);
    this.projects.add(d.projectId);
  }

  /** Waits for a turn to send, the endpoint's then the project's; false when aborted first (no turn kept). */
  async takeTurn(d: SlotKey, signal: AbortSignal): Promise<boolean> {
    if (!(await this.endpointTurns.take(d.webhookId, signal))) return false;
    if (!(await this.projectTurns.take(d.projectId, signal))) {
      this.endpointTurns.give(d.webhookId);
      return false;
    }
    const pace = this.paces.get(d.projectId) ?? { last: null, out: new Map<string, number>() };
    pace.out.set(d.id, this.now());
    this.paces.set(d.projectId, pace);
    return true;
  }

  /**
   * A claimed delivery is done with its endpoint: `sent` (its receiver answered, or the attempt
   * ended), `unused` (it had its turns and gave up before sending), or `none` (stopped while
   * waiting for a turn). Hands its turns, if it had them, to the next waiting deliveries; a sent
   * request's time goes into its project's pace. Returns how many remain claimed there: the worker
   * claims again when one round of slots is left.
   */
  done(d: SlotKey, turn: 'sent' | 'unused' | 'none'): { endpoint: number; project: number } {
    const left = { endpoint: this.endpoints.remove(d.webhookId), project: this.projects.remove(d.projectId) };
    const pace = this.paces.get(d.projectId);
    const sent = pace?.out.get(d.id);
    if (pace && sent !== undefined) {
      pace.out.delete(d.id);
      if (turn === 'sent') pace.last = this.now() - sent;
    }
    if (turn !== 'none') {
      this.projectTurns.give(d.projectId);
      this.endpointTurns.give(d.webhookId);
    }
    if (left.project === 0) this.paces.delete(d.projectId);
    return left;
  }
}
