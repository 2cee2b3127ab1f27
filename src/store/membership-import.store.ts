import { Readable } from 'node:stream';
import { queueMessage } from './message-queueing.js';
import { pipeline } from 'node:stream/promises';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DEFAULT_BATCH, EMBEDDED_BATCH } from '../domain/memberships/membership-import.js';
import type {
  ImportChunks,
  ImportChunkStatements,
  MergeOutcome,
  StagedMembership,
} from '../domain/memberships/membership-import.js';
import type { MembershipView } from '../domain/memberships/membership.view.js';
import type { Database } from '../database/db.js';
import { orderedId } from './ordered-ids.js';
import { insertEvent } from './outbox.js';
import { iso } from '../database/sql.js';

/**
 * The CSV import's statements (docs/configuration.md "Importing memberships"); the import itself,
 * its rules and its chunks, is src/domain/memberships/membership-import.ts. A chunk of validated
 * rows is one transaction, opened by `run` on a connection of its own (COPY needs the driver's
 * client): the rows are streamed with COPY into a temporary staging table (`stage`: COPY FROM
 * STDIN on PostgreSQL, COPY FROM '/dev/blob' on PGlite), then one set-based statement (`merge`)
 * inserts the memberships with the status the domain gave them, records their users and writes
 * one `membership.created` event per membership through the outbox, so the fan-out trigger sees
 * the whole chunk as one batch. COPY instead of parameters: a chunk of 20,000 rows costs one round
 * trip and no parameter parsing, and the statement reads a real table the planner can hash-join.
 */

const dialect = new PgDialect();

/** Room for a row of a 20-digit user id (~150 bytes) and then some; a buffer too small for longer ones grows. */
const ROW_BYTES = 168;

/** A name as a field of COPY's text format: the characters COPY reads as syntax escaped. */
const copyText = (value: string) => value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));

/**
 * Staging rows in COPY's text format (user ids are digits and ISO instants need no escaping; a
 * name is escaped). The end date travels twice: as epoch milliseconds for the column (a number
 * converts for a fraction of what parsing a timestamptz costs) and as the ISO text the event shows;
 * so does a start date when the row has one (`\N` when not). Each row brings the ids of its
 * membership and its event, time-ordered (ordered-ids.ts), and the status the domain decided.
 *
 * Each row is written into one buffer as it is made (latin1 for a row without a name: every
 * character is ASCII, one byte each; UTF-8 for one with a name, which may hold any). Appending
 * the rows to one string instead cost ~5 µs of CPU a row more, in a process that shares two cores
 * with the database (the import's own CPU 15-17 → 10-12 µs a row, side by side, 300,000 rows):
 * the string is a rope of 20,000 pieces, flattened and encoded again when sent.
 */
export function copyBuffer(rows: readonly StagedMembership[]): Buffer {
  let buffer = Buffer.allocUnsafe(rows.length * ROW_BYTES);
  let length = 0;
  for (const r of rows) {
    const start = r.startDate === null ? '\\N\t\\N' : `${r.startDate.getTime()}\t${r.startDate.toISOString()}`;
    const row = `${r.line}\t${r.userId}\t${r.endDate.getTime()}\t${r.endDate.toISOString()}\t${r.status}\t${orderedId()}\t${orderedId()}\t${r.planId ?? '\\N'}\t${start}\t${r.userName === null ? '\\N' : copyText(r.userName)}\n`;
    const bytes = r.userName === null ? row.length : Buffer.byteLength(row);
    if (length + bytes > buffer.length) {
      const larger = Buffer.allocUnsafe(2 * (length + bytes));
      buffer.copy(larger, 0, 0, length);
      buffer = larger;
    }
    length += buffer.write(row, length, r.userName === null ? 'latin1' : 'utf8');
  }
  return buffer.subarray(0, length);
}

const STAGE = sql.raw('tenure_import_stage');
// ON COMMIT DROP: nothing outlives the chunk, on a pooled connection the app reuses afterwards.
const CREATE_STAGE =
  'CREATE TEMP TABLE tenure_import_stage (line int NOT NULL, user_id text NOT NULL, end_ms bigint NOT NULL, end_iso text NOT NULL, status text NOT NULL, membership_id uuid NOT NULL, event_id uuid NOT NULL, plan_id uuid, start_ms bigint, start_iso text, user_name text) ON COMMIT DROP';

