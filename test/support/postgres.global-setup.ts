import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/database/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A URL on the DATABASE_URL server to run CREATE/DROP DATABASE from. */
    pgAdminUrl: string;
    /** The migrated database every per-file database of this run is copied from. */
    pgTemplate: string;
    /** Every database of this run starts with it; teardown drops them all. */
    pgPrefix: string;
  }
}

/** Runs one statement on the server of `adminUrl` over a short-lived connection. */
async function admin<T extends pg.QueryResultRow>(adminUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

function urlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Migrating costs seconds; copying a migrated database costs a fraction of one. So the run
 * migrates one template database, and each test file copies it (`CREATE DATABASE … TEMPLATE`),
 * which keeps files from seeing each other's rows without any filter in production code.
 * Every name starts with a prefix unique to this run, so concurrent runs on one server never
 * collide and teardown finds everything this run made.
 */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.DATABASE_URL!;
  const prefix = `tenure_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = `${prefix}_template`;

  await admin(adminUrl, `CREATE DATABASE "${template}"`);
  const database = await openDatabase({ kind: 'postgres', url: urlOf(adminUrl, template), poolSize: 1 });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
  // A template must have no sessions while it is copied: refuse them from now on.
  await admin(adminUrl, `ALTER DATABASE "${template}" WITH ALLOW_CONNECTIONS false`);

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgPrefix', prefix);

  return async () => {
    const rows = await admin<{ datname: string }>(adminUrl, 'SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await admin(adminUrl, `DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  };
}
