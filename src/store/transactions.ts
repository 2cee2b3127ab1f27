import type { Clock } from '../domain/clock.js';
import type { Transactor } from '../domain/transactions.js';
import type { Database, Db } from '../database/db.js';
import { storesOn, type Stores } from './stores.js';

/**
 * The transactor every service is given (src/domain/transactions.ts): one database transaction a
 * `run`, its stores the process's store classes built on it. On PostgreSQL a pooled connection is
 * held for the run; on embedded storage PGlite runs one transaction at a time, so a run is short.
 * Wake-ups of the outbox's readers go out after the commit (src/database/wakeups.ts).
 */
export class StoreTransactor implements Transactor<Stores> {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  run<T>(work: (stores: Stores) => Promise<T>): Promise<T> {
    return this.database.db.transaction((tx) => work(storesOn(tx as unknown as Db, this.database, this.clock)));
  }
}
