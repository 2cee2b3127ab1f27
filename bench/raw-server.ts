import http from 'node:http';
import { sql } from 'drizzle-orm';
import { systemClock } from '../src/domain/clock.js';
import { affectedOf, openDatabase, type Database } from '../src/database/db.js';
import { createStores } from '../src/store/stores.js';

/**
 * The baseline: a bare `node:http` server doing only the database work of the two extend
 * endpoints, through the same `openDatabase` (same pg pool settings, or in-process PGlite). No
 * framework, auth, schema validation, envelope or logging: what is left is the floor.
 *
 *   PATCH /v2/projects/:p/memberships/:u/extend           MembershipsStore.extendOne (the
 *                                                          service's very statement, no copy)
 *   PATCH /v2/projects/:p/memberships/:u/extend?sql=bare  bare UPDATE … WHERE project_id AND user_id
 *   PATCH /v2/projects/:p/memberships/extend              bare bulk UPDATE … WHERE project_id
 *
 * Env: PORT, HOST (127.0.0.1), and DATABASE_URL (+ DATABASE_POOL_SIZE, default 10 like the
 * service) or DATA_DIR for PGlite.
 */

const ONE = /^\/v2\/projects\/([^/]+)\/memberships\/([^/]+)\/extend$/;
const ALL = /^\/v2\/projects\/([^/]+)\/memberships\/extend$/;

async function main(): Promise<void> {
  const env = process.env;
  const database: Database = env.DATABASE_URL
    ? await openDatabase({ kind: 'postgres', url: env.DATABASE_URL, poolSize: Number(env.DATABASE_POOL_SIZE ?? 10) })
    : await openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR ?? '' }, { lockWaitMs: 15_000 });
  // The service's store as the container makes it (createStores): its extends batched the same way.
  const store = createStores(database, systemClock).memberships;

  const handle = async (url: string, body: string): Promise<[number, unknown]> => {
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const bare = q !== -1 && url.slice(q + 1) === 'sql=bare';
    const { extend } = JSON.parse(body) as { extend: unknown };
    const endDate = new Date(extend as string | number);
    if (Number.isNaN(endDate.getTime())) return [422, { ok: false }];
    const one = ONE.exec(path);
    if (one) {
      const [, projectId, userId] = one as unknown as [string, string, string];
      const found = bare
        ? affectedOf(
            await database.db.execute(
              sql`UPDATE memberships SET end_date = ${endDate} WHERE project_id = ${projectId} AND user_id = ${userId}`,
            ),
          ) > 0
        : (await store.extendOne(projectId, userId, endDate)) !== null;
      return found ? [200, { ok: true, total: 1, data: { new_end_date: endDate.toISOString() } }] : [404, { ok: false }];
    }
    const all = ALL.exec(path);
    if (all) {
      const result = await database.db.execute(
        sql`UPDATE memberships SET end_date = ${endDate}, status = 'active', updated_at = now() WHERE project_id = ${all[1]!}`,
      );
      return [200, { ok: true, total: affectedOf(result), data: { new_end_date: endDate.toISOString() } }];
    }
    return [404, { ok: false }];
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = ([status, payload]: [number, unknown]) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      handle(req.url ?? '/', Buffer.concat(chunks).toString('utf8')).then(reply, (err: unknown) => {
        process.stderr.write(`raw-server: ${String(err)}\n`);
        reply([500, { ok: false }]);
      });
    });
  });
  server.listen(Number(env.PORT ?? 0), env.HOST ?? '127.0.0.1');

  const stop = () => {
    server.close();
    server.closeAllConnections();
    database.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

await main();
