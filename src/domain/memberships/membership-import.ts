import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { MembershipsStore } from '../../store/memberships.store.js';
import { isUserId } from '../ids.js';
import { parseInstant } from '../instant.js';

/**
 * Bulk import of `user_id,end_date` rows (the CLI's `membership import`). Rows are validated one
 * by one and inserted in batches of one statement each (with their `membership.created` events);
 * a bad row is reported with its line number and never stops the import. End dates may lie in
 * the past: such members are imported as `expired`, as they would be in the system they come from.
 */

export interface Rejection {
  line: number;
  user_id: string | null;
  reason: string;
}

export interface ImportReport {
  project_id: string;
  inserted: number;
  rejected: number;
  rejections: Rejection[];
}

export interface ImportOptions {
  batchSize?: number;
  /** Called after each batch with the rows read so far. */
  onProgress?: (rowsRead: number, inserted: number) => void;
}

const DEFAULT_BATCH = 5_000;
const DATE_HINT = 'end_date must be a 13-digit Unix timestamp in milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ';

/** A CSV cell holds text: 13 digits mean milliseconds, anything else must be the ISO form. */
function parseCsvInstant(cell: string): Date | null {
  return parseInstant(/^\d{13}$/.test(cell) ? Number(cell) : cell);
}

export async function importMemberships(
  store: MembershipsStore,
  projectId: string,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const rejections: Rejection[] = [];
  const firstLineOf = new Map<string, number>();
  let batch: { userId: string; endDate: Date; line: number }[] = [];
  let inserted = 0;
  let rowsRead = 0;

  const flush = async () => {
    if (batch.length === 0) return;
    const done = await store.importBatch(projectId, batch);
    for (const row of batch) {
      if (done.has(row.userId)) inserted++;
      else rejections.push({ line: row.line, user_id: row.userId, reason: 'user already has a membership in this project, or is banned from it' });
    }
    batch = [];
    options.onProgress?.(rowsRead, inserted);
  };

  const parser = input.pipe(
    parse({ trim: true, skip_empty_lines: true, relax_column_count: true, skip_records_with_error: true, info: true }),
  );
  parser.on('skip', (err: Error & { lines?: number }) => {
    rejections.push({ line: err.lines ?? 0, user_id: null, reason: `unreadable CSV: ${err.message}` });
  });

  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    const line = info.lines;
    const [userId = '', endDate = ''] = record;
    if (rowsRead === 0 && userId.toLowerCase() === 'user_id') {
      rowsRead++;
      continue; // header
    }
    rowsRead++;
    const reason =
      record.length !== 2
        ? `expected 2 columns (user_id,end_date), found ${record.length}`
        : !isUserId(userId)
          ? 'user_id must be a string of digits'
          : firstLineOf.has(userId)
            ? `duplicate user_id (first on line ${firstLineOf.get(userId)})`
            : null;
    if (reason) {
      rejections.push({ line, user_id: userId || null, reason });
      continue;
    }
    const date = parseCsvInstant(endDate);
    if (!date) {
      rejections.push({ line, user_id: userId, reason: DATE_HINT });
      continue;
    }
    firstLineOf.set(userId, line);
    batch.push({ userId, endDate: date, line });
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  rejections.sort((a, b) => a.line - b.line);
  return { project_id: projectId, inserted, rejected: rejections.length, rejections };
}
