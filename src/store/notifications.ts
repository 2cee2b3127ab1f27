import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../store/db.js';

/**
 * Wake-ups for the delivery worker. The trigger on `webhook_deliveries` (drizzle/0002) calls
 * `pg_notify` in the transaction that creates deliveries, so a notification arrives at commit —
 * never before the rows are visible, and never for a rolled-back change.
 *
 * - PostgreSQL: a dedicated connection LISTENs (a pooled one could be handed to a query mid-wait);
 *   it reconnects with backoff and wakes the worker after reconnecting, in case it missed one.
 * - PGlite: the one in-process database delivers its own notifications to a callback, in process.
 */

export const DELIVERIES_CHANNEL = 'tenure_webhook_deliveries';

export interface Notifier {
  close(): Promise<void>;
}

interface PgliteLike {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

export function listenForDeliveries(
  database: Database,
  postgresUrl: string | null,
  onWake: () => void,
  logger: Logger,
): Promise<Notifier> {
  return listenChannel(database, postgresUrl, DELIVERIES_CHANNEL, () => onWake(), logger);
}

/**
 * LISTENs on `channel` (a plain identifier) the same way for any subscriber. `onNotify` gets each
 * notification's payload, and `null` after a (re)connection on PostgreSQL: notifications sent while
 * disconnected are lost, so the subscriber must resynchronise (the worker polls, the key cache clears).
 */
export async function listenChannel(
  database: Database,
  postgresUrl: string | null,
  channel: string,
  onNotify: (payload: string | null) => void,
  logger: Pick<Logger, 'warn'>,
): Promise<Notifier> {
  if (database.kind === 'pglite') {
    const client = (database.db as unknown as { $client?: PgliteLike }).$client;
    if (!client || typeof client.listen !== 'function') throw new Error('embedded database without notifications');
    const unlisten = await client.listen(channel, (payload) => onNotify(payload));
    return { close: () => unlisten().catch(() => undefined) };
  }
  if (!postgresUrl) throw new Error('LISTEN needs the PostgreSQL URL');
  return listenPostgres(postgresUrl, channel, onNotify, logger);
}

async function listenPostgres(
  url: string,
  channel: string,
  onNotify: (payload: string | null) => void,
  logger: Pick<Logger, 'warn'>,
): Promise<Notifier> {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let failures = 0;

  const reconnectLater = () => {
    if (closed || retry) return;
    client = null;
    const delay = Math.min(30_000, 250 * 2 ** Math.min(failures++, 7));
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, delay);
    retry.unref();
  };

  const connect = async () => {
    const c = new pg.Client({ connectionString: url, application_name: 'tenure-listen', connectionTimeoutMillis: 5_000 });
    c.on('notification', (message) => onNotify(message.payload ?? ''));
    c.on('error', (err) => {
      logger.warn({ err, channel }, 'notification connection failed; reconnecting');
      reconnectLater();
    });
    c.on('end', () => reconnectLater());
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      if (closed) {
        await c.end();
        return;
      }
      client = c;
      failures = 0;
      onNotify(null);
    } catch (err) {
      logger.warn({ err, channel }, 'could not LISTEN; retrying');
      c.removeAllListeners('end');
      await c.end().catch(() => undefined);
      reconnectLater();
    }
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
