import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/**
 * Connections of their own to a PostgreSQL test database, for tests of what concurrent
 * transactions do to each other (a lock held, a statement waiting on it): opened, handed to `use`,
 * and closed whatever it does.
 */
export async function withConnections<T>(url: string, count: number, use: (clients: pg.Client[]) => Promise<T>): Promise<T> {
  const clients = Array.from({ length: count }, () => new pg.Client({ connectionString: url }));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    return await use(clients);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

/** 'waiting' when `query` has not finished within `ms` (it waits on a lock, say), else 'done'. */
export async function stillWaiting(query: Promise<unknown>, ms = 300): Promise<'done' | 'waiting'> {
  return Promise.race([query.then(() => 'done' as const), sleep(ms).then(() => 'waiting' as const)]);
}
