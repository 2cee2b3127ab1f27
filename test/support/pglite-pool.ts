import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { Logger } from 'pino';
import { inject } from 'vitest';
import { pgliteDatabase, type Database } from '../../src/database/db.js';

/** A dump read once per worker process (tens of MB: read per harness, it cost ~50 ms of CPU each time). */
const dumps = new Map<string, Promise<Blob>>();
export function dumpAt(file: string): Promise<Blob> {
  let dump = dumps.get(file);
  if (!dump) dumps.set(file, (dump = readFile(file).then((bytes) => new Blob([bytes]))));
  return dump;
}

/**
 * The in-memory PGlite instances of this worker process, handed from one harness to the next.
 * Starting a PGlite costs 1 to 2 s of CPU (the wasm module, then the backend starting up), most of
 * what a light test file costs; emptying one costs milliseconds. So a harness on PGlite borrows an
 * instance as the seed left it, and closing the harness's database gives it back emptied: every
 * table truncated (sequences restarted), no advisory lock or LISTEN left, the schema as the seed
 * has it. An instance whose schema a test changed, or that a test broke, is closed instead. Test
 * files in one worker run one after another, so no two harnesses ever share an instance.
 */
const idlePglite: PGlite[] = [];
let seedSchema: Promise<string> | undefined;

/** A fingerprint of the public schema: tables, columns, indexes, triggers, functions. */
async function schemaOf(client: PGlite): Promise<string> {
  const { rows } = await client.query<{ schema: string }>(`
    SELECT md5(string_agg(item, ',' ORDER BY item)) AS schema FROM (
      SELECT 'c:' || c.relname || ':' || c.relkind::text || ':' || coalesce((
        SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ';' ORDER BY a.attnum)
        FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS item
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
      UNION ALL SELECT 't:' || tgname || ':' || tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal
      UNION ALL SELECT 'f:' || p.proname || ':' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
    ) items`);
  return rows[0]!.schema;
}

export async function borrowPglite(logger: Pick<Logger, 'warn'>): Promise<Database> {
  const client = idlePglite.pop() ?? (await PGlite.create({ loadDataDir: await dumpAt(inject('pgliteSeed')) }));
  seedSchema ??= schemaOf(client);
  await seedSchema;
  let returned = false;
  const giveBack = async () => {
    if (returned) return;
    returned = true;
    const reset = async () => {
      await client.exec(`
        SELECT pg_advisory_unlock_all();
        UNLISTEN *;
        DO $$ BEGIN
          EXECUTE (SELECT 'TRUNCATE ' || string_agg(format('%I', tablename), ', ') || ' RESTART IDENTITY CASCADE'
                   FROM pg_tables WHERE schemaname = 'public');
        END $$;`);
      if ((await schemaOf(client)) !== (await seedSchema)) throw new Error('the schema changed');
    };
    // A transaction some test left open holds PGlite's lock for ever: such an instance is dropped.
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('stuck')), 5_000)));
    try {
      await Promise.race([reset(), stuck]);
      idlePglite.push(client);
    } catch {
      void client.close().catch(() => undefined);
    } finally {
      clearTimeout(timer);
    }
  };
  // The database's close() gives the instance back instead of closing it.
  const lent = new Proxy(client, {
    get(target, property) {
      if (property === 'close') return giveBack;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return pgliteDatabase(lent, { logger });
}

