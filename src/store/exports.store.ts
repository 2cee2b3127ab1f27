import { PassThrough, pipeline, type Readable } from 'node:stream';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ExportFormat } from '../domain/exports/export-format.js';
import type { MembershipView } from '../domain/memberships/membership.view.js';
import type { PaymentView } from '../domain/payments/payment.view.js';
import { rowsOf, type Database, type Db } from '../database/db.js';
import { crlfRecords } from './crlf-records.js';
import { membershipsCopy, paymentsCopy } from './export-lines.js';
import { membershipJson } from './memberships.store.js';
import { membershipWhere, SORTS, type MembershipFilter } from './membership-queries.js';
import { paymentJson, paymentWhere, type PaymentFilter } from './payments.store.js';

/**
 * The exports' reads (docs/memberships.md, "Export"). On PostgreSQL, the whole export as the
 * database writes it: one `COPY (SELECT …) TO STDOUT` on a connection of its own, its bytes passed
 * on as the client reads them (src/store/export-lines.ts makes the lines). Elsewhere, or when this
 * node already runs as many COPYs as it gives them connections, the rows a list would give, in its
 * order, one batch after a key at a time (keyset paging): a batch costs the same at the millionth
 * row as at the first, and no statement or connection is held between batches.
 */

/**
 * Where a batch ended: the sort column as PostgreSQL prints it (text keeps the microseconds a
 * JavaScript Date would drop, and reads back as the same instant) and the row's id.
 */
export interface ExportKey {
  at: string;
  id: string;
}

export interface ExportBatch<T> {
  rows: T[];
  /** The last row's key; null when the batch is empty. */
  last: ExportKey | null;
}

/** A membership list's filter and order, without its paging. */
export type MembershipExportFilter = Omit<MembershipFilter, 'limit' | 'offset'>;

/**
 * The rows after `key` in (sort column, id) order. The project id leads the row comparison so
 * that it matches the indexes' columns (project_id, column, id) and the scan starts at the key.
 */
function afterKey(alias: string, projectId: string, column: string, direction: 'ASC' | 'DESC', key: ExportKey | null): SQL {
  if (key === null) return sql`true`;
  const c = (name: string) => sql.raw(`${alias}.${name}`);
  const cmp = sql.raw(direction === 'DESC' ? '<' : '>');
  return sql`(${c('project_id')}, ${c(column)}, ${c('id')}) ${cmp} (${projectId}::uuid, ${key.at}::timestamptz, ${key.id}::uuid)`;
}

function batchOf<T>(rows: { k: string; id: string; item: T }[]): ExportBatch<T> {
  const last = rows.at(-1);
  return { rows: rows.map((r) => r.item), last: last ? { at: last.k, id: last.id } : null };
}

const dialect = new PgDialect();

/** COPY exports running on each pool, and how many it may run at once. */
const copying = new WeakMap<pg.Pool, { running: number }>();

/**
 * COPY exports one pool runs at once: a third of its connections (at least one). A COPY holds its
 * connection for as long as its client takes to read; the exports beyond these are served in
 * batches, which hold none between batches, so exports never take every connection from the API.
 */
const copySlots = (pool: pg.Pool) => Math.max(1, Math.floor((pool.options.max ?? 10) / 3));

export class ExportsStore {
  constructor(
    private readonly db: Db,
    /** The database whose pool COPY takes a connection from; none: batches only. */
    private readonly database: Database | null = null,
  ) {}

  /**
   * The membership export as `format`'s bytes, written by PostgreSQL (`COPY … TO STDOUT`), each
   * membership's status as of `now`; null when this storage has no COPY to a stream (PGlite) or
   * every COPY slot is taken: then the caller reads batches.
   */
  copyMemberships(projectId: string, filter: MembershipExportFilter, format: ExportFormat, now: Date): Promise<Readable | null> {
    return this.copy(membershipsCopy(projectId, filter, format, now), format);
  }

  /** The payment export as `format`'s bytes (see copyMemberships). */
  copyPayments(projectId: string, filter: PaymentFilter, format: ExportFormat): Promise<Readable | null> {
    return this.copy(paymentsCopy(projectId, filter, format), format);
  }

  /**
   * Runs `statement` on a pooled connection held until the stream ends. The COPY is read from the
   * socket only as fast as the returned stream is read (pg-copy-streams stops reading it when the
   * stream's buffer is full), so a slow client slows the database's writing, and memory stays at
   * a few buffers. If the stream is destroyed before its end (the client went away) or fails, the
   * connection is closed, not returned: it is in the middle of a COPY, and closing it stops the
   * statement on the server.
   */
  private async copy(statement: SQL, format: ExportFormat): Promise<Readable | null> {
    if (this.database?.kind !== 'postgres') return null;
    const pool = (this.database.db as unknown as { $client: pg.Pool }).$client;
    let slots = copying.get(pool);
    if (!slots) copying.set(pool, (slots = { running: 0 }));
    if (slots.running >= copySlots(pool)) return null;
    slots.running++;
    const taken = slots;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      taken.running--;
      throw err;
    }
    const bytes = client.query(copyTo(dialect.sqlToQuery(statement).sql));
    const body = format === 'csv' ? crlfRecords() : new PassThrough();
    pipeline(bytes, body, (err) => {
      taken.running--;
      // pg ends a client released with an error by destroying its socket when a query is active.
      client.release(err ?? undefined);
    });
    return body;
  }

  /** Up to `limit` memberships matching `filter` after `key`, as the list shows them at `now`. */
  async memberships(projectId: string, filter: MembershipExportFilter, key: ExportKey | null, limit: number, now: Date): Promise<ExportBatch<MembershipView>> {
    const [column, direction] = SORTS[filter.sort ?? '-created_at'];
    const order = sql.raw(`${column} ${direction}, id ${direction}`);
    const result = await this.db.execute(sql`
      SELECT full_row.k, full_row.id, ${membershipJson('full_row', now)} AS item FROM (
        SELECT m.*, m.${sql.raw(column)}::text AS k, p.name AS plan_name, p.duration AS plan_duration,
          u.first_name AS user_first_name, u.username AS user_username
        FROM (SELECT * FROM memberships m
              WHERE ${membershipWhere(projectId, filter, now)} AND ${afterKey('m', projectId, column, direction, key)}
              ORDER BY ${order} LIMIT ${limit}) m
        LEFT JOIN plans p ON p.id = m.plan_id
        LEFT JOIN users u ON u.project_id = m.project_id AND u.user_id = m.user_id) full_row
      ORDER BY ${order}`);
    return batchOf(rowsOf<{ k: string; id: string; item: MembershipView }>(result));
  }

  /** Up to `limit` payments matching `filter` after `key`, newest first as the list orders them. */
  async payments(projectId: string, filter: PaymentFilter, key: ExportKey | null, limit: number): Promise<ExportBatch<PaymentView>> {
    const result = await this.db.execute(sql`
      SELECT p.created_at::text AS k, p.id, ${paymentJson('p')} AS item FROM payments p
      WHERE ${paymentWhere(projectId, filter)} AND ${afterKey('p', projectId, 'created_at', 'DESC', key)}
      ORDER BY p.created_at DESC, p.id DESC LIMIT ${limit}`);
    return batchOf(rowsOf<{ k: string; id: string; item: PaymentView }>(result));
  }
}
