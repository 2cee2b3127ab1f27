import type { Readable } from 'node:stream';
import { Parser } from 'csv-parse';
import type { ChunkOutcome, ImportRow, MembershipImportStore } from '../../store/membership-import.store.js';
import { isUserId } from '../ids.js';
import { parseInstant } from '../instant.js';

/**
 * Bulk import of `user_id,end_date` rows (the CLI's `membership import`). Rows are validated one
 * by one as the file streams in and written in chunks, each one transaction (COPY into a staging
 * table, then one statement for the memberships, their users and their `membership.created`
 * events: membership-import.store.ts); a bad row is reported with its line number and never stops
 * the import. End dates may lie in the past: such members are imported as `expired`, as they would
 * be in the system they come from. While the database writes one chunk, the next is parsed (on
 * PostgreSQL two chunks may be written at once): memory holds at most that many chunks, plus the
 * first line of every user id seen (duplicates within the file are reported as such). A failure
 * stops the import: the chunks committed before it stay (docs/configuration.md).
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
  /** Rows per chunk (one transaction). */
  batchSize?: number;
  /** Called after each chunk is committed, with the rows read so far. */
  onProgress?: (rowsRead: number, inserted: number) => void;
}

export const DEFAULT_BATCH = 20_000;
const DATE_HINT = 'end_date must be a 13-digit Unix timestamp in milliseconds or YYYY-MM-DDTHH:MM:SS.mmmZ';

/** A CSV cell holds text: 13 digits mean milliseconds, anything else must be the ISO form. */
function parseCsvInstant(cell: string): Date | null {
  return parseInstant(/^\d{13}$/.test(cell) ? Number(cell) : cell);
}

const SKIPPED = 'user already has a membership in this project, or is banned from it';

/**
 * csv-parse's parser, each record pushed with the line it ends on: `{ record, line }`. Its own
 * `info: true` gives the same number (`info.lines`, read at the same moment) inside an object of
 * some fifteen fields copied per record, which was half of the parse's CPU (9 µs a row of 17).
 */
class LineNumberedParser extends Parser {
  override push(record: unknown): boolean {
    return super.push(record === null ? null : { record, line: this.info.lines });
  }
}

export async function importMemberships(
  store: MembershipImportStore,
  projectId: string,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const rejections: Rejection[] = [];
  const firstLineOf = new Map<string, number>();
  let batch: ImportRow[] = [];
  let inserted = 0;
  let rowsRead = 0;

  // Chunks being written; at most store.concurrency at once, so parsing runs ahead by that much.
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const settle = (rows: ImportRow[], outcome: ChunkOutcome) => {
    inserted += outcome.inserted;
    const userOf = new Map(rows.map((r) => [r.line, r.userId]));
    for (const line of outcome.skippedLines) rejections.push({ line, user_id: userOf.get(line) ?? null, reason: SKIPPED });
    options.onProgress?.(rowsRead, inserted);
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    while (inFlight.size >= store.concurrency) await Promise.race(inFlight);
    if (failure) throw failure.error;
    const write: Promise<void> = store
      .insertChunk(projectId, rows)
      .then((outcome) => settle(rows, outcome))
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
  };
  const drain = async () => {
    await Promise.all(inFlight);
    if (failure) throw failure.error;
  };

  const parser = input.pipe(
    new LineNumberedParser({ trim: true, skip_empty_lines: true, relax_column_count: true, skip_records_with_error: true }),
  );
  parser.on('skip', (err: Error & { lines?: number }) => {
    rejections.push({ line: err.lines ?? 0, user_id: null, reason: `unreadable CSV: ${err.message}` });
  });

  try {
    for await (const { record, line } of parser as AsyncIterable<{ record: string[]; line: number }>) {
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
  } finally {
    // Whatever stopped the loop, no chunk is left running behind the caller's back.
    await Promise.allSettled(inFlight);
  }
  await drain();
  rejections.sort((a, b) => a.line - b.line);
  return { project_id: projectId, inserted, rejected: rejections.length, rejections };
}
