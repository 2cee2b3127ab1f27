import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import { isUserId, isUuid } from '../ids.js';
import { UserIdLines } from './user-id-lines.js';
import type { Transactor } from '../transactions.js';
import { statusAt } from './active.js';
import { csvLines } from './csv-lines.js';
import {
  columnsOf,
  COLUMNS,
  END_DATE_HINT,
  NAME_HINT,
  nameOf,
  parseCsvInstant,
  START_AFTER_END,
  START_DATE_HINT,
  type Columns,
  type ParsedRow,
} from './import-rows.js';
import type { MembershipView } from './membership.view.js';

/**
 * Bulk import of `user_id,end_date` rows, optionally with `plan_id`, `user_name` and `start_date`
 * (the CLI's `membership import`). Rows are validated one
 * by one as the file streams in and written in chunks, each one transaction opened here (the rows
 * staged with COPY, then one statement for the memberships, their users and their
 * `membership.created` events: src/store/membership-import.store.ts). Every data row ends up
 * either inserted or rejected with its line number and the reason: a bad row, a line that is not
 * readable CSV (csv-lines.ts: one record a line, so a broken one costs that line alone), a row the
 * statement refuses (the user is banned or already a member). End dates may lie in the past: such
 * members are imported as `expired` (statusAt, against the app's clock when the chunk is
 * written), as they would be in the system they come from. A dry run writes each chunk and rolls
 * it back, so its report is the real one's and nothing stays. While the database writes one
 * chunk, the next is parsed (on PostgreSQL two chunks may be written at once): memory holds at
 * most that many chunks, the rejections, and the first line of every user id seen (duplicates
 * within the file are reported as such). A failure stops the import: the chunks committed before
 * it stay (docs/configuration.md, "Importing memberships").
 */

export { ImportFormatError } from './import-rows.js';

export interface Rejection {
  line: number;
  user_id: string | null;
  reason: string;
  /** The line as it is in the file. */
  text: string;
}

export interface ImportReport {
  project_id: string;
  /** Nothing was kept: each chunk was rolled back. */
  dry_run: boolean;
  /** Data rows read: every non-blank line but the header. */
  rows: number;
  inserted: number;
  rejected: number;
  rejections: Rejection[];
}

export interface ImportOptions {
  /** Rows per chunk (one transaction); default the storage's (`chunkRows`). */
  batchSize?: number;
  /** Called after each chunk is committed, with the data rows read so far. */
  onProgress?: (rowsRead: number, inserted: number) => void;
  /** Check the file against the database without keeping anything. */
  dryRun?: boolean;
}

/** A validated row, with the status it is imported with. */
export interface StagedMembership {
  line: number;
  userId: string;
  endDate: Date;
  /** The plan the membership is on, or null (then it grants nothing until it is given one). */
  planId: string | null;
  /** When the membership began, or null: the instant it is written. */
  startDate: Date | null;
  /** The user's name, stored as the API stores `user_name.first_name`; null leaves a known user's as it is. */
  userName: string | null;
  status: MembershipView['status'];
}

export interface MergeOutcome {
  inserted: number;
  /** Lines of the staged rows not inserted: the user already has a membership in the project, or is banned from it, or the plan is unknown. */
  refusedLines: number[];
  /** Of those, the lines whose plan_id names no plan of the project. */
  unknownPlanLines: number[];
}

/** The statements of one chunk's transaction. */
export interface ImportChunkStatements {
  /** Stages the chunk's rows (COPY into a table of the transaction's own). */
  stage(rows: readonly StagedMembership[]): Promise<void>;
  /** Inserts the staged memberships, their users and their events, in one statement. */
  merge(projectId: string): Promise<MergeOutcome>;
}

/** Where chunks are written: a transaction a chunk, at most `concurrency` at once, `chunkRows` rows each unless the caller says. */
export interface ImportChunks extends Transactor<ImportChunkStatements> {
  readonly concurrency: number;
  readonly chunkRows?: number;
}

export interface ImportDeps {
  chunks: ImportChunks;
  /** The app's clock: the one every reader asks whether a membership is active (active.ts). */
  clock: Clock;
}

export const DEFAULT_BATCH = 20_000;
/** Embedded storage's chunk: smaller, as its memory never shrinks back (membership-import.store.ts). */
export const EMBEDDED_BATCH = 5_000;
const SKIPPED = 'user already has a membership in this project, or is banned from it';
const UNKNOWN_PLAN = 'plan_id names no plan of this project';

/** Thrown inside a dry run's chunk transaction so it rolls back, carrying what the chunk did. */
class RolledBack {
  constructor(readonly outcome: MergeOutcome) {}
}

