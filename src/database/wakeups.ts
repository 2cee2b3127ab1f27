import { randomUUID } from 'node:crypto';
import { SQL } from 'drizzle-orm';
import type { Db } from './db.js';

/**
 * Wake-ups: "rows you care about were committed", for the live-update broadcaster (new events) and
 * the webhook delivery worker (new deliveries), in this process and in every other one.
 *
 * They are sent after the commit, from the writer's process, never from inside the writing
 * transaction: a `pg_notify` in a transaction makes PostgreSQL serialise its commit with every
 * other notifying transaction's on one global lock (pgbench, 10 clients, an UPDATE and an event insert: 7,700 tps without a notifying trigger, 4,400 with it), so a
 * trigger that notified on every event made every write of the API wait on every other.
 *
 * - The database handle a store writes through (`wakingDb`) sees a statement or transaction that
 *   wrote an outbox row (src/store/outbox.ts marks those fragments) resolve, and calls `written`.
 * - In this process the subscribers are called at once for the first write, then at most once
 *   per `intervalMs` while writes keep coming (leading and trailing edges): an idle system reacts
 *   immediately, a busy one does one claim per interval, not one per write.
 * - Other processes (PostgreSQL only: embedded storage is one process) get one NOTIFY per topic
 *   per interval per process, sent on its own autocommit statement, with this process's id as the
 *   payload so a process ignores its own.
 *
 * A wake-up can be lost (a process dies between commit and signal, a LISTEN connection
 * reconnects): every subscriber also polls slowly, and a reconnection wakes everyone (`null`).
 */

export type WakeTopic = 'events' | 'deliveries' | 'access';

/**
 * The PostgreSQL channel of each topic (events and deliveries: the names the triggers of 0002/0003
 * notified on; access: the planner's writes of access rows, which wake the access workers).
 */
export const WAKE_CHANNELS: Readonly<Record<WakeTopic, string>> = {
  events: 'tenure_events',
  deliveries: 'tenure_webhook_deliveries',
  access: 'tenure_access',
};

/** The most frequent a subscriber is woken, and a process notifies the others, per topic. */
export const WAKE_INTERVAL_MS = 25;

const marks = new WeakMap<SQL, readonly WakeTopic[]>();

/** Marks a statement fragment as writing rows of these topics (the outbox marks its inserts). */
export function markWrites<T extends SQL>(fragment: T, topics: readonly WakeTopic[]): T {
  marks.set(fragment, topics);
  return fragment;
}

/** The topics a statement writes: the marks of the fragments it is built of. */
export function topicsWritten(query: unknown): Set<WakeTopic> {
  const found = new Set<WakeTopic>();
  const visit = (chunk: unknown, depth: number): void => {
    if (depth > 64) return;
    if (Array.isArray(chunk)) {
      for (const c of chunk) visit(c, depth + 1);
      return;
    }
    if (!(chunk instanceof SQL)) return;
    for (const topic of marks.get(chunk) ?? []) found.add(topic);
    for (const c of chunk.queryChunks) visit(c, depth + 1);
  };
  visit(query, 0);
  return found;
}

/** How wake-ups reach other processes. */
export interface WakeTransport {
  send(channel: string, payload: string): Promise<void>;
  /** `null`: the listening connection was (re)established; signals may have been missed. */
  listen(channel: string, handler: (payload: string | null) => void): Promise<() => void>;
}

type Handler = () => void;

/** Calls `action` at once, then at most once per `intervalMs` while `touch` keeps being called. */
class Throttle {
  private timer: NodeJS.Timeout | null = null;
  private again = false;

  constructor(
    private readonly intervalMs: number,
    private readonly action: () => void,
  ) {}

  touch(): void {
    if (this.timer) {
      this.again = true;
      return;
    }
    this.action();
    this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.again) return;
      this.again = false;
      this.action();
      this.arm();
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Runs a pending trailing call now. */
  flush(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.again) {
      this.again = false;
      this.action();
    }
  }
}

export class Wakeups {
  /** Sent as the payload of this process's NOTIFYs, so it can tell them from the others'. */
  readonly nodeId = randomUUID();
  private readonly handlers = new Map<WakeTopic, Set<Handler>>();
  private readonly local = new Map<WakeTopic, Throttle>();
  private readonly remote = new Map<WakeTopic, Throttle>();
  private readonly listening = new Map<WakeTopic, Promise<() => void>>();
  private readonly sending = new Set<Promise<void>>();
  private transport: WakeTransport | null = null;

