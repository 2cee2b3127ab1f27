import type pg from 'pg';
import type { Logger } from 'pino';

/**
 * A connection that drops (PostgreSQL restarted, a backend terminated or killed, the network cut)
 * must cost the requests using it a 503, never the process: pg emits 'error' on the client, and an
 * 'error' event nobody listens to throws. pg-pool listens on idle clients only, not on one lent to
 * a query or a transaction, so every client gets a listener for its whole life here. It logs the
 * loss once, and gives a lent client back to the pool on its holder's behalf: the pool then drops
 * it and opens a new connection at the next demand, even if the holder never releases it (drizzle
 * does not when a transaction's BEGIN fails). The holder's statements fail (a 503), and its own
 * release, later, does nothing: the client is out of the pool for good.
 */
export function survivingConnectionLoss(pool: pg.Pool, logger: Pick<Logger, 'warn'>): void {
  const lent = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => lent.add(client));
  pool.on('release', (_err, client) => lent.delete(client));
  pool.on('connect', (client) => {
    const report = reportingOnce(logger, 'database connection lost; the pool opens a new one when needed');
    client.on('error', (err) => {
      report(err);
      if (!lent.delete(client)) return;
      const release = client.release;
      client.release = () => undefined;
      release(err);
    });
  });
  // The pool repeats an idle client's error here; it was reported by the client's listener.
  pool.on('error', () => undefined);
}

/**
 * A listener for a connection's 'error' events that logs the first only (pg emits one for the
 * server's message and another when the socket closes). It logs the error's message (`reason`) and
 * its code, never the error itself: pg-pool attaches the client, connection parameters and all, to it.
 */
export function reportingOnce(logger: Pick<Logger, 'warn'>, message: string): (err: Error) => void {
  let reported = false;
  return (err) => {
    if (reported) return;
    reported = true;
    // Not under `err`: the logger's error serializer would take it for an Error and drop the code.
    const { code } = err as { code?: unknown };
    logger.warn({ reason: err.message, ...(typeof code === 'string' ? { code } : {}) }, message);
  };
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

/**
 * True when an error means "the database cannot be reached" (a 503), not "the query was wrong".
 * SQLSTATE class 08 is connection exceptions; 57P0x are shutdowns; 53300 is too many connections.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300') {
        return true;
      }
    }
    // "not queryable": a statement on a client whose connection was lost, e.g. the next one of a
    // transaction, or its ROLLBACK (which drizzle then throws instead of the first error).
    if (typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|not queryable|PGlite is closed/i.test(message)) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
