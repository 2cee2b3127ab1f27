import fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

/**
 * PGlite has no lock between processes: two processes that open one data directory both write
 * and corrupt it (docs/configuration.md, "Embedded storage is one process"). tenure holds `DATA_DIR/tenure.lock` for as long as the database is
 * open. proper-lockfile refreshes the lock's mtime while we hold it, so a lock left behind by a
 * process that was killed becomes stale and is taken over after `staleMs`
 * (TENURE_DATA_DIR_LOCK_STALE_SECONDS, default 10 s).
 */

export const DEFAULT_LOCK_STALE_MS = 10_000;

/**
 * The file system proper-lockfile works through: node's, except that the lock (a directory, made
 * with `mkdir` because that is atomic) is made 0700 like everything else in the data directory
 * (data-dir-modes.ts), not with the process umask's 0755.
 */
const lockFs = Object.assign(Object.create(fs) as typeof fs, {
  mkdir: (dir: string, callback: (err: NodeJS.ErrnoException | null) => void) => fs.mkdir(dir, { mode: 0o700 }, callback),
});

export class DataDirLockedError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `The data directory ${path.resolve(dataDir)} is in use by another tenure process (a running server?). ` +
        'Embedded storage allows one process at a time: stop that process first, ' +
        'or use PostgreSQL (DATABASE_URL) to share one database between processes.',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  release(): Promise<void>;
}

export async function acquireDataDirLock(
  dataDir: string,
  options: { lockWaitMs?: number; staleMs?: number; onLockCompromised?: (err: Error) => void },
): Promise<DataDirLock> {
  const waitMs = options.lockWaitMs ?? 0;
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  try {
    const release = await lockfile.lock(dataDir, {
      lockfilePath: path.join(dataDir, 'tenure.lock'),
      fs: lockFs,
      stale: staleMs,
      update: staleMs / 2,
      retries: waitMs > 0 ? { retries: Math.ceil(waitMs / 500), minTimeout: 500, maxTimeout: 500, factor: 1 } : 0,
      onCompromised:
        options.onLockCompromised ??
        ((err) => {
          throw err;
        }),
    });
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        await release().catch(() => undefined);
      },
    };
  } catch (err) {
    if ((err as { code?: string }).code === 'ELOCKED') throw new DataDirLockedError(dataDir);
    throw err;
  }
}
