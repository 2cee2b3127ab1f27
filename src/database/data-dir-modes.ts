import { chmod, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * The embedded data directory is the owner's alone: files 0600, directories 0700, as PostgreSQL
 * keeps its own (docs/configuration.md, "Embedded storage's files").
 *
 * PGlite does not get there by itself. Its file system layer (Emscripten's NODEFS) chmods every
 * file it creates to the mode it was asked for, after creating it, so the process umask has no say
 * over files: the data directory PGlite lays out on its first start comes out 0666 (world-writable:
 * some 970 files of a new data directory), the files PostgreSQL opens with its own mode 0600 (relations, WAL
 * segments), and what it opens through `fopen` 0644 (Emscripten's own umask, 022:
 * `pg_internal.init`). Its directories are made by `mkdir` with the process umask, 0755 by default.
 * Setting the process umask would therefore only fix directories, and change the mode of every
 * other file the process writes (a CLI's `--rejects` file); instead:
 *
 * - DATA_DIR itself is made 0700 (or tightened to it) before the database opens, so whatever PGlite
 *   lays out inside it is never reachable by anyone else, even for the moment before the walk;
 * - once the database is open, one walk over DATA_DIR takes group and other permissions off every
 *   file and directory (10-30 ms: an `lstat` each, a `chmod` only where one is needed).
 *
 * Symbolic links are neither followed nor changed (a link must not carry the walk, or a chmod,
 * outside the directory). What cannot be changed (a file of another owner) is reported, not fatal:
 * the directory still opens, and the start logs a warning naming the first such path.
 */

/** The permission bits nobody but the owner may have. */
const GROUP_AND_OTHER = 0o077;

export interface TightenReport {
  /** Files and directories looked at, DATA_DIR included. */
  checked: number;
  /** Of those, the ones whose mode was changed. */
  tightened: number;
  /** Paths that could not be read or changed, with the error's code. */
  failed: { path: string; code: string }[];
}

/** The mode `mode` should have: the owner's bits alone. */
function ownerOnly(mode: number): number {
  return mode & 0o7777 & ~GROUP_AND_OTHER;
}

async function tightenOne(file: string, report: TightenReport): Promise<'dir' | 'other' | null> {
  let stat;
  try {
    stat = await lstat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
    // Gone between the directory's listing and now (a temporary file): nothing to protect.
    if (code !== 'ENOENT') report.failed.push({ path: file, code });
    return null;
  }
  if (!stat.isFile() && !stat.isDirectory()) return 'other';
  report.checked++;
  const wanted = ownerOnly(stat.mode);
  if ((stat.mode & 0o7777) !== wanted) {
    try {
      await chmod(file, wanted);
      report.tightened++;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
      if (code !== 'ENOENT') report.failed.push({ path: file, code });
    }
  }
  return stat.isDirectory() ? 'dir' : 'other';
}

/**
 * Takes group and other permissions off `dataDir` itself (not off what is in it): before the
 * database opens, so what PGlite lays out inside is enclosed from the first moment.
 */
export async function encloseDataDir(dataDir: string, logger: Pick<Logger, 'warn'>): Promise<void> {
  const report: TightenReport = { checked: 0, tightened: 0, failed: [] };
  await tightenOne(dataDir, report);
  warnOfFailures(report, dataDir, logger);
}

/**
 * Takes group and other permissions off `dataDir` and everything under it (symbolic links are
 * skipped); what it could not change is logged as a warning.
 */
export async function tightenDataDir(dataDir: string, logger: Pick<Logger, 'warn'>): Promise<TightenReport> {
  const report: TightenReport = { checked: 0, tightened: 0, failed: [] };
  // A directory's entries at once, so libuv's threads overlap the calls: ~1,000 files took 10-30 ms
  // (one after another, 65).
  const visit = async (file: string): Promise<void> => {
    if ((await tightenOne(file, report)) !== 'dir') return;
    let names: string[];
    try {
      names = await readdir(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
      if (code !== 'ENOENT') report.failed.push({ path: file, code });
      return;
    }
    await Promise.all(names.map((name) => visit(path.join(file, name))));
  };
  await visit(dataDir);
  warnOfFailures(report, dataDir, logger);
  return report;
}

function warnOfFailures(report: TightenReport, dataDir: string, logger: Pick<Logger, 'warn'>): void {
  if (report.failed.length === 0) return;
  const [first] = report.failed;
  logger.warn(
    { data_dir: path.resolve(dataDir), failed: report.failed.length, path: first!.path, code: first!.code },
    'could not take group and other permissions off some files of the data directory: make this user their owner, or chmod them (files 0600, directories 0700)',
  );
}
