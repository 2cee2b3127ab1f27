import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * How an embedded data directory is created and started, so that the process holding it stays
 * small (docs/operations.md, "Sizing"; measured by bench/memory.ts).
 */

/**
 * The embedded database's page cache (PostgreSQL's shared_buffers), in MiB: TENURE_EMBEDDED_CACHE_MB's
 * default. PGlite's own, 128 MB, is written over in full when it starts, so it was resident from the
 * first second whatever the data; pages beyond the cache are read through the operating system's
 * file cache, which the process does not pay for.
 */
export const EMBEDDED_CACHE_MB = 16;

let compiled: Promise<WebAssembly.Module> | undefined;
/** The WebAssembly global (this project's TypeScript libraries declare its types, not the value). */
const wasmApi = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly;

/**
 * PGlite's WebAssembly, compiled once per process: the instance opened again after migrating
 * (db.ts) starts without compiling its 9 MB again.
 */
function pgliteModule(): Promise<WebAssembly.Module> {
  const wasm = path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), 'pglite.wasm');
  return (compiled ??= readFile(wasm).then((bytes) => wasmApi.compile(bytes)));
}

/** PGlite's start options: its parameters with the page cache set, and its compiled WebAssembly. */
export async function embeddedOptions(cacheMb = EMBEDDED_CACHE_MB): Promise<{ startParams: string[]; pgliteWasmModule: WebAssembly.Module }> {
  return { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${cacheMb}MB`], pgliteWasmModule: await pgliteModule() };
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const INITDB = `const { PGlite } = await import('@electric-sql/pglite');
await (await PGlite.create(process.argv[1])).close();`;

/**
 * Creates the database in `pgDir` (PostgreSQL's initdb) in a child process when it does not exist
 * yet. Done in this process, it left ~120 MB with the process for good (buffers freed to malloc,
 * which keeps them) and took its peak past 800 MB; a child's memory goes back when it exits. The
 * caller holds the data directory's lock, so no other tenure process opens it meanwhile.
 */
export async function createApart(pgDir: string): Promise<void> {
  if (existsSync(path.join(pgDir, 'PG_VERSION'))) return;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', INITDB, pgDir], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`Creating the embedded database in ${pgDir} failed (${signal ?? `exit code ${code}`}): ${stderr.trim()}`));
    });
  });
}