/**
 * The chunk's statement. The event's object is membershipJson's (memberships.store.ts), with its
 * two instants as text made once per chunk (a start the row does not give: the transaction's
 * now()) or once per row in the caller (the dates' ISO forms, identical to `iso()` for the years
 * parseInstant accepts):
 * to_char per row was a third of the statement's CPU. Its status, and the stored one (expired:
 * no `membership.expired` will be written for it), is the staged row's, decided by the domain
 * against the app's clock. Rows of a banned user, or of one who already has a membership in the
 * project, are not inserted: their lines come back (`refused`). A row's name is its user's
 * `first_name`, as `POST /memberships` stores `user_name.first_name`: set when given, the stored
 * one kept when the cell is empty.
 * test/storage/membership-import.test.ts checks the event against the API's view of the same
 * membership.
 */
function mergeStatement(projectId: string) {
  const json = sql<MembershipView>`jsonb_build_object(
    'membership_id', f.id, 'user_id', f.user_id, 'plan_id', f.plan_id,
    'membership_start_date', f.start_iso, 'membership_end_date', f.end_iso,
    'user_name', CASE WHEN f.first_name IS NULL AND f.username IS NULL THEN NULL
                 ELSE jsonb_build_object('first_name', f.first_name, 'username', f.username) END,
    'plan_name', f.plan_name, 'plan_duration', f.plan_duration,
    'subscription_id', NULL, 'subscription_status', NULL,
    'status', f.status)`;
  return sql`
    WITH clock AS (SELECT ${iso(sql`now()::timestamptz(3)`)} AS start_iso),
    stage AS (SELECT t.*, to_timestamp(t.end_ms::float8 / 1000) AS end_date, to_timestamp(t.start_ms::float8 / 1000) AS start_date FROM ${STAGE} t),
    ins AS (
      INSERT INTO memberships (id, project_id, user_id, end_date, status, plan_id, start_date)
      SELECT t.membership_id, ${projectId}::uuid, t.user_id, t.end_date, t.status, t.plan_id, coalesce(t.start_date, now())
      FROM stage t
      WHERE NOT EXISTS (SELECT 1 FROM bans b WHERE b.project_id = ${projectId}::uuid AND b.user_id = t.user_id)
        AND (t.plan_id IS NULL OR EXISTS (SELECT 1 FROM plans p WHERE p.id = t.plan_id AND p.project_id = ${projectId}::uuid))
      ON CONFLICT (project_id, user_id) DO NOTHING
      RETURNING id, project_id, user_id
    ), usr AS (
      INSERT INTO users (project_id, user_id, first_name)
      SELECT i.project_id, i.user_id, t.user_name FROM ins i JOIN ${STAGE} t ON t.user_id = i.user_id
      ON CONFLICT (project_id, user_id) DO UPDATE SET last_seen = now(), first_name = coalesce(excluded.first_name, users.first_name)
      -- The names the event shows: the row's, else a known user's as stored, none for a new one.
      -- Read from the upsert itself, not by joining users: the planner hashed the whole users
      -- table for that join, every chunk (1 s a chunk at 600,000 users).
      RETURNING user_id, first_name, username
    ), full_row AS (
      SELECT i.id, i.project_id, i.user_id, t.end_ms, t.end_iso, t.status, t.event_id, coalesce(t.start_iso, clock.start_iso) AS start_iso, u.first_name, u.username,
             t.plan_id, p.name AS plan_name, p.duration AS plan_duration
      FROM ins i JOIN ${STAGE} t ON t.user_id = i.user_id JOIN usr u ON u.user_id = i.user_id CROSS JOIN clock
      LEFT JOIN plans p ON p.id = t.plan_id
    ), ev AS (${insertEvent('membership.created', {
      id: sql`f.event_id`,
      projectId: sql`f.project_id`,
      data: { membership: json },
      from: sql`FROM full_row f`,
    })}),
    -- Each active imported member's welcome (docs/lifecycle.md): once per member and project, for life.
    welcomed AS (SELECT i.id, i.project_id, i.user_id, t.plan_id FROM ins i JOIN stage t ON t.user_id = i.user_id WHERE t.status = 'active'),
    welcome AS (${queueMessage('welcome', 'welcomed', sql`now()`, sql`'welcome:' || d.user_id`)})
    SELECT (SELECT count(*)::int FROM ins) AS inserted,
           coalesce((SELECT array_agg(t.line ORDER BY t.line) FROM ${STAGE} t
                     WHERE NOT EXISTS (SELECT 1 FROM ins i WHERE i.user_id = t.user_id)), '{}') AS refused,
           coalesce((SELECT array_agg(t.line ORDER BY t.line) FROM ${STAGE} t
                     WHERE t.plan_id IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM plans p WHERE p.id = t.plan_id AND p.project_id = ${projectId}::uuid)), '{}') AS unknown_plan`;
}

