import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** One statement on its own connection; returns the first column of the first row, if any. */
export async function adminQuery(url: string, sqlText: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<Record<string, string>>(sqlText);
    const first = result.rows[0];
    return first ? Object.values(first)[0] : undefined;
  } finally {
    await client.end();
  }
}

/** What RESULTS.md says about the machine the numbers come from. */
export async function machineFacts(adminUrl: string, root: string): Promise<Record<string, string>> {
  const pgVersion = await adminQuery(adminUrl, "SELECT current_setting('server_version')").catch(() => 'unreachable');
  const pglite = JSON.parse(await readFile(path.join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string };
  return {
    nproc: execFileSync('nproc').toString().trim(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    PostgreSQL: `${pgVersion} on this machine, over loopback`,
    PGlite: pglite.version,
  };
}