  constructor(
    private readonly onSendError: (err: unknown) => void,
    private readonly intervalMs = WAKE_INTERVAL_MS,
  ) {}

  /** Connects other processes (PostgreSQL); without it wake-ups stay in this process. */
  connect(transport: WakeTransport): void {
    this.transport = transport;
  }

  /** After a commit that wrote rows of these topics. */
  written(topics: Iterable<WakeTopic>): void {
    for (const topic of topics) {
      this.throttle(this.local, topic, () => this.dispatch(topic)).touch();
      if (this.transport) this.throttle(this.remote, topic, () => this.send(topic)).touch();
    }
  }

  /**
   * Calls `handler` after every commit of this topic's rows, here or (once `connect`ed) in
   * another process, and after a reconnection of the listening connection.
   */
  async subscribe(topic: WakeTopic, handler: Handler): Promise<() => void> {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(handler);
    const transport = this.transport;
    if (transport && !this.listening.has(topic)) {
      const stop = transport.listen(WAKE_CHANNELS[topic], (payload) => {
        if (payload !== this.nodeId) this.throttle(this.local, topic, () => this.dispatch(topic)).touch();
      });
      this.listening.set(topic, stop);
      try {
        await stop;
      } catch (err) {
        this.listening.delete(topic);
        set.delete(handler);
        throw err;
      }
    }
    return () => {
      set.delete(handler);
      if (set.size > 0) return;
      const stop = this.listening.get(topic);
      this.listening.delete(topic);
      void stop?.then((fn) => fn()).catch(() => undefined);
    };
  }

  /** Sends the signals still pending (a process about to exit after writing). */
  async flush(): Promise<void> {
    for (const t of this.local.values()) t.flush();
    for (const t of this.remote.values()) t.flush();
    await Promise.allSettled([...this.sending]);
  }

  private throttle(map: Map<WakeTopic, Throttle>, topic: WakeTopic, action: () => void): Throttle {
    let t = map.get(topic);
    if (!t) map.set(topic, (t = new Throttle(this.intervalMs, action)));
    return t;
  }

  private dispatch(topic: WakeTopic): void {
    for (const handler of this.handlers.get(topic) ?? []) handler();
  }

  private send(topic: WakeTopic): void {
    const sent = this.transport!.send(WAKE_CHANNELS[topic], this.nodeId).catch(this.onSendError);
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }
}

const writeHooks = new WeakMap<object, (topics: Set<WakeTopic>) => void>();

/**
 * What a statement run outside `execute` on this handle (src/database/prepared.ts) reports its
 * committed writes to; null for a handle that is not `wakingDb`'s (a transaction's, a bare one).
 */
export function writeHookOf(db: object): ((topics: Set<WakeTopic>) => void) | null {
  return writeHooks.get(db) ?? null;
}

/**
 * `db` as the stores see it: a statement or transaction that wrote marked rows calls `onWrite`
 * with their topics once it has committed (a transaction's, once the whole transaction has).
 */
export function wakingDb(db: Db, onWrite: (topics: Set<WakeTopic>) => void): Db {
  const waking = Object.create(db) as Db & { execute: Db['execute'] };
  writeHooks.set(waking, onWrite);
  waking.execute = ((query: SQL) => {
    const topics = topicsWritten(query);
    // A plain promise: drizzle's query object runs again on every `then`.
    const run = db.execute(query).then((result) => result);
    if (topics.size === 0) return run;
    return run.then((result) => {
      onWrite(topics);
      return result;
    });
  }) as Db['execute'];
  waking.transaction = (async (work: (tx: unknown) => Promise<unknown>, config?: unknown) => {
    const topics = new Set<WakeTopic>();
    const result = await db.transaction(async (tx) => {
      const inner = Object.create(tx) as typeof tx;
      inner.execute = ((query: SQL) => {
        for (const topic of topicsWritten(query)) topics.add(topic);
        return tx.execute(query).then((r) => r);
      }) as typeof tx.execute;
      return work(inner);
    }, config as never);
    if (topics.size > 0) onWrite(topics);
    return result;
  }) as Db['transaction'];
  return waking;
}