// The chunk's joins hash in memory (the default 4 MB spills 20,000 rows to disk); JIT compiles
// for longer than the statement runs at this size.
const CHUNK_SETTINGS = ["SET LOCAL work_mem = '64MB'", 'SET LOCAL jit = off'];

type Outcome = { inserted: number; refused: number[] | string; unknown_plan: number[] | string };

// node-postgres parses int[]; PGlite does too, but keep the text form working.
const lines = (value: number[] | string) =>
  (typeof value === 'string' ? value.replace(/[{}]/g, '').split(',').filter(Boolean) : value).map(Number);

function outcomeOf(row: Outcome | undefined): MergeOutcome {
  if (!row) throw new Error('import merge returned no row');
  return { inserted: row.inserted, refusedLines: lines(row.refused), unknownPlanLines: lines(row.unknown_plan) };
}

/** The statements of one chunk's transaction, on the driver's client that `run` holds. */
interface ChunkClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  copy(staged: Buffer): Promise<void>;
}

class ChunkStatements implements ImportChunkStatements {
  constructor(private readonly client: ChunkClient) {}

  async stage(rows: readonly StagedMembership[]): Promise<void> {
    await this.client.query(CREATE_STAGE);
    await this.client.copy(copyBuffer(rows));
  }

  async merge(projectId: string): Promise<MergeOutcome> {
    const query = dialect.sqlToQuery(mergeStatement(projectId));
    const result = await this.client.query(query.sql, query.params);
    return outcomeOf(result.rows[0] as Outcome | undefined);
  }
}

export class MembershipImportStore implements ImportChunks {
  constructor(private readonly database: Database) {}

  /**
   * How many chunks may be written at once: two on PostgreSQL (the database works on one while
   * the other is being parsed and sent; the chunks hold different users, so they never wait on
   * each other), one on PGlite (one connection).
   */
  get concurrency(): number {
    return this.database.kind === 'postgres' ? 2 : 1;
  }

  /**
   * Rows per chunk unless the caller says: 20,000 on PostgreSQL; 5,000 on PGlite, whose WebAssembly
   * memory grows to the largest chunk's statement and never gives it back (a 300,000-row import's
   * peak 321-343 MiB against 355-381 with 20,000, in the same time: docs/memory.md).
   */
  get chunkRows(): number {
    return this.database.kind === 'postgres' ? DEFAULT_BATCH : EMBEDDED_BATCH;
  }

  /** One chunk's transaction, on a connection of its own: `work` returning commits, throwing rolls back. */
  run<T>(work: (chunk: ImportChunkStatements) => Promise<T>): Promise<T> {
    return this.database.kind === 'postgres' ? this.onPostgres(work) : this.onPglite(work);
  }

  private async onPostgres<T>(work: (chunk: ImportChunkStatements) => Promise<T>): Promise<T> {
    const pool = (this.database.db as unknown as { $client: pg.Pool }).$client;
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      for (const setting of CHUNK_SETTINGS) await client.query(setting);
      const done = await work(
        new ChunkStatements({
          query: (text, params) => client.query(text, params),
          copy: (staged) => pipeline(Readable.from([staged]), client.query(copyFrom('COPY tenure_import_stage FROM STDIN'))),
        }),
      );
      await client.query('COMMIT');
      return done;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  private async onPglite<T>(work: (chunk: ImportChunkStatements) => Promise<T>): Promise<T> {
    const client = (this.database.db as unknown as { $client: PGlite }).$client;
    return client.transaction(async (tx: Transaction) => {
      for (const setting of CHUNK_SETTINGS) await tx.query(setting);
      return work(
        new ChunkStatements({
          query: (text, params) => tx.query(text, params),
          copy: async (staged) => {
            await tx.query(`COPY tenure_import_stage FROM '/dev/blob'`, [], { blob: new Blob([staged]) });
          },
        }),
      );
    });
  }
}
