import { sql, type Placeholder, type SQL } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
import type { Db } from './db.js';
import { topicsWritten, writeHookOf, type WakeTopic } from './wakeups.js';

/**
 * Named prepared statements for the hot single-row writes (extend one member): the statement is
 * built and turned into text once per process, and on PostgreSQL each pooled connection parses
 * and plans it once (node-postgres sends a named statement's Parse only the first time a
 * connection runs it; the server then reuses the plan). An unnamed statement, what `db.execute`
 * sends, is parsed and planned again on every call: for extendOne's CTE (update, plan and user
 * joins, event insert) the planning was about as much of the database's CPU as the execution,
 * and building the SQL tree and its text was a good part of the node process's.
 *
 * PGlite runs statements the same way with or without a name (its driver ignores it); only the
 * building of the SQL is saved there.
 *
 * Wake-ups (src/database/wakeups.ts) are kept: the topics a statement writes are read from its marked
 * fragments once, and reported after the statement resolves, as `wakingDb`'s execute does. Given a
 * handle that is not a store's waking handle (a transaction's, a bare Drizzle database), the
 * statement runs through its `execute` with the values inlined as parameters, as any other.
 */

/** The statement's values, one placeholder per key, as SQL fragments for the builder. */
export type Params<P> = { readonly [K in keyof P]: SQL };

export interface PreparedStatement<P extends Record<string, unknown>> {
  /** Runs the statement with these values; resolves with the driver's result (`rowsOf` reads it). */
  execute(db: Db, values: P): Promise<unknown>;
}

const dialect = new PgDialect();

/**
 * A statement named `name` (unique in the process: node-postgres keys a connection's prepared
 * statements by it), built once by `build` from placeholders. `build` must use only its params
 * for what varies per call: the text is fixed at the first call.
 */
export function preparedStatement<P extends Record<string, unknown>>(
  name: string,
  build: (params: Params<P>) => SQL,
): PreparedStatement<P> {
  let compiled: { query: ReturnType<PgDialect['sqlToQuery']>; topics: Set<WakeTopic> } | null = null;
  const perSession = new WeakMap<object, PgPreparedQuery<PreparedQueryConfig>>();
  const placeholders = new Proxy({} as Params<P>, {
    get: (_, key) => sql`${sql.placeholder(String(key)) as Placeholder}`,
  });
  return {
    async execute(db, values) {
      const onWrite = writeHookOf(db);
      if (!onWrite) {
        const inline = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, sql`${v}`])) as Params<P>;
        return db.execute(build(inline));
      }
      if (!compiled) {
        const built = build(placeholders);
        compiled = { query: dialect.sqlToQuery(built), topics: topicsWritten(built) };
      }
      const session = db._.session;
      let query = perSession.get(session);
      if (!query) perSession.set(session, (query = session.prepareQuery(compiled.query, undefined, name, false)));
      const result = await query.execute(values);
      if (compiled.topics.size > 0) onWrite(compiled.topics);
      return result;
    },
  };
}
