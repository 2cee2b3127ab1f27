import { sql, type SQL } from 'drizzle-orm';
import type { MembershipView } from '../domain/memberships/membership.view.js';
import type { PaymentView } from '../domain/payments/payment.view.js';
import { rowsOf, type Db } from '../database/db.js';
import { membershipJson } from './memberships.store.js';
import { membershipWhere, SORTS, type MembershipFilter } from './membership-queries.js';
import { paymentJson, paymentWhere, type PaymentFilter } from './payments.store.js';

/**
 * The exports' reads (docs/memberships.md, "Export"): the rows a list would give, in its order,
 * one batch after a key at a time (keyset paging), so a batch costs the same at the millionth row
 * as at the first and no statement or connection is held between batches while the client reads.
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

export class ExportsStore {
  constructor(private readonly db: Db) {}

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
