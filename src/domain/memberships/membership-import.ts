import type { Readable } from 'node:stream';
import { Parser } from 'csv-parse';
import type { Clock } from '../clock.js';
import { isUserId } from '../ids.js';
import { parseInstant } from '../instant.js';
import type { Transactor } from '../transactions.js';
import { statusAt } from './active.js';
import type { MembershipView } from './membership.view.js';

/**
 * Bulk import of `user_id,end_date` rows (the CLI's `membership import`). Rows are validated one
 * by one as the file streams in and written in chunks, each one transaction opened here (the rows
 * staged with COPY, then one statement for the memberships, their users and their
 * `membership.created` events: src/store/membership-import.store.ts); a bad row is reported with
 * its line number and never stops the import, nor does a row the statement refuses (the user is
 * banned or already a member). End dates may lie in the past: such members are imported as
 * `expired` (statusAt, against the app's clock when the chunk is written), as they would be in the
 * system they come from. While the database writes one chunk, the next is parsed (on
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

/** A validated row, with the status it is imported with. */
export interface StagedMembership {
  line: number;
  userId: string;
  endDate: Date;
  status: MembershipView['status'];
}

export interface MergeOutcome {
  inserted: number;
  /** Lines of the staged rows not inserted: the user already has a membership in the project, or is banned from it. */
  refusedLines: number[];
}

/** The statements of one chunk's transaction. */
export interface ImportChunkStatements {
  /** Stages the chunk's rows (COPY into a table of the transaction's own). */
  stage(rows: readonly StagedMembership[]): Promise<void>;
  /** Inserts the staged memberships, their users and their events, in one statement. */
  merge(projectId: string): Promise<MergeOutcome>;
}

/** Where chunks are written: a transaction a chunk, at most `concurrency` at once. */
export interface ImportChunks extends Transactor<ImportChunkStatements> {
  readonly concurrency: number;
}

export interface ImportDeps {
  chunks: ImportChunks;
  /** The app's clock: the one every reader asks whether a membership is active (active.ts). */
  clock: Clock;
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

interface ParsedRow {
  line: number;
  userId: string;
  endDate: Date;
}

export async function importMemberships(
  { chunks, clock }: ImportDeps,
  projectId: string,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const rejections: Rejection[] = [];
  const firstLineOf = new Map<string, number>();
  let batch: ParsedRow[] = [];
  let inserted = 0;
  let rowsRead = 0;

  // Chunks being written; at most chunks.concurrency at once, so parsing runs ahead by that much.
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const settle = (rows: readonly StagedMembership[], outcome: MergeOutcome) => {
    inserted += outcome.inserted;
    const userOf = new Map(rows.map((r) => [r.line, r.userId]));
    for (const line of outcome.refusedLines) rejections.push({ line, user_id: userOf.get(line) ?? null, reason: SKIPPED });
    options.onProgress?.(rowsRead, inserted);
  };
  // One chunk, one transaction: committed whole or not at all (a failure stops the import, the
  // chunks committed before it stay).
  const write = (rows: readonly StagedMembership[]) =>
    chunks.run(async (chunk) => {
      await chunk.stage(rows);
      return chunk.merge(projectId);
    });
  const flush = async () => {
    if (batch.length === 0) return;
    const now = clock.now();
    const rows = batch.map((r): StagedMembership => ({ ...r, status: statusAt(r.endDate, now) }));
    batch = [];
    while (inFlight.size >= chunks.concurrency) await Promise.race(inFlight);
    if (failure) throw failure.error;
    const written: Promise<void> = write(rows)
      .then((outcome) => settle(rows, outcome))
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(written));
    inFlight.add(written);
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
