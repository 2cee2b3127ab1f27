import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Logger } from 'pino';
import { reportingOnce } from './connection-loss.js';

/**
 * Database notifications (LISTEN/NOTIFY) for every subscriber of a database handle (one per
 * process), over one connection: `Database.notifications`. A `pg_notify` inside a writing
 * transaction arrives at commit (never before the rows are visible, never for a rolled-back
 * change), but it serialises that commit with every other notifying one: only rare writes do it
 * (a key revocation). Frequent ones signal after commit instead (src/database/wakeups.ts).
 *
 * - PostgreSQL: one dedicated connection LISTENs on every channel anyone subscribed to (a pooled
 *   connection could be handed to a query mid-wait). It is opened at the first subscription, so
 *   a CLI command that never listens never holds one, and it reconnects with backoff.
 * - PGlite: the one in-process database delivers its own notifications to callbacks, in process.
 *
 * After a (re)connection notifications sent meanwhile are lost, so every handler is called with
 * `null` then and must resynchronise (the worker polls, the key cache clears, the broadcaster claims).
 */

export type NotificationHandler = (payload: string | null) => void;

export interface Notifications {
  /** Calls `handler` with each payload on `channel` (a plain identifier); resolves once listening. */
  subscribe(channel: string, handler: NotificationHandler): Promise<() => void>;
  close(): Promise<void>;
}

class Subscribers {
  private readonly byChannel = new Map<string, Set<NotificationHandler>>();

  add(channel: string, handler: NotificationHandler): { first: boolean; remove: () => boolean } {
    let set = this.byChannel.get(channel);
    const first = set === undefined;
    if (!set) this.byChannel.set(channel, (set = new Set()));
    set.add(handler);
    return {
      first,
      /** True when the channel has no subscriber left. */
      remove: () => {
        set.delete(handler);
        if (set.size > 0) return false;
        this.byChannel.delete(channel);
        return true;
      },
    };
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }

  dispatch(channel: string, payload: string | null): void {
    for (const handler of this.byChannel.get(channel) ?? []) handler(payload);
  }

  dispatchAll(payload: null): void {
    for (const channel of this.byChannel.keys()) this.dispatch(channel, payload);
  }
}

/** PGlite delivers NOTIFY to callbacks registered on its one connection. */
export class EmbeddedNotifications implements Notifications {
  private readonly subscribers = new Subscribers();
  private readonly unlisten = new Map<string, Promise<() => Promise<void>>>();

  constructor(private readonly client: Pick<PGlite, 'listen'>) {}

  async subscribe(channel: string, handler: NotificationHandler): Promise<() => void> {
    const { first, remove } = this.subscribers.add(channel, handler);
    if (first) this.unlisten.set(channel, this.client.listen(channel, (payload) => this.subscribers.dispatch(channel, payload)));
    await this.unlisten.get(channel);
    return () => {
      if (!remove()) return;
      const stop = this.unlisten.get(channel);
      this.unlisten.delete(channel);
      void stop?.then((fn) => fn()).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    const pending = [...this.unlisten.values()];
    this.unlisten.clear();
    await Promise.all(pending.map((p) => p.then((fn) => fn()).catch(() => undefined)));
  }
}

/** One `pg.Client` LISTENing on every subscribed channel, reconnecting with backoff. */
export class PostgresNotifications implements Notifications {
  private readonly subscribers = new Subscribers();
  private client: pg.Client | null = null;
  /** The channels `client` LISTENs on. */
  private listening = new Set<string>();
  private connecting: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;
  /**
   * The LISTEN/UNLISTEN statements sent on `client`, one after another: subscriptions made at once
   * (every subscriber of a process starting) would otherwise overlap on the one connection, which
   * pg only queues with a deprecation warning (and its next major refuses).
   */
  private statements: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  async subscribe(channel: string, handler: NotificationHandler): Promise<() => void> {
    const { remove } = this.subscribers.add(channel, handler);
    // A (re)connection LISTENs on every channel subscribed so far; one pending retry will too.
    if (!this.client && !this.retry) await (this.connecting ??= this.connect());
    await this.listen(channel);
    return () => {
      if (!remove()) return;
      this.listening.delete(channel);
      const c = this.client;
      if (c) void this.send(c, `UNLISTEN ${channel}`).catch(() => undefined);
    };
  }

  private async listen(channel: string): Promise<void> {
    const c = this.client;
    if (!c || this.listening.has(channel)) return;
    this.listening.add(channel);
    // A LISTEN fails with its connection: closing it makes sure the reconnection, which LISTENs on
    // every subscribed channel, follows (a subscriber waits for no more than that).
    await this.send(c, `LISTEN ${channel}`).catch(() => c.end().catch(() => undefined));
  }

  /** Sends `statement` on `c` once the statements sent before it have been answered. */
  private send(c: pg.Client, statement: string): Promise<unknown> {
    const sent = this.statements.then(() => c.query(statement));
    this.statements = sent.catch(() => undefined);
    return sent;
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url, application_name: 'tenure-listen', connectionTimeoutMillis: 5_000 });
    c.on('notification', (message) => this.subscribers.dispatch(message.channel, message.payload ?? ''));
    // Once per connection, whichever comes first: its error (pg emits one for the server's
    // message and another when the socket closes) or its end.
    let lost = false;
    const report = reportingOnce(this.logger, 'notification connection lost; reconnecting');
    const onLost = (err: Error | null) => {
      if (lost) return;
      lost = true;
      if (err) report(err);
      if (this.client === c) this.client = null;
      this.reconnectLater();
    };
    c.on('error', onLost);
    c.on('end', () => onLost(null));
    try {
      await c.connect();
      const channels = this.subscribers.channels();
      for (const channel of channels) await this.send(c, `LISTEN ${channel}`);
      if (this.closed || lost) {
        lost = true;
        await c.end();
        return;
      }
      this.client = c;
      this.listening = new Set(channels);
      this.failures = 0;
      this.subscribers.dispatchAll(null);
    } catch (err) {
      // Once an outage: the attempts after the first fail alike (they retry at most 5 s apart).
      if (!lost && this.failures === 0) this.logger.warn({ err }, 'could not LISTEN; retrying');
      lost = true;
      await c.end().catch(() => undefined);
      this.reconnectLater();
    } finally {
      this.connecting = null;
    }
  }

  private reconnectLater(): void {
    if (this.closed || this.retry) return;
    // At most 5 s apart: PostgreSQL back, the next attempt is soon (notifications sent meanwhile
    // are lost either way, and every subscriber resynchronises on reconnection).
    const delay = Math.min(5_000, 250 * 2 ** Math.min(this.failures++, 5));
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connecting ??= this.connect();
    }, delay);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.connecting;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}
