import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/store/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** Creates this run's own database on the DATABASE_URL server, migrates it, and drops it after. */
export default async function setup(project: TestProject) {
  const admin = new URL(process.env.DATABASE_URL!);
  const name = `tenure_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const run = (sql: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    return client.connect().then(() => client.query(sql)).finally(() => client.end());
  };
  await run(`CREATE DATABASE "${name}"`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
  await database.migrate();
  await database.close();
  project.provide('databaseUrl', url.toString());
  return async () => {
    await run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
}
