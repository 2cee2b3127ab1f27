import { sql } from 'drizzle-orm';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, type Database } from '../../src/database/db.js';
import { seededStorage, type BenchContext } from './context.js';

export type Storage = 'PostgreSQL' | 'PGlite';

/** A seeded project: its id, an API key for it, and its members' user ids ("1" … String(members)). */
export interface Tenant {
  projectId: string;
  key: string;
  members: number;
}

/**
 * Creates a project and key through the service layer (as `npx tenure project/key create` does),
 * then `members` memberships in one INSERT … SELECT generate_series. Half of them are expired, so
 * an extend also reactivates, as in real use.
 */
export async function seedTenant(database: Database, name: string, members: number): Promise<Tenant> {
  const { projects } = (await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database })).services;
  const project = await projects.createProject(name);
  if (!project.ok) throw project.error;
  const key = await projects.createKey(project.value.id, 'bench', 'bench');
  if (!key.ok) throw key.error;
  await database.db.execute(sql`
    INSERT INTO memberships (project_id, user_id, end_date, status)
    SELECT ${project.value.id}, g::text,
           now() + CASE WHEN g % 2 = 0 THEN interval '30 days' ELSE interval '-30 days' END,
           CASE WHEN g % 2 = 0 THEN 'active' ELSE 'expired' END
    FROM generate_series(1, ${members}::int) AS g`);
  return { projectId: project.value.id, key: key.value.key, members };
}

/** One storage's seed: what `seed` returned and how long it took. */
export interface Seeding<T> {
  storage: Storage;
  seeded: T;
  seconds: number;
}

/**
 * The loop of a bench that seeds once and then reads: for each storage in turn, a migrated
 * database seeded by `seed` (seededStorage), opened again (PostgreSQL with a pool of 4) and handed
 * to `measure`, closed whatever happened. Returns the rows of every storage and each one's seeding.
 */
export async function measureSeeded<T, R>(
  ctx: BenchContext,
  storages: readonly Storage[],
  o: { name: string; seed: (database: Database, storage: Storage) => Promise<T>; measure: (storage: Storage, database: Database, seeded: T) => Promise<R[]> },
): Promise<{ rows: R[]; seeds: Seeding<T>[] }> {
  const rows: R[] = [];
  const seeds: Seeding<T>[] = [];
  for (const storage of storages) {
    const started = Date.now();
    const { env, seeded } = await seededStorage(ctx, storage, o.name, (d) => o.seed(d, storage));
    const seconds = (Date.now() - started) / 1000;
    ctx.log(`${storage}: seeded in ${seconds.toFixed(0)} s`);
    seeds.push({ storage, seeded, seconds });
    const database = await openDatabase(env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL, poolSize: 4 } : { kind: 'pglite', dataDir: env.DATA_DIR! });
    try {
      rows.push(...(await o.measure(storage, database, seeded)));
    } finally {
      await database.close();
    }
  }
  return { rows, seeds };
}