export async function importMemberships(
  { chunks, clock }: ImportDeps,
  projectId: string,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? chunks.chunkRows ?? DEFAULT_BATCH;
  const dryRun = options.dryRun ?? false;
  const rejections: Rejection[] = [];
  // Compact: an import of a million rows remembers a million ids (user-id-lines.ts).
  const firstLineOf = new UserIdLines();
  let batch: ParsedRow[] = [];
  let inserted = 0;
  let rowsRead = 0;

  // Chunks being written; at most chunks.concurrency at once, so parsing runs ahead by that much.
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const settle = (rows: readonly ParsedRow[], outcome: MergeOutcome) => {
    inserted += outcome.inserted;
    const rowOf = new Map(rows.map((r) => [r.line, r]));
    const unknownPlan = new Set(outcome.unknownPlanLines);
    for (const line of outcome.refusedLines) {
      const row = rowOf.get(line);
      rejections.push({ line, user_id: row?.userId ?? null, reason: unknownPlan.has(line) ? UNKNOWN_PLAN : SKIPPED, text: row?.text ?? '' });
    }
    options.onProgress?.(rowsRead, inserted);
  };
  // One chunk, one transaction: committed whole or not at all (a failure stops the import, the
  // chunks committed before it stay). A dry run's is rolled back once it has its outcome.
  const write = (rows: readonly StagedMembership[]) =>
    chunks
      .run(async (chunk) => {
        await chunk.stage(rows);
        const outcome = await chunk.merge(projectId);
        if (dryRun) throw new RolledBack(outcome);
        return outcome;
      })
      .catch((err: unknown) => {
        if (err instanceof RolledBack) return err.outcome;
        throw err;
      });
  const flush = async () => {
    if (batch.length === 0) return;
    const now = clock.now();
    const parsed = batch;
    const rows = parsed.map(
      (r): StagedMembership => ({
        line: r.line,
        userId: r.userId,
        endDate: r.endDate,
        planId: r.planId,
        startDate: r.startDate,
        userName: r.userName,
        status: statusAt(r.endDate, now),
      }),
    );
    batch = [];
    while (inFlight.size >= chunks.concurrency) await Promise.race(inFlight);
    if (failure) throw failure.error;
    const written: Promise<void> = write(rows)
      .then((outcome) => settle(parsed, outcome))
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

  let columns: Columns | null = null;
  let width: number = COLUMNS.length;
  try {
    for await (const { line, text, fields, error } of csvLines(input)) {
      if (columns === null) {
        columns = { userId: 0, endDate: 1, planId: -1, userName: -1, startDate: -1 };
        // A header names user_id somewhere (a data row's user id is digits), in any order.
        if (fields?.some((f) => f.toLowerCase() === 'user_id')) {
          columns = columnsOf(fields);
          width = fields.length;
          continue; // the header is not a data row
        }
      }
      rowsRead++;
      if (error !== null) {
        rejections.push({ line, user_id: null, reason: `unreadable CSV: ${error}`, text });
        continue;
      }
      const userId = fields[columns.userId] ?? '';
      const endDate = fields[columns.endDate] ?? '';
      const planId = columns.planId < 0 ? '' : (fields[columns.planId] ?? '');
      const name = columns.userName < 0 ? undefined : nameOf(fields[columns.userName] ?? '');
      const reason =
        fields.length !== width
          ? `expected ${width} columns (${width === 2 ? 'user_id,end_date' : 'as the header'}), found ${fields.length}`
          : !isUserId(userId)
            ? 'user_id must be a string of digits'
            : planId !== '' && !isUuid(planId)
              ? 'plan_id must be a plan id (a UUID) or empty'
              : name === null
                ? NAME_HINT
                : firstLineOf.has(userId)
                ? `duplicate user_id (first on line ${firstLineOf.get(userId)})`
                : null;
      if (reason) {
        rejections.push({ line, user_id: userId || null, reason, text });
        continue;
      }
      const date = parseCsvInstant(endDate);
      const startCell = columns.startDate < 0 ? '' : (fields[columns.startDate] ?? '');
      const start = startCell === '' ? null : parseCsvInstant(startCell);
      const dateReason = !date
        ? END_DATE_HINT
        : startCell !== '' && !start
          ? START_DATE_HINT
          : start && start.getTime() > date.getTime()
            ? START_AFTER_END
            : null;
      if (dateReason || !date) {
        rejections.push({ line, user_id: userId, reason: dateReason ?? END_DATE_HINT, text });
        continue;
      }
      firstLineOf.set(userId, line);
      batch.push({ userId, endDate: date, planId: planId === '' ? null : planId.toLowerCase(), startDate: start, userName: name ?? null, line, text });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
  } finally {
    // Whatever stopped the loop, no chunk is left running behind the caller's back.
    await Promise.allSettled(inFlight);
  }
  await drain();
  rejections.sort((a, b) => a.line - b.line);
  return { project_id: projectId, dry_run: dryRun, rows: rowsRead, inserted, rejected: rejections.length, rejections };
}
