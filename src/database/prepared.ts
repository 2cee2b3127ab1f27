import { fillPlaceholders, is, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { PgliteSession } from 'drizzle-orm/pglite';
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
 * PGlite's driver ignores the name and sends every statement unnamed, so there the statement is
 * made a server-side one with SQL's `PREPARE name AS …` on first use (once per PGlite instance: it
 * is one session) and run with `EXECUTE name(…)`. EXECUTE is a utility statement, which takes no
 * bind parameters, so its values go in as quoted literals (pgLiteral below); the statement keeps
 * its plan across calls as on PostgreSQL. On embedded storage, planning the portal page's statement
 * cost more than running it (bench/RESULTS.md, the web section).
 *
 * Wake-ups (src/database/wakeups.ts) are kept: the topics a statement writes are read from its marked
 * fragments once, and reported after the statement resolves, as `wakingDb`'s execute does. Given a
 * handle that is not a store's waking handle (a transaction's, a bare Drizzle database), the
 * statement runs through its `execute` with the values inlined as parameters, as any other.
 */

/** What a prepared statement's values may be: what pgLiteral can write. */
export type Literal = string | number | boolean | null;

/**
 * `value` as an SQL literal of unknown type (PostgreSQL gives it the prepared parameter's type):
 * a string as an escape string (`E'…'`, quotes and backslashes doubled, so the result is the same
 * whatever standard_conforming_strings says), a finite number, a boolean, NULL. A NUL character,
 * which no text value can hold, or anything else is refused rather than written.
 */
export function pgLiteral(value: Literal): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value !== 'string') throw new TypeError(`no SQL literal for a ${typeof value}`);
  if (value.includes('\0')) throw new TypeError('a string with a NUL character has no SQL literal');
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** The SQLSTATE of a driver error, on it or on its cause (Drizzle wraps the driver's error). */
const pgCodeOf = (err: unknown): string | undefined =>
  (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;

/** The statement's values, one placeholder per key, as SQL fragments for the builder. */
export type Params<P> = { readonly [K in keyof P]: SQL };

export interface PreparedStatement<P extends Record<string, Literal>> {
  /** Runs the statement with these values; resolves with the driver's result (`rowsOf` reads it). */
  execute(db: Db, values: P): Promise<unknown>;
}

const dialect = new PgDialect();

/**
 * A statement named `name` (unique in the process: node-postgres keys a connection's prepared
 * statements by it), built once by `build` from placeholders. `build` must use only its params
 * for what varies per call: the text is fixed at the first call.
 */
export function preparedStatement<P extends Record<string, Literal>>(
  name: string,
  build: (params: Params<P>) => SQL,
): PreparedStatement<P> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`a prepared statement's name is a lower-case SQL identifier: ${name}`);
  let compiled: { query: ReturnType<PgDialect['sqlToQuery']>; topics: Set<WakeTopic> } | null = null;
  const perSession = new WeakMap<object, PgPreparedQuery<PreparedQueryConfig>>();
  /** PGlite instances the statement was PREPAREd on: the promise of that PREPARE. */
  const preparedOn = new WeakMap<object, Promise<unknown>>();
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
      if (is(session, PgliteSession)) {
        const { sql: text, params } = compiled.query;
        // Keyed by the PGlite instance, not the Drizzle session: several sessions may wrap one
        // instance (the test harness hands one from file to file), and the statement is the instance's.
        const instance = (session as unknown as { client: object }).client;
        let ready = preparedOn.get(instance);
        if (!ready) {
          ready = db.execute(sql.raw(`PREPARE ${name} AS ${text}`)).catch((err: unknown) => {
            // 42P05: already prepared on this instance (by another copy of this module, which
            // builds the same text from the same name); anything else is tried again next call.
            if (pgCodeOf(err) === '42P05') return;
            preparedOn.delete(instance);
            throw err;
          });
          preparedOn.set(instance, ready);
        }
        await ready;
        const args = fillPlaceholders(params, values).map((v) => pgLiteral(v as Literal));
        const result = await db.execute(sql.raw(args.length > 0 ? `EXECUTE ${name}(${args.join(', ')})` : `EXECUTE ${name}`));
        if (compiled.topics.size > 0) onWrite(compiled.topics);
        return result;
      }
      let query = perSession.get(session);
      if (!query) perSession.set(session, (query = session.prepareQuery(compiled.query, undefined, name, false)));
      const result = await query.execute(values);
      if (compiled.topics.size > 0) onWrite(compiled.topics);
      return result;
    },
  };
}
