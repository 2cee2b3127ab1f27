import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Operation } from './operations.js';

/**
 * Every project route's Operation, found by file name rather than listed: any `*operations*.ts` or
 * `*.operation.ts` under test/ that exports an Operation (alone or in an array) contributes it, so
 * the shared-behaviour table (test/http/shared.*.test.ts) covers a route as soon as its Operation
 * exists. That table also fails, by name, for a registered route that has none.
 */

const TEST_ROOT = fileURLToPath(new URL('../', import.meta.url));
const OPERATION_FILE = /(^|[-.])operations?(\.[\w-]+)?\.ts$/;
/** The routes behind the gate: a key and project access are needed (health probes are not). */
const PROJECT_ROUTE = /^[A-Z]+ \/v2\/projects\/\{project_id\}(\/|$)/;

const isOperation = (v: unknown): v is Operation =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Operation).name === 'string' &&
  typeof (v as Operation).prepare === 'function' &&
  typeof (v as Operation).successStatus === 'number';

async function discover(): Promise<Operation[]> {
  const files = (await readdir(TEST_ROOT, { recursive: true }))
    .filter((f) => OPERATION_FILE.test(basename(f)) && !f.endsWith('.test.ts') && !f.includes('node_modules'))
    .sort();
  const byName = new Map<string, Operation>();
  for (const file of files) {
    if (pathToFileURL(TEST_ROOT + file).href === import.meta.url) continue;
    const mod = (await import(pathToFileURL(TEST_ROOT + file).href)) as Record<string, unknown>;
    for (const value of Object.values(mod).flatMap((v) => (Array.isArray(v) ? v : [v]))) {
      if (isOperation(value) && PROJECT_ROUTE.test(value.name) && !byName.has(value.name)) byName.set(value.name, value);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Every Operation of a project route, sorted by name. */
export const projectOperations: Operation[] = await discover();

/** `METHOD /v2/projects/{project_id}/…`: a recorded route (Fastify's `:param` form) as Operation names spell it. */
export const operationName = (method: string, url: string): string => `${method} ${url.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
