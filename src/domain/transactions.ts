/**
 * How a use case runs its statements as one: `run` opens a database transaction and hands `work`
 * the stores bound to it; `work` returning commits, `work` throwing rolls back (and the error is
 * the caller's). The domain names only the stores a use case needs (`Transactor<{ payments:
 * PaymentStatements }>`), so a service reads as its use case and a unit test gives it a small twin
 * (`inMemoryTransactor`, or a `run` that calls `work` with fakes).
 *
 * The composition root (src/container.ts) passes the one implementation, src/store/transactions.ts,
 * whose stores are the same classes the rest of the process uses, built on the transaction.
 */
export interface Transactor<Stores> {
  run<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}

/** A transactor over fixed stores, for unit tests: `run` calls `work` with them, no transaction. */
export function transactorOver<Stores>(stores: Stores): Transactor<Stores> {
  return { run: (work) => work(stores) };
}
