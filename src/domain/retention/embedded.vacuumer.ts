import type { Logger } from 'pino';
import type { MaintenanceStore, TableActivity } from '../../store/maintenance.store.js';
import { WakeLoop } from '../../wake-loop.js';

/** The statements of MaintenanceStore this uses (a narrow port: tests give it a small twin). */
export type MaintenanceStatements = Pick<MaintenanceStore, 'analyze' | 'tableActivity' | 'vacuum'>;

/**
 * Autovacuum for embedded storage (docs/operations.md, "Embedded storage maintenance"). PGlite runs
 * no autovacuum, and tenure's queue-like tables churn all the time (event_broadcasts marked,
 * event_plan_queue deleted, deliveries, access rows, memberships, idempotency keys…): without a
 * vacuum their dead rows and index entries stay for good, and every claim steps over more of them.
 * Every `intervalMs` this reads what the database counted of each table (`pg_stat_all_tables`:
 * PGlite keeps those counts, not across a restart) and vacuums the tables past a threshold, one
 * table per statement, so an API request waits behind one table's vacuum at most. PostgreSQL has
 * autovacuum (drizzle/0019 tunes it for the queues): the worker runtime starts this on embedded
 * storage only.
 */

export interface VacuumThresholds {
  /** Dead rows that make a table due (autovacuum_vacuum_threshold with a scale factor of 0). */
  dead: number;
  /** Rows inserted since the last vacuum: sets the visibility map, freezes (autovacuum_vacuum_insert_threshold). */
  inserted: number;
  /** Changes since the last ANALYZE: this many plus `analyzeScale` × live rows (autovacuum_analyze_*). */
  analyzeBase: number;
  analyzeScale: number;
  /** Transaction age of the oldest unfrozen row past which a vacuum is due (plain VACUUM freezes past vacuum_freeze_table_age, 150 M). */
  xidAge: number;
}

/**
 * PGlite measured (a data directory, event_broadcasts with 1.1 M rows): VACUUM after 1,000 churned
 * rows 2 ms, after 100,000 35-40 ms (65 ms on a loaded machine); ANALYZE 50 ms (100 ms loaded), as
 * it reads a sample of 30,000 rows whatever the size. Hence a low dead-row threshold (the
 * PostgreSQL tuning of 0019 waits for 10,000: there a claim stepping over dead entries does not
 * hold the only connection) and ANALYZE only as often as autovacuum would.
 */
export const EMBEDDED_VACUUM_THRESHOLDS: VacuumThresholds = {
  dead: 1_000,
  inserted: 100_000,
  analyzeBase: 1_000,
  analyzeScale: 0.1,
  xidAge: 160_000_000,
};

/** A pass that held the database this long, or removed this many dead rows, is logged at info; others at debug. */
const NOTEWORTHY_MS = 50;
const NOTEWORTHY_DEAD = 10_000;

export interface DueTable {
  schema: string;
  table: string;
  vacuum: boolean;
  analyze: boolean;
  dead: number;
}

/** The tables due for a VACUUM, an ANALYZE or both, the most dead rows first. */
export function dueTables(activity: readonly TableActivity[], t: VacuumThresholds): DueTable[] {
  const due: DueTable[] = [];
  for (const a of activity) {
    const vacuum = a.dead >= t.dead || a.insertedSinceVacuum >= t.inserted || a.xidAge >= t.xidAge;
    const analyze = a.modifiedSinceAnalyze >= t.analyzeBase + t.analyzeScale * a.live;
    if (vacuum || analyze) due.push({ schema: a.schema, table: a.table, vacuum, analyze, dead: a.dead });
  }
  return due.sort((x, y) => y.dead - x.dead);
}

export interface VacuumedTable {
  table: string;
  dead: number;
  vacuumed: boolean;
  analyzed: boolean;
  ms: number;
}

export interface EmbeddedVacuumerOptions {
  intervalMs: number;
  thresholds: VacuumThresholds;
}

export class EmbeddedVacuumer {
  private readonly loop: WakeLoop;

  constructor(
    private readonly store: MaintenanceStatements,
    private readonly logger: Logger,
    private readonly options: EmbeddedVacuumerOptions,
  ) {
    this.loop = new WakeLoop(
      async () => {
        const started = performance.now();
        const done = await this.vacuumOnce();
        if (done.length === 0) return;
        const ms = Math.round(performance.now() - started);
        const dead = done.reduce((n, d) => n + d.dead, 0);
        const noteworthy = ms >= NOTEWORTHY_MS || dead >= NOTEWORTHY_DEAD;
        this.logger[noteworthy ? 'info' : 'debug']({ tables: done, dead, ms }, 'vacuumed embedded storage');
      },
      (err) => this.logger.error({ err }, 'vacuuming embedded storage failed; trying again later'),
      options.intervalMs,
    );
  }

  /** Vacuums (and analyzes) the tables due now, one statement each (a stop ends it after the table in hand); returns what it did. */
  async vacuumOnce(): Promise<VacuumedTable[]> {
    const done: VacuumedTable[] = [];
    for (const t of dueTables(await this.store.tableActivity(), this.options.thresholds)) {
      if (this.loop.isStopped) break;
      const started = performance.now();
      // Two statements, not VACUUM (ANALYZE): a request waits behind one or the other, not both.
      if (t.vacuum) await this.store.vacuum(t.schema, t.table);
      const analyzed = t.analyze && !this.loop.isStopped;
      if (analyzed) await this.store.analyze(t.schema, t.table);
      const table = t.schema === 'public' ? t.table : `${t.schema}.${t.table}`;
      done.push({ table, dead: t.dead, vacuumed: t.vacuum, analyzed, ms: Math.round(performance.now() - started) });
    }
    return done;
  }

  /** Looks now, then every `intervalMs`. */
  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
